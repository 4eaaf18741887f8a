"""Making the archive's writes durable: fsync of files and directories, marker files.

A rename is durable once its directory is fsynced; a store's deferred blobs are fsynced many
at a time (agtaild.store.archive.blobs.ZStore.flush). The pins and the open-update marks use
:func:`create_marker`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: Deferred blobs fsynced at once by a flush: this many at a time. On this machine's ext4,
#: 1,477 small blobs take 4–6 s fsynced one after the other and 0.1–0.4 s 8–32 at a time.
FSYNC_THREADS = 16


def fsync_all(pool: ThreadPoolExecutor, fsync: Callable[[str], None], paths: list[str]) -> None:
    """``fsync`` each of ``paths``, FSYNC_THREADS at a time: each thread takes every n-th path
    in one task (a task per path cost more in thread hand-offs — ≈ 14 futex calls each — than
    many of the fsyncs themselves)."""
    n = min(FSYNC_THREADS, len(paths))
    for _ in pool.map(_fsync_each, [fsync] * n, [paths[i::n] for i in range(n)]):
        pass


def _fsync_each(fsync: Callable[[str], None], paths: list[str]) -> None:
    for path in paths:
        fsync(path)


def unlink_if_there(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_path(path: str | Path) -> None:
    """fsync a file or a directory by name."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_marker(path: str | Path, *, durable: bool, dir_fd: int | None = None) -> None:
    """Create an empty file whose existence says something (an open update, a sealed set);
    ``durable``: on disk, name included, when this returns. With ``dir_fd``, ``path`` is a
    name in that directory (a set of pins, opened without following symlinks); a symlink
    in its place is not followed."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    if durable and dir_fd is not None:
        fsync_dir_fd(dir_fd)
    elif durable:
        fsync_dir(os.path.dirname(os.fspath(path)) or ".")


def fsync_dir(folder: str | Path) -> None:
    """Make a rename in ``folder`` durable. Some systems cannot open or sync a directory
    (Windows; a few file systems say EINVAL): there a rename is as durable as it gets."""
    try:
        fsync_path(folder)
    except OSError as exc:
        if exc.errno not in _NO_DIR_SYNC:
            raise


def fsync_dir_fd(fd: int) -> None:
    """:func:`fsync_dir` of a directory already open as ``fd``."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _NO_DIR_SYNC:
            raise


#: Open flag: a symlink in the last place is an error (ELOOP), not followed.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NO_DIR_SYNC = {errno.EINVAL, errno.ENOTSUP, errno.EACCES, errno.EPERM, errno.EISDIR, errno.EBADF}
