"""A collection directory (``<agent>/<relative path>`` below it, ``manifest.json`` on top) as
a transfer source or destination.

The same layout serves as the local import store (``<data>/imported/<collection>``), a
directory remote (``REMOTE/<collection>``, local or mounted), an export directory, and the
server side of the HTTP import endpoints. Writes go to ``.NAME.agtail-partial`` beside the
target and are renamed into place only after size and sha256 match; a partial left by an
interruption is where the next attempt resumes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from agtaild.errors import Refused
from agtaild.sync.manifest import (
    CHUNK,
    MANIFEST_NAME,
    FileEntry,
    HashCache,
    Manifest,
    hash_stream,
    load_manifest,
    read_range,
    write_manifest,
)
from agtaild.sync.safety import (
    CONFLICT_MARK,
    PARTIAL_SUFFIX,
    RESERVED_MARK,
    check_entries,
    is_case_insensitive,
    open_dir,
    open_regular,
)
from agtaild.sync.transfer import DestState, Present, TransferError, WriteOp, WriteResult


def partial_name(name: str) -> str:
    return f".{name}{PARTIAL_SUFFIX}"


def conflict_name(name: str, taken: set[str]) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    candidate = f"{name}{CONFLICT_MARK}{stamp}"
    n = 1
    while candidate in taken:
        n += 1
        candidate = f"{name}{CONFLICT_MARK}{stamp}-{n}"
    return candidate


class TreeFile:
    """A file found by :func:`scan_tree`: its path in the collection and its lstat."""

    __slots__ = ("kind", "path", "st")

    def __init__(self, path: str, st: os.stat_result, kind: str) -> None:
        self.path = path
        self.st = st
        self.kind = kind  # file | partial | conflict


def scan_tree(root: Path, known_agents: set[str] | None) -> tuple[list[TreeFile], list[str]]:
    """Every file below the agent directories of ``root``, and the problems found on the way
    (symlinks, devices, sockets: a remote tree with any of them is refused whole)."""
    files: list[TreeFile] = []
    problems: list[str] = []
    if not root.is_dir():
        return files, problems
    for top in sorted(os.listdir(root)):
        top_path = root / top
        st = os.lstat(top_path)
        if stat.S_ISLNK(st.st_mode):
            problems.append(f"{top!r} is a symlink")
            continue
        if not stat.S_ISDIR(st.st_mode) or top.startswith(".") or top == MANIFEST_NAME:
            continue
        if known_agents is not None and top not in known_agents:
            continue
        for dirpath, dirnames, filenames in os.walk(top_path, followlinks=False):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            for name in sorted(dirnames):
                if os.path.islink(os.path.join(dirpath, name)):
                    problems.append(f"{rel_dir}/{name!r} is a symlink")
            dirnames[:] = sorted(
                d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)) and RESERVED_MARK not in d
            )
            for name in sorted(filenames):
                st = os.lstat(os.path.join(dirpath, name))
                rel = f"{rel_dir}/{name}"
                if stat.S_ISLNK(st.st_mode):
                    problems.append(f"{rel!r} is a symlink")
                elif not stat.S_ISREG(st.st_mode):
                    problems.append(f"{rel!r} is not a regular file (device, pipe or socket)")
                elif name.startswith(".") and name.endswith(PARTIAL_SUFFIX):
                    target = name[1 : -len(PARTIAL_SUFFIX)]
                    files.append(TreeFile(f"{rel_dir}/{target}", st, "partial"))
                elif CONFLICT_MARK in name:
                    files.append(TreeFile(rel, st, "conflict"))
                elif RESERVED_MARK in name:
                    continue
                else:
                    files.append(TreeFile(rel, st, "file"))
    return files, problems


def _same_mtime(a: float, b: float) -> bool:
    return abs(a - b) < 0.001


class DirectorySource:
    """A collection directory read as the source of a pull (or of `sync verify`).

    Its manifest.json is the truth for every file it lists: the size and sha256 planned,
    read and verified are the manifest's, whatever the file's mtime now, so a file changed or
    enlarged after the manifest was written fails its check (that file is not imported; the
    others are) and no more than the manifest's size is ever read. A manifest that names unsafe
    paths, or gives a different size for a file with the very mtime it records, is lying: the
    whole pull is refused. Files the manifest does not list (or all files, in a directory
    without one) are taken as they are, hashed while planning.
    """

    def __init__(self, root: Path, cache: HashCache, known_agents: set[str] | None = None) -> None:
        self.root = root
        self.where = str(root)
        self.cache = cache
        self.known_agents = known_agents
        self._sizes: dict[str, int] = {}

    def manifest(self) -> Manifest:
        if not self.root.is_dir():
            raise Refused(f"{self.root} does not exist; check the remote path and the collection name")
        record = load_manifest(self.root)
        tree, problems = scan_tree(self.root, self.known_agents)
        if problems:
            raise Refused(
                f"refused everything from {self.root}, nothing was written: " + "; ".join(problems[:10]),
                data=problems,
            )
        rec = record.by_path() if record is not None else {}
        if record is not None:
            check_entries(
                record.files,
                max_file_size=1 << 62,
                case_insensitive=False,
                known_agents=None,
                where=f"{self.root}/{MANIFEST_NAME}",
            )
        files: list[FileEntry] = []
        for item in tree:
            if item.kind != "file":
                continue
            agent = item.path.split("/", 1)[0]
            mtime = item.st.st_mtime
            old = rec.get(item.path)
            if old is not None and _same_mtime(old.mtime, mtime) and old.size != item.st.st_size:
                raise Refused(
                    f"{self.root}/{MANIFEST_NAME} says {item.path!r} is {old.size} bytes but it is "
                    f"{item.st.st_size}: refused everything from {self.root}, nothing was written"
                )
            if old is not None:
                size, digest, mtime = old.size, old.sha256, old.mtime
            else:
                size, digest = item.st.st_size, self.cache.file_sha256(str(self.root / item.path), item.st)
            self._sizes[item.path] = size
            files.append(
                FileEntry(
                    path=item.path,
                    size=size,
                    sha256=digest,
                    agent=agent,
                    mtime=mtime,
                    session=old.session if old else None,
                    sessions=list(old.sessions) if old else [],
                    origin=old.origin if old else (record.origin if record else None),
                )
            )
        origin = record.origin if record else None
        return Manifest(files=files, collection=self.root.name, origin=origin,
                        origin_name=record.origin_name if record else None)

    def _open(self, path: str) -> int:
        parts = path.split("/")
        dfd = open_dir(self.root, parts[:-1], create=False)
        try:
            return open_regular(dfd, parts[-1])
        finally:
            os.close(dfd)

    def prefix_sha256(self, path: str, length: int) -> str:
        with os.fdopen(self._open(path), "rb") as fh:
            digest, done = hash_stream(fh, length)
        return digest if done == length else ""

    def read(self, path: str, offset: int, length: int) -> Iterator[bytes]:
        with os.fdopen(self._open(path), "rb") as fh:
            try:
                yield from read_range(fh, offset, length)
            except EOFError:
                raise TransferError(f"{path} in {self.root} shrank while being read; run the sync again") from None

    def close(self) -> None:
        pass


class DirectoryDestination:
    """A collection directory written by a push (directory remote), a pull (import store) or
    an export. Nothing is ever deleted from it; a conflict keeps both copies."""

    def __init__(self, root: Path, cache: HashCache, known_agents: set[str] | None = None) -> None:
        self.root = root
        self.where = str(root)
        self.cache = cache
        self.known_agents = known_agents

    def state(self) -> DestState:
        record = load_manifest(self.root) if self.root.is_dir() else None
        rec = record.by_path() if record is not None else {}
        tree, _problems = scan_tree(self.root, self.known_agents)
        state = DestState(record=record, case_insensitive=is_case_insensitive(self.root))
        for item in tree:
            full = str(self.root / item.path)
            if item.kind == "conflict":
                state.conflicts.append(item.path)
                continue
            if item.kind == "partial":
                parent, _, name = full.rpartition("/")
                pfull = f"{parent}/{partial_name(name)}"
                state.partials[item.path] = Present(item.st.st_size, self.cache.file_sha256(pfull, item.st))
                continue
            old = rec.get(item.path)
            if old is not None and old.size == item.st.st_size and _same_mtime(old.mtime, item.st.st_mtime):
                digest = old.sha256
            else:
                digest = self.cache.file_sha256(full, item.st)
            state.files[item.path] = Present(item.st.st_size, digest)
        return state

    def check(self, manifest: Manifest) -> None:
        """The directory checks happen in transfer() and while writing (open_dir)."""

    def write(self, op: WriteOp, chunks: Iterable[bytes]) -> WriteResult:
        entry = op.entry
        parts = entry.path.split("/")
        name = parts[-1]
        part = partial_name(name)
        dfd = open_dir(self.root, parts[:-1], create=True)
        try:
            h = hashlib.sha256()
            if op.mode == "resume":
                pfd = os.open(part, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), dir_fd=dfd)
                with os.fdopen(os.dup(pfd), "rb") as fh:
                    hasher_digest, done = _hash_into(h, fh, op.offset)
                if done != op.offset or hasher_digest != op.base_sha256:
                    os.close(pfd)
                    os.unlink(part, dir_fd=dfd)
                    raise TransferError(f"{entry.path}: the partial file changed; run the sync again")
                os.ftruncate(pfd, op.offset)
                os.lseek(pfd, op.offset, os.SEEK_SET)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part, dir_fd=dfd)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                pfd = os.open(part, flags, 0o600, dir_fd=dfd)
                if op.mode == "append":
                    base = open_regular(dfd, name)
                    try:
                        copied = _copy_hashing(base, pfd, op.offset, h)
                    finally:
                        os.close(base)
                    if copied != op.offset or h.hexdigest() != op.base_sha256:
                        os.close(pfd)
                        os.unlink(part, dir_fd=dfd)
                        raise TransferError(f"{entry.path} changed here during the sync; run it again")
            try:
                written = self._fill(pfd, op, chunks, h)
            except _Discard:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part, dir_fd=dfd)
                raise
            kept_as = None
            if op.keep_existing:
                with contextlib.suppress(FileNotFoundError):
                    os.lstat(name, dir_fd=dfd)
                    kept_as = conflict_name(name, set(os.listdir(dfd)))
                    os.rename(name, kept_as, src_dir_fd=dfd, dst_dir_fd=dfd)
            os.rename(part, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            mtime_ns = int(entry.mtime * 1e9)
            if mtime_ns > 0:
                os.utime(name, ns=(mtime_ns, mtime_ns), dir_fd=dfd, follow_symlinks=False)
            if kept_as is not None:
                kept_as = "/".join([*parts[:-1], kept_as])
            return WriteResult(written=written, kept_as=kept_as)
        finally:
            os.close(dfd)

    def _fill(self, pfd: int, op: WriteOp, chunks: Iterable[bytes], h: hashlib._Hash) -> int:
        """Append the chunks to the partial; keep it (synced) if the source stops early."""
        entry = op.entry
        total = op.offset
        try:
            for chunk in chunks:
                if total + len(chunk) > entry.size:
                    raise _Discard(
                        f"{entry.path}: the source sent more than the {entry.size} bytes its manifest "
                        "declares; nothing was kept"
                    )
                write_all(pfd, chunk)
                h.update(chunk)
                total += len(chunk)
        finally:
            with contextlib.suppress(OSError):
                os.fsync(pfd)
            os.close(pfd)
        if total != entry.size:
            raise TransferError(
                f"{entry.path}: interrupted after {total} of {entry.size} bytes; run the same "
                "command again to resume"
            )
        if h.hexdigest() != entry.sha256:
            raise _Discard(
                f"{entry.path}: the received bytes do not match the source's sha256 (it changed while "
                "being sent, or its manifest is wrong); nothing was kept, run the sync again"
            )
        return total - op.offset

    def save_record(self, record: Manifest) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_manifest(self.root, record)

    def close(self) -> None:
        pass


class _Discard(TransferError):
    """The partial is worthless (wrong hash, too many bytes): it is removed, not resumed."""


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _hash_into(h: hashlib._Hash, fh: object, length: int) -> tuple[str, int]:
    done = 0
    read = fh.read  # type: ignore[attr-defined]
    while done < length:
        block = read(min(CHUNK, length - done))
        if not block:
            break
        h.update(block)
        done += len(block)
    return h.hexdigest(), done


def _copy_hashing(src_fd: int, dst_fd: int, length: int, h: hashlib._Hash) -> int:
    done = 0
    while done < length:
        block = os.read(src_fd, min(CHUNK, length - done))
        if not block:
            break
        h.update(block)
        write_all(dst_fd, block)
        done += len(block)
    return done
