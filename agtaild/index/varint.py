"""The SQLite varints FTS5 stores its sizes and its records in: big-endian, 7 bits a byte (the
high bit set while more follow), the ninth byte taken whole."""

from __future__ import annotations


def read(buf: bytes, i: int) -> tuple[int, int]:
    """The varint at ``buf[i]``: (its value, the offset after it). IndexError when ``buf``
    ends inside it."""
    value = 0
    for k in range(9):
        c = buf[i]
        i += 1
        if k == 8:
            return (value << 8) | c, i
        value = (value << 7) | (c & 0x7F)
        if c < 0x80:
            return value, i
    return value, i


def read_all(blob: bytes) -> list[int]:
    """Every varint of ``blob``; a last one cut off ends the list with what there is of it
    (never an error)."""
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        try:
            value, i = read(blob, i)
        except IndexError:  # fewer than 9 bytes left, each with the high bit set
            value = 0
            for c in blob[i:]:
                value = (value << 7) | (c & 0x7F)
            i = n
        out.append(value)
    return out


def total(blob: bytes) -> int:
    """The sum of ``blob``'s varints (a row's size in tokens from FTS5's ``_docsize``); a
    last one cut off counts for what there is of it, as in :func:`read_all`."""
    if blob.isascii():  # every byte below 0x80: each is a whole varint, its own value
        return sum(blob)
    out = value = k = 0
    for c in blob:  # read() inlined: this runs for every row a ranked search scores
        if k == 8:
            out += (value << 8) | c
            value = k = 0
        elif c < 0x80:
            out += (value << 7) | c
            value = k = 0
        else:
            value = (value << 7) | (c & 0x7F)
            k += 1
    return out + value
