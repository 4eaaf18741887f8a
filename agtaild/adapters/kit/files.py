"""Opening an agent's file only when it is a regular file: the one way adapters open files.

An agent's folder can hold anything under an agent's file name: a FIFO named ``sessions.db``
(``open()`` waits for a writer that never comes, and the whole update with it), a character
device (opening some has effects: a tape rewinds, a watchdog arms), a socket. So the type is
looked at first (``stat``, following links as opening would) and nothing but a regular file
is opened; the open itself is non-blocking and the descriptor checked again (``fstat``: the
same regular file), so a file swapped for a FIFO between the two cannot block either.

A refusal is :class:`NotRegularFile`, an ``OSError`` (``EINVAL``) whose message says what was
found: callers that already handle an unreadable file handle it, and discovery reports it
(agtaild.adapters.kit.scan) and keeps what it had indexed from there.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

#: Added to the flags of every open: never wait (a FIFO), never become a terminal's owner.
_EXTRA = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFile(OSError):
    """The path names something that is not a regular file (it was not opened)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", path)
        self.kind = kind


def kind_of(st: os.stat_result) -> str:
    """What a ``stat`` result is, in words ("a regular file", "a FIFO", …)."""
    if stat.S_ISREG(st.st_mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(st.st_mode)), "not a file")


def regular_stat(path: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(path)`` when it is a regular file; NotRegularFile otherwise (OSError as stat
    raises it: FileNotFoundError when nothing is there)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(os.fspath(path), kind_of(st))
    return st


def is_regular(path: str | os.PathLike[str]) -> bool:
    """A regular file is at ``path`` (after links); False for anything else or an error."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _opener(path: str, flags: int) -> int:
    return os.open(path, flags | _EXTRA)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading (binary) if and only if it is a regular file."""
    before = regular_stat(path)
    fh = open(path, "rb", opener=_opener)  # noqa: SIM115 -- returned open
    try:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(os.fspath(path), kind_of(st))
        if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise NotRegularFile(os.fspath(path), "replaced while opened")
        if _EXTRA & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fh.fileno(), True)
        return fh
    except BaseException:
        fh.close()
        raise


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``limit`` of them)."""
    with open_regular(path) as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_regular_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """A regular file's text (UTF-8), its line ends read as ``open()`` in text mode reads
    them (``\r\n`` and ``\r`` become ``\n``)."""
    text = read_regular(path).decode("utf-8", errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
