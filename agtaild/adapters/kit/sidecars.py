"""Side files: files outside a unit's own that its reading depends on.

Some agents keep what describes a session beside the session root, in a file shared by many
sessions: Kimi CLI's ``kimi.json`` (the work dirs whose MD5 names each session bucket: the
cwd), Droid's ``state/task-invocations.json`` (which session a subagent's child session
belongs to), Cline's ``state/taskHistory.json`` (each task's title and cwd). A copy of the
sessions alone (the archive, an export, a sync) would lose what they say.

So an adapter names the side files a unit depends on in ``Unit.sidecars``: the path it read
each from, mapped to the file's *place* in a copy (relative to the copy's root for the agent,
``/``-separated). Every copy (agtaild.sync.native, which the archive, ``agtail export`` and
``sync push`` all use) carries them there. What they say of the unit is digested into
``Unit.sidecar_key`` (:func:`key`), which the index fingerprints with the unit's own files: a
change to a side file re-reads the sessions whose entries it changed (Cline rewrites its task
index at every save of any task: re-reading every task then would cost the whole history).

The place is ``.agtail_sidecars/<digest>/<name>``: ``<digest>`` is a short digest of the side
file's path on the machine that has it, so the side files of two roots (two editors' Cline
storage, two Kimi share dirs) merged into one copy never overwrite each other. In a copy root
the adapter finds them all with :func:`copies` and reads each (a task's entry is in one of
them); at its native place it reads the one file.

A side file is read only when it is a regular file (never through a symbolic link) of at most
:data:`MAX_BYTES`; anything else, and one that does not decode, is a discovery problem
(agtaild.adapters.kit.scan: an error in the update's report, never fatal, never a deletion),
and the sessions are read without it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Any

import msgspec

from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular

#: The folder of a copy's root (``<archive>/<agent>``, ``imported/<collection>/<agent>``,
#: an export's ``<agent>``) that holds the side files of its sessions. Adapters whose units
#: have side files skip it in their discovery.
SIDE_DIR = ".agtail_sidecars"
#: A side file larger than this is not read (an error in the report).
MAX_BYTES = 16 << 20

_decoder = msgspec.json.Decoder()


def place(native: str, name: str) -> str:
    """Where the side file at ``native`` (this machine's path) goes in a copy: below
    :data:`SIDE_DIR`, in a folder of its own path's digest, under ``name``."""
    digest = hashlib.sha256(os.fsencode(native)).hexdigest()[:16]
    return f"{SIDE_DIR}/{digest}/{name}"


def _usable(path: str) -> os.stat_result | None:
    """The ``lstat`` of ``path`` when it is a side file that may be read. Gone: None, quietly;
    a symbolic link, not a regular file, too big or not looked at: None, and a problem in the
    report."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        if exc.errno not in scan.GONE_ERRNOS:
            scan.unsure(
                path, f"side file: {exc.strerror or exc} (errno {exc.errno}); sessions read without it"
            )
        return None
    if stat.S_ISLNK(st.st_mode):
        scan.unsure(path, "side file is a symbolic link, not followed; sessions read without it")
        return None
    if not stat.S_ISREG(st.st_mode):
        scan.unsure(path, "side file is not a regular file; sessions read without it")
        return None
    if st.st_size > MAX_BYTES:
        scan.unsure(
            path, f"side file is {st.st_size} bytes, over the {MAX_BYTES} read; sessions read without it"
        )
        return None
    scan.note(path, st)  # there just now: the archive need not look again before its write-back
    return st


def copies(root: str | os.PathLike[str], name: str) -> list[str]:
    """The usable copies of side file ``name`` in a copy root (none in a native root), the
    most recently changed first: where two roots' copies both speak of a session (a folder
    that moved, leaving its old copy behind), the newer one is read first."""
    if not is_copy(root):
        return []
    side = os.path.join(root, SIDE_DIR)
    found: list[tuple[int, str]] = []
    for entry in scan.entries(side):
        if not scan.is_dir(entry, follow_symlinks=False):
            continue
        path = os.path.join(entry.path, *name.split("/"))
        st = _usable(path)
        if st is not None:
            found.append((-st.st_mtime_ns, path))
    return [path for _newest, path in sorted(found)]


def locate(root: str | os.PathLike[str], native: str | os.PathLike[str] | None, name: str) -> dict[str, str]:
    """The side files named ``name`` that units under ``root`` depend on, as ``Unit.sidecars``
    entries (path → place): in a copy root (one with a :data:`SIDE_DIR`) its copies, else the
    one at ``native`` when it is there. Problems are reported (see the module docstring)."""
    if is_copy(root):
        return {path: os.path.relpath(path, root).replace(os.sep, "/") for path in copies(root, name)}
    if native is not None and _usable(path := os.fspath(native)) is not None:
        return {path: place(path, name)}
    return {}


def is_copy(root: str | os.PathLike[str]) -> bool:
    """Does ``root`` hold copied side files (a copy's root: the archive, an import, an export)?"""
    try:
        return stat.S_ISDIR(os.lstat(os.path.join(root, SIDE_DIR)).st_mode)
    except OSError:
        return False


def load_json(path: str, *, report: bool = True) -> Any:
    """The JSON document of a side file, or None when it cannot be read or decoded (reported
    as a problem with ``report``: discovery, which reads each side file once per root)."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or st.st_size > MAX_BYTES:
            return None  # refused (and reported) by locate
        return _decoder.decode(read_regular(path, MAX_BYTES + 1))
    except OSError as exc:
        if report and exc.errno not in scan.GONE_ERRNOS:
            scan.unsure(path, f"side file: {exc.strerror or exc}; sessions read without it")
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        if report:
            scan.unsure(path, f"side file is not valid JSON ({exc}); sessions read without it")
    return None


def key(said: Any) -> str:
    """``Unit.sidecar_key`` for what the side files say of a unit (any msgpack value): a short
    digest, "" when they say nothing of it."""
    if said is None:
        return ""
    return hashlib.sha256(msgspec.msgpack.encode(said)).hexdigest()[:16]


def of(sidecars: dict[str, str], name: str) -> list[str]:
    """The paths in a unit's ``sidecars`` whose place ends in ``name``."""
    tail = "/" + name
    return [path for path, where in sidecars.items() if where.endswith(tail) or where == name]
