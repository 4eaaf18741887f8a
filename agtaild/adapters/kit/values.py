"""Small readers of untrusted JSON values that every adapter needs alike.

Records drift between versions and anything may have written them: a field that should be an
object or a count may be missing, ``null``, a string or a negative number. These give the
value when it has the expected type and a neutral one otherwise, so an adapter never raises
on a record's shape.

:func:`json_value` decodes one stored JSON value (a database row's column, a registry file):
a value that is not JSON, not UTF-8, or nested deeper than the decoder's depth limit is one
:class:`BadJson` — never a RecursionError that would end the caller's loop over the others.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.kit.gc_pause import decode_document

_decoder = msgspec.json.Decoder()


class BadJson(ValueError):
    """A value that does not decode as JSON; the message says why."""


def json_value(raw: bytes | str, decoder: msgspec.json.Decoder = _decoder) -> Any:
    """Decode one JSON value, each on its own. The depth limit is the decoder's: msgspec
    checks its nesting against the interpreter's recursion limit (about 1000 levels less the
    caller's stack) and stops there with RecursionError, here a BadJson for this value alone."""
    try:
        return decode_document(decoder, raw)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise BadJson(f"not JSON: {exc}") from None
    except RecursionError:
        raise BadJson("not JSON the index can hold: nested deeper than the depth limit") from None

#: Longest title taken from a prompt (a whole pasted file is not a title).
TITLE_MAX = 200


def sub(d: Any, key: str) -> dict[str, Any]:
    """``d[key]`` when both are dicts, else an empty dict (fields drift between versions)."""
    value = d.get(key) if isinstance(d, dict) else None
    return value if isinstance(value, dict) else {}


def num(d: Any, key: str) -> int:
    """``d[key]`` as a non-negative int (a float is truncated); 0 for anything else."""
    value = d.get(key) if isinstance(d, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def title_from_prompt(prompt: str | None) -> str | None:
    """The first non-empty line of a prompt, shortened to :data:`TITLE_MAX` characters."""
    if not prompt:
        return None
    for line in prompt.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"
    return None
