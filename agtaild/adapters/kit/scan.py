"""Listing directories during discovery so that one bad entry never hides the others.

Discovery walks agents' folders, and a folder can hold anything: a symlink loop
(``a.jsonl -> b.jsonl -> a.jsonl``), a directory its owner made unreadable, a disk that
answers EIO. ``os.DirEntry.is_file()`` raises on all of these, and one exception used to end
the discovery of the whole agent — which the update then read as "every session was deleted".

These helpers skip such an entry and *record* it instead: while an update (or ``agtail
doctor``) collects with :func:`collecting`, every entry that could not be looked at is kept
as a :class:`Problem`. The update reports them in its ``errors`` and never removes a stored
session that lies under a problem path (see agtaild.index.update). Entries that vanished
while being listed (ENOENT, ENOTDIR) are not problems: they are simply gone.

Two more kinds of problem are files that are there but could not be *read*:
:func:`unreadable` records a session store (an SQLite database that is locked, damaged, or a
FIFO in its place): the sessions indexed from it are kept, and the archive's copy of it serves
an index that holds nothing of it. :func:`unlisted` records a file that says what a root holds
(a project registry): every session indexed from that root is kept, wherever it lies. Outside
:func:`collecting` (an export walking the roots) both are logged as warnings.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

#: Errors that mean "not there" rather than "could not look".
GONE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})


log = logging.getLogger(__name__)


class Problem(NamedTuple):
    """An entry discovery could not look at: its path and why."""

    path: str
    error: str
    #: "entry": the path, and all below it, could not be looked at; "store": a session store
    #: that is there but could not be read (:func:`unreadable`); "listing": a file naming what
    #: its root holds could not be read (:func:`unlisted`).
    kind: str = "entry"


class Seen(NamedTuple):
    """What a walk saw of the files it listed (see :func:`noting`)."""

    #: path -> the ``stat`` result the walk took (:func:`size`)
    stats: dict[str, os.stat_result]
    #: the paths the walk found to be files (:func:`is_file`, :func:`size`): there just now
    files: set[str]


_problems: ContextVar[list[Problem] | None] = ContextVar("agtail_scan_problems", default=None)
_seen: ContextVar[Seen | None] = ContextVar("agtail_scan_seen", default=None)


@contextmanager
def collecting() -> Iterator[list[Problem]]:
    """Collect the problems met by the discovery run inside the block."""
    found: list[Problem] = []
    token = _problems.set(found)
    try:
        yield found
    finally:
        _problems.reset(token)


@contextmanager
def noting(into: Seen) -> Iterator[Seen]:
    """Keep what the walk inside the block saw of its files: the update takes its fingerprints
    from the ``stat`` results instead of a second ``stat`` of every file, and the archive
    knows these files are there without looking again."""
    token = _seen.set(into)
    try:
        yield into
    finally:
        _seen.reset(token)


def note(path: str, st: os.stat_result) -> None:
    """Keep the ``stat`` a walk took of a regular file it found by path rather than by listing
    (a side file: agtaild.adapters.kit.sidecars), as :func:`size` keeps an entry's: the file is
    then known to be there (the archive's write-back check)."""
    noted = _seen.get()
    if noted is not None:
        noted.stats[path] = st
        noted.files.add(path)


def report(path: str, exc: OSError) -> None:
    """Record that ``path`` could not be looked at (ignored when it is simply gone)."""
    if exc.errno in GONE_ERRNOS:
        return
    found = _problems.get()
    if found is not None:
        reason = exc.strerror or type(exc).__name__
        found.append(Problem(path=path, error=f"skipped: {reason} (errno {exc.errno})"))


def _record(problem: Problem) -> None:
    found = _problems.get()
    if found is None:
        log.warning("%s: %s", problem.path, problem.error)
    else:
        found.append(problem)


def unsure(path: str, error: str) -> None:
    """Record that what is at or below ``path`` cannot be known now (``error`` says why)."""
    _record(Problem(path=path, error=error))


def unreadable(path: str, error: str) -> None:
    """Record that the session store at ``path`` is there but could not be read (``error``
    says why)."""
    _record(Problem(path=path, error=error, kind="store"))


def unlisted(path: str, error: str) -> None:
    """Record that ``path``, which says what its root holds, could not be read."""
    _record(Problem(path=path, error=error, kind="listing"))


def entries(path: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The entries of a directory sorted by name; [] (and a problem) when it can't be listed."""
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        report(os.fspath(path), exc)
        return []


def is_file(entry: os.DirEntry[str]) -> bool:
    """``entry.is_file()`` (following links); False and a problem for a loop or an I/O error."""
    try:
        found = entry.is_file()
    except OSError as exc:
        report(entry.path, exc)
        return False
    if found and (noted := _seen.get()) is not None:
        noted.files.add(entry.path)
    return found


def is_file_quietly(entry: os.DirEntry[str]) -> bool:
    """``entry.is_file()``, False for anything that can't be looked at, as ``os.path.isfile``
    says: for an optional sidecar, whose absence is no discovery problem."""
    try:
        found = entry.is_file()
    except OSError:
        return False
    if found and (noted := _seen.get()) is not None:
        noted.files.add(entry.path)
    return found


def is_dir(entry: os.DirEntry[str], *, follow_symlinks: bool = True) -> bool:
    """``entry.is_dir()``; False and a problem for a loop or an I/O error."""
    try:
        return entry.is_dir(follow_symlinks=follow_symlinks)
    except OSError as exc:
        report(entry.path, exc)
        return False


def size(entry: os.DirEntry[str]) -> int:
    """The entry's size following links, or -1 (and a problem) when it can't be stat'ed."""
    try:
        st = entry.stat()
    except OSError as exc:
        report(entry.path, exc)
        return -1
    noted = _seen.get()
    if noted is not None:
        noted.stats[entry.path] = st
        noted.files.add(entry.path)
    return st.st_size


def dir_key(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    """(device, inode) of the directory an entry leads to (after links), to walk each once."""
    try:
        st = entry.stat()
    except OSError as exc:
        report(entry.path, exc)
        return None
    return st.st_dev, st.st_ino
