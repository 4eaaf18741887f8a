"""Fitting lines to the terminal: its width, the columns a text takes, and cutting to fit.

Tables (`list`, `search`, `projects`) are laid out for ``$COLUMNS``, else the width of the
terminal stdout is; a row never wraps (the title column shrinks), as ``git log --oneline`` and
``ls`` do. Piped without ``$COLUMNS``, there is no width and nothing is cut for it.

Widths are the columns a terminal gives a character: two for East Asian wide and fullwidth
ones (``README を書いて``), none for combining marks and zero-width characters, one otherwise —
measured on the text as it reaches the terminal (control characters made visible by
agtaild.textsafe, which may be longer than the characters they stand for).
"""

from __future__ import annotations

import os
import sys

from agtaild.textsafe import visible

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import TextIO

ELLIPSIS = "…"


def terminal_width(stream: TextIO | None = None) -> int | None:
    """``$COLUMNS`` when it is a positive number, else the width of the terminal ``stream``
    (stdout) is, else None (a pipe or a file: no width to fit)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            size = os.get_terminal_size(stream.fileno()).columns
            return size if size > 0 else None
    except (AttributeError, ValueError, OSError):
        pass
    return None


class _Widths(dict[str, int]):
    """Each character's columns, asked of unicodedata once per character and process: a
    listing measures a title's characters several times (fit, then the table's padding)."""

    def __missing__(self, ch: str) -> int:
        code = ord(ch)
        if code < 0x300:  # ASCII and Latin: the common case, without a table lookup
            width = 1
        else:
            import unicodedata

            if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf") or 0x200B <= code <= 0x200F:
                width = 0
            else:
                width = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        self[ch] = width
        return width


_WIDTHS = _Widths()


def cells(text: str) -> int:
    """The columns ``text`` takes on a terminal, as agtail prints it (made visible first)."""
    shown = visible(text)
    if shown.isascii():
        return len(shown)
    return sum(map(_WIDTHS.__getitem__, shown))


def fit(text: str, width: int) -> str:
    """``text`` (made visible) cut at the right to ``width`` columns, ``…`` marking the cut."""
    shown = visible(text)
    if cells(shown) <= width:
        return shown
    if width <= 0:
        return ""
    if shown.isascii():
        return shown[: width - 1] + ELLIPSIS
    out, used = [], 0
    for ch in shown:
        w = _WIDTHS[ch]
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + ELLIPSIS


def fit_left(text: str, width: int) -> str:
    """``text`` cut at the left to ``width`` columns (a path keeps its end: ``…/src/app``)."""
    shown = visible(text)
    if cells(shown) <= width:
        return shown
    if width <= 0:
        return ""
    out, used = [], 0
    for ch in reversed(shown):
        w = _WIDTHS[ch]
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return ELLIPSIS + "".join(reversed(out))


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` columns (``right``: aligned to the right)."""
    room = " " * max(width - cells(text), 0)
    return room + text if right else text + room
