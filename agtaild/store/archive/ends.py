"""The ends of an archived file: the sha256 of its first and last BOUNDARY_WINDOW bytes.

An append to an archived file first checks that the archived bytes still begin the native
file — on its first and last BOUNDARY_WINDOW bytes: an append leaves both as they were, a file
rewritten in place changes its head, or the bytes where the old end was. The catalog keeps the
digests of those two windows of each archived copy (its ``ends`` column), so the check hashes
two windows of the native file and compares: no frame of the archive is read or decompressed,
and an append costs the appended bytes, not the size of the frames at either end.

The digests of a new row come from the bytes it was written from: :class:`EndsDigest` is fed
each stored block in order. An append starts from the windows it just checked (the archived
ones, found equal) and feeds the new bytes; nothing is read back.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

#: Bytes at each end of an archived file whose digest the catalog keeps (and that an append
#: compares with the native file's).
BOUNDARY_WINDOW = 64 * 1024


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class EndsDigest:
    """The first and last BOUNDARY_WINDOW bytes of a file whose bytes are fed in order, and
    their digests (``[window, head sha256, tail sha256]``, the catalog's ``ends``)."""

    __slots__ = ("head", "head_digest", "tail")

    def __init__(self, head: bytes = b"", tail: bytes = b"", head_digest: str | None = None) -> None:
        #: The file's first bytes so far (at most BOUNDARY_WINDOW).
        self.head = head
        #: Its last bytes so far (at most BOUNDARY_WINDOW).
        self.tail = tail
        #: The digest of a complete head, when known (an append does not hash it again).
        self.head_digest = head_digest if len(head) == BOUNDARY_WINDOW else None

    @classmethod
    def after(cls, size: int, ends: Any, first: bytes, last: bytes) -> EndsDigest | None:
        """The digest of a file of ``size`` bytes (recorded ``ends``, or None) to be appended
        to, whose first and last min(size, BOUNDARY_WINDOW) bytes are ``first`` and ``last``
        (the caller compared them with the archived ones); None when they cannot be those."""
        window = min(size, BOUNDARY_WINDOW)
        if len(first) != window or len(last) != window:
            return None
        known = ends[1] if has_ends(ends) and size >= BOUNDARY_WINDOW else None
        return cls(first, last, known)

    def feed(self, data: bytes) -> None:
        if len(self.head) < BOUNDARY_WINDOW:
            self.head += data[: BOUNDARY_WINDOW - len(self.head)]
        if len(data) >= BOUNDARY_WINDOW:
            self.tail = data[-BOUNDARY_WINDOW:]
        elif data:
            self.tail = (self.tail + data)[-BOUNDARY_WINDOW:]

    def ends(self) -> list[Any]:
        if len(self.head) < BOUNDARY_WINDOW:  # a file shorter than a window: head and tail are it
            whole = digest(self.head)
            return [BOUNDARY_WINDOW, whole, whole]
        head = self.head_digest if self.head_digest is not None else digest(self.head)
        return [BOUNDARY_WINDOW, head, digest(self.tail)]


def has_ends(ends: Any) -> bool:
    """Are ``ends`` (a catalog row's) digests of today's window? (rows written before the
    catalog kept them have none)"""
    return isinstance(ends, list) and len(ends) == 3 and ends[0] == BOUNDARY_WINDOW


def ends_match(ends: Any, first: bytes, last: bytes) -> bool | None:
    """Do ``first``/``last`` hash to ``ends``? None when the row keeps no usable digests."""
    if not has_ends(ends):
        return None
    return digest(first) == ends[1] and (ends[2] == ends[1] if last is first else digest(last) == ends[2])


def file_ends(fd: int, size: int) -> list[Any] | None:
    """The ``ends`` (as :meth:`EndsDigest.ends` gives them) of the first ``size`` bytes of the
    file open as ``fd``, read with ``pread`` (the file's offset is left alone); None when it
    holds fewer bytes. A pin records them of what the index read (agtaild.store.archive.pins)."""
    window = min(size, BOUNDARY_WINDOW)
    first = os.pread(fd, window, 0)
    if len(first) != window:
        return None
    if size <= BOUNDARY_WINDOW:
        whole = digest(first)
        return [BOUNDARY_WINDOW, whole, whole]
    last = os.pread(fd, BOUNDARY_WINDOW, size - BOUNDARY_WINDOW)
    if len(last) != BOUNDARY_WINDOW:
        return None
    return [BOUNDARY_WINDOW, digest(first), digest(last)]
