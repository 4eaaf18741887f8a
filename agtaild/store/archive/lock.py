"""One archive writer at a time, across processes.

The archive's store is written by the index's mirror (on the daemon's or the CLI's update) and
by the finisher that archives a first index's pinned files after it
(agtaild.store.archive.finish). Two writers of one blob would interleave their frames, so each
holds an exclusive ``flock`` on ``.zstore/writer.lock`` from its first write until its batch is
durable (agtaild.store.archive.archiver.Archiver takes and drops it). The kernel drops the lock of a
process that dies, so a killed writer never blocks the next one. The lock file is opened in
its folder's descriptor without following a symlink (the folder's or its own): a symlink
planted in the archive leads no write elsewhere.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from agtaild.errors import AgtailError
from agtaild.sync.safety import open_dir

LOCK_NAME = "writer.lock"


class WriterLock:
    """The exclusive archive-writer lock of one store directory (not reentrant: one holder per
    process, the Archiver, which serialises its own threads). ``name``: another lock file of
    that folder (the finisher's: agtaild.store.archive.finish)."""

    def __init__(self, store_root: Path | str, name: str = LOCK_NAME) -> None:
        self.path = Path(store_root) / name
        self.name = name
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, *, wait: bool = True) -> bool:
        """Take the lock (waiting for another process's batch to end, unless ``wait`` is off:
        then False when it is taken). A no-op when already held."""
        if self._fd is not None:
            return True
        try:
            folder = open_dir(self.path.parent, (), create=True)
        except AgtailError as exc:  # Refused: the folder is a symlink
            raise OSError(errno.ELOOP, exc.message) from exc
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(self.name, flags, 0o600, dir_fd=folder)
        finally:
            os.close(folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
