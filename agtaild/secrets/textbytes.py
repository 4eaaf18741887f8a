"""Text ↔ bytes for the scanner: RE2 matches UTF-8 bytes, findings are in characters.

Also the cutting of a very long text into overlapping pieces, so that memory stays bounded
(each piece is encoded on its own) and a match near a cut is still whole in one piece.
"""

from __future__ import annotations


def encode(text: str) -> bytes:
    """UTF-8 for RE2. A lone surrogate (JSON allows ``\\ud800``) becomes ``?``: one
    character for one, so character offsets stay those of ``text``."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def pieces(text: str, size: int, overlap: int) -> list[tuple[int, str]]:
    """Overlapping pieces of a long text, cut at a space or line break where one is near."""
    out: list[tuple[int, str]] = []
    start = 0
    n = len(text)
    while start < n:
        stop = min(n, start + size)
        if stop < n:
            near = max(start + 1, stop - 4096)
            cut = max(text.rfind("\n", near, stop), text.rfind(" ", near, stop))
            if cut > start:
                stop = cut + 1
        lo = max(0, start - overlap)
        hi = min(n, stop + overlap)
        out.append((lo, text[lo:hi]))
        start = stop
    return out


def char_offsets(b: bytes, text: str, offsets: list[int]) -> dict[int, int]:
    """Byte offsets in ``b`` (UTF-8 of ``text``, at character boundaries) → character offsets."""
    if len(b) == len(text):  # ASCII: the same
        return {o: o for o in offsets}
    result: dict[int, int] = {}
    chars, last = 0, 0
    for o in sorted(set(offsets)):
        chars += len(b[last:o].decode())
        result[o] = chars
        last = o
    return result
