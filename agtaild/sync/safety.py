"""What a remote may and may not make us write. Everything from a remote is untrusted.

A remote (a mounted directory, an ssh host, another agtaild) describes files by path. Before
anything is written, the whole set is checked, and a single bad entry refuses the whole set
(nothing written): no absolute paths, no ``..``, no names agtail reserves for its own partial
and conflict files, no two names that differ only by case where the destination cannot tell
them apart, no file over the size limit, no size that is not a plain count. When writing,
every directory is opened relative to its parent without following symlinks, so a symlink
planted in the destination cannot lead a write outside the collection either. Native agent
directories are never a destination.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from agtaild.errors import Refused, UsageError
from agtaild.sync.manifest import FileEntry, Manifest

#: Default largest file a transfer accepts (override with --max-file-size / max_file_size).
DEFAULT_MAX_FILE_SIZE = 1 << 30
MAX_PATH_CHARS = 1024
RESERVED_MARK = ".agtail-"
PARTIAL_SUFFIX = ".agtail-partial"
CONFLICT_MARK = ".agtail-conflict-"
_COLLECTION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
#: What no collection path may hold (one regex search: a per-character loop cost ≈ 30 µs a
#: path, paid for every file the archive mirrors).
_BACKSLASH_OR_CONTROL = re.compile(r"[\\\x00-\x1f\x7f]")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def check_collection_name(name: str) -> str:
    """A collection name becomes one directory name: letters, digits, '.', '_', '-'."""
    if not isinstance(name, str) or not _COLLECTION_RE.match(name) or name in {".", ".."}:
        raise UsageError(
            f"collection name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (e.g. the other machine's host name)"
        )
    return name


def path_problem(path: object, known_agents: Iterable[str] | None = None) -> str | None:
    """Why ``path`` may not name a file in a collection, or None when it may."""
    if not isinstance(path, str) or not path:
        return "empty or not a string"
    if len(path) > MAX_PATH_CHARS:
        return f"longer than {MAX_PATH_CHARS} characters"
    if _BACKSLASH_OR_CONTROL.search(path):
        return "contains a backslash or a control character"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "is an absolute path"
    parts = path.split("/")
    for part in parts:
        if part in {"", ".", ".."}:
            return "has an empty, '.' or '..' component"
        if RESERVED_MARK in part:
            return f"uses the name {RESERVED_MARK}… that agtail reserves for partial and conflict files"
        if len(part.encode("utf-8", "surrogatepass")) > 255:
            return "has a component longer than 255 bytes"
    if len(parts) < 2:
        return "is not below an agent directory (<agent>/…)"
    if known_agents is not None and parts[0] not in set(known_agents):
        return f"is below {parts[0]!r}, which is not an agent this agtail knows"
    return None


def check_entries(
    entries: Iterable[FileEntry],
    *,
    max_file_size: int,
    case_insensitive: bool,
    known_agents: Iterable[str] | None = None,
    existing: Iterable[str] = (),
    where: str = "the remote",
) -> None:
    """Refuse the whole set when any entry is unsafe; the message lists every problem."""
    agents = set(known_agents) if known_agents is not None else None
    problems: list[str] = []
    seen: dict[str, str] = {}
    folded_existing = {p.casefold(): p for p in existing}
    for entry in entries:
        why = path_problem(entry.path, agents)
        if why is None and (not isinstance(entry.size, int) or entry.size < 0):
            why = f"declares an impossible size {entry.size!r}"
        if why is None and entry.size > max_file_size:
            why = f"is {entry.size} bytes, over the limit of {max_file_size} (raise it with --max-file-size)"
        if why is None and not _SHA_RE.match(entry.sha256 or ""):
            why = "has no valid sha256"
        if why is None and entry.agent != entry.path.split("/", 1)[0]:
            why = f"says agent {entry.agent!r} but lies below {entry.path.split('/', 1)[0]!r}"
        if why is None:
            key = entry.path.casefold() if case_insensitive else entry.path
            other = seen.get(key)
            if other is not None:
                why = "appears twice" if other == entry.path else f"differs from {other!r} only by case"
            else:
                seen[key] = entry.path
                clash = folded_existing.get(entry.path.casefold()) if case_insensitive else None
                if clash is not None and clash != entry.path:
                    why = f"differs only by case from {clash!r}, already there"
        if why is not None:
            problems.append(f"{entry.path!r} {why}")
    if problems:
        shown = "; ".join(problems[:10]) + (f"; and {len(problems) - 10} more" if len(problems) > 10 else "")
        raise Refused(f"refused everything from {where}, nothing was written: {shown}", data=problems)


def check_manifest(manifest: Manifest, **kwargs: object) -> None:
    check_entries(manifest.files, **kwargs)  # type: ignore[arg-type]


def is_case_insensitive(directory: Path) -> bool:
    """Whether the file system holding ``directory`` folds case (macOS and Windows defaults).

    Probes the nearest existing ancestor, so asking creates nothing (a dry run writes nothing).
    """
    while not directory.is_dir() and directory.parent != directory:
        directory = directory.parent
    fd, probe = tempfile.mkstemp(prefix=".agtail-case-probe-", dir=directory)
    os.close(fd)
    try:
        other = os.path.join(os.path.dirname(probe), os.path.basename(probe).upper())
        return other != probe and os.path.exists(other)
    finally:
        os.unlink(probe)


def check_not_native(destination: Path, native_roots: Iterable[str]) -> None:
    """Sync and archive never write into an agent's own directories (nor above them)."""
    dest = destination.resolve()
    for root in native_roots:
        native = Path(root).resolve()
        if dest == native or native in dest.parents or dest in native.parents:
            raise Refused(
                f"{destination} overlaps the agent directory {root}: agtail never writes into an "
                "agent's own files; choose another destination"
            )


def open_dir(root: Path, parts: Iterable[str], *, create: bool) -> int:
    """A descriptor of ``root/parts…``, walking without following any symlink below ``root``.

    Raises Refused when a component is a symlink or not a directory, FileNotFoundError when it
    is missing and ``create`` is False.
    """
    if create:
        root.mkdir(parents=True, exist_ok=True)
    if root.is_symlink():
        raise Refused(f"{root} is a symlink; agtail only writes into real directories")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise Refused(
                        f"{part!r} below {root} is a symlink or not a directory; remove it and retry"
                    ) from exc
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(dir_fd: int, name: str) -> int:
    """Open an existing regular file for reading, refusing symlinks and special files."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise Refused(f"{name!r} is a symlink; agtail copies only regular files") from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(f"{name!r} is not a regular file")
    return fd
