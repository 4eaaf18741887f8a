"""File names as the index stores and shows them: lossless text for any POSIX path.

A POSIX file name is bytes. Python decodes the bytes that are not UTF-8 into lone surrogates
(``bad\\xff.jsonl`` → ``'bad\\udcff.jsonl'``, PEP 383), which open() accepts but SQLite,
msgspec and a UTF-8 terminal refuse ("surrogates not allowed"). One such name used to stop
the whole index.

The index therefore keeps every path in a *text form*: the path itself when it holds no
backslash and no undecodable byte (every ordinary path), else an escaped form where each
undecodable byte is ``\\xNN`` and a backslash is ``\\\\``. The mapping is one-to-one (a path
whose text form has a backslash is exactly a path that needed escaping), so two different
files never share a key, and :func:`from_text` gives back the real name to open.
"""

from __future__ import annotations

import os
import re
from typing import Any

_ESCAPED = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})")


def _clean(path: str) -> bool:
    if path.isascii():
        return "\\" not in path
    if "\\" in path:
        return False
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def to_text(path: str) -> str:
    """The lossless, printable text form of an OS path (unchanged for ordinary paths)."""
    if _clean(path):
        return path
    out = []
    for ch in path:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # any other lone surrogate
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def printable(value: str) -> str:
    """``value`` unchanged when it is valid text, else its escaped text form: for names that
    are not paths (a session id taken from a file name), where only storability matters."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return to_text(value)
    return value


def _unescape(match: re.Match[str]) -> str:
    token = match.group(1)
    if token == "\\":
        return "\\"
    if token[0] == "x":
        return chr(0xDC00 + int(token[1:], 16))
    return chr(int(token[1:], 16))


def from_text(text: str) -> str:
    """The OS path a text form stands for (the inverse of :func:`to_text`)."""
    if "\\" not in text:
        return text
    return _ESCAPED.sub(_unescape, text)


def text_value(value: Any) -> Any:
    """``value`` with every string in it (lists, dict values) in text form."""
    if isinstance(value, str):
        return to_text(value)
    if isinstance(value, list):
        return [text_value(v) for v in value]
    if isinstance(value, dict):
        return {k: text_value(v) for k, v in value.items()}
    return value


def real_value(value: Any) -> Any:
    """The inverse of :func:`text_value`."""
    if isinstance(value, str):
        return from_text(value)
    if isinstance(value, list):
        return [real_value(v) for v in value]
    if isinstance(value, dict):
        return {k: real_value(v) for k, v in value.items()}
    return value


def unit_text(unit: Any) -> Any:
    """A copy of a discovery Unit with its paths (and hints) in text form, for storing or
    sending to a worker process."""
    import msgspec

    return msgspec.structs.replace(
        unit,
        path=to_text(unit.path),
        files=[to_text(f) for f in unit.files],
        root=to_text(unit.root),
        hints=text_value(unit.hints),
        sidecars={to_text(k): v for k, v in unit.sidecars.items()},
    )


def unit_real(unit: Any) -> Any:
    """The inverse of :func:`unit_text`: the Unit an adapter can open files with."""
    import msgspec

    return msgspec.structs.replace(
        unit,
        path=from_text(unit.path),
        files=[from_text(f) for f in unit.files],
        root=from_text(unit.root),
        hints=real_value(unit.hints),
        sidecars={from_text(k): v for k, v in unit.sidecars.items()},
    )


def at_or_below(path: str, folder: str) -> bool:
    """Is ``path`` the folder itself or anything inside it? (Strings, not the file system:
    both in the same form; a trailing separator on ``folder`` is allowed.)"""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
