"""The one sanitiser between hostile text and a person's terminal.

Transcripts are written by agents that read web pages, files and command output, so any
string agtail prints may carry terminal control sequences: ``ESC ] 0 ; title BEL`` renames
the window, ``ESC [ 2 J`` clears the screen, OSC 8 makes links, SGR recolours, the 8-bit CSI
``\\x9b`` does all of it in one byte, and a bare ``\\r`` overwrites a line with another.

:func:`visible` makes every such character visible instead of obeyed: C0 controls (except
``\\n`` and ``\\t``) and DEL become their Unicode *control pictures* (``\\x1b`` → ``␛``,
``\\r`` → ``␍``), C1 controls become the text ``\\x9b``, and the bidirectional overrides and
isolates (which reorder what a terminal shows: "Trojan Source") become ``\\u202e``.

The CLI does not call it at each print: :class:`SafeStream` wraps ``sys.stdout`` and
``sys.stderr`` for the whole command (``agtaild.cli.main``), so every human-readable path —
tables, transcripts, ``tail``, error messages, doctor, sync, resume, argparse's own errors —
goes through it, including paths written later. ``--json`` output is written to the
underlying byte buffer (``stream.buffer``) and stays exact.

agtail's own colours and progress bar need real escape sequences. They are written as
*trusted tokens* (:func:`trusted`): a noncharacter (U+FDD0) followed by a per-process random
key, which a transcript cannot contain because it was written before the key existed. Only
:class:`SafeStream` turns a token back into its sequence, after sanitising everything else.

Only the standard library is imported here: the CLI loads this module for every command.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from typing import Any, TextIO

#: C0 controls kept as they are: they only move to the next line or tab stop.
_KEPT = {"\n", "\t"}
#: Bidirectional formatting characters (embeddings, overrides, isolates).
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if chr(code) not in _KEPT:
            table[code] = chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = f"\\x{code:02x}"
    for code in _BIDI:
        table[code] = f"\\u{code:04x}"
    return table


_VISIBLE = _table()
#: The ASCII characters :data:`_VISIBLE` changes, as bytes to delete: most texts are ASCII and
#: hold none, and finding that with ``bytes.translate`` costs far less than ``str.translate``
#: with a table (~10 µs per title of a listing).
_ASCII_CHANGED = bytes(code for code in _VISIBLE if code < 0x80)

#: Marks a trusted token (a noncharacter: never meaningful in interchanged text).
_TOKEN_START = "\ufdd0"
_TOKEN_END = "\ufdd1"
_KEY = os.urandom(8).hex()
_TRUSTED: list[str] = []


def visible(text: str) -> str:
    """``text`` with every control character made visible (see the module docstring)."""
    if text.isprintable():
        return text
    if text.isascii():
        raw = text.encode("ascii")
        if len(raw.translate(None, _ASCII_CHANGED)) == len(raw):
            return text
    return text.translate(_VISIBLE)


def visible_doc(value: Any) -> Any:
    """A JSON document with :func:`visible` applied to every string in it (keys too)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_doc(k): visible_doc(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_doc(v) for v in value]
    return value


def trusted(sequence: str) -> str:
    """A token standing for ``sequence`` (a control sequence agtail itself writes, e.g. a
    colour), turned back into it by :class:`SafeStream` and by nothing else."""
    try:
        n = _TRUSTED.index(sequence)
    except ValueError:
        _TRUSTED.append(sequence)
        n = len(_TRUSTED) - 1
    return f"{_TOKEN_START}{_KEY}{n}{_TOKEN_END}"


def render(text: str) -> str:
    """What a :class:`SafeStream` writes for ``text``: controls made visible, agtail's own
    tokens turned into their sequences."""
    safe = visible(text)
    if _TOKEN_START not in safe:
        return safe
    head, *rest = safe.split(_TOKEN_START + _KEY)
    out = [head]
    for part in rest:
        number, end, tail = part.partition(_TOKEN_END)
        if end and number.isdigit() and int(number) < len(_TRUSTED):
            out.append(_TRUSTED[int(number)])
            out.append(tail)
        else:  # not one of ours after all: keep the text as it was
            out.append(_TOKEN_START + _KEY + part)
    return "".join(out)


class SafeStream:
    """A text stream that writes :func:`render` of everything to ``inner``.

    Everything else (``buffer`` for exact bytes, ``fileno``, ``isatty``, ``encoding``) is the
    inner stream's, so ``--json`` bytes, colour detection and ``dup2`` work unchanged.
    """

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(render(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
