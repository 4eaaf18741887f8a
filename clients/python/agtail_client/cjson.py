"""``json.loads`` and ``json.dumps`` (their default options) without importing the json package.

The json package imports re (and enum under it) to compile a few patterns it needs only in its
pure-Python fallbacks; the C accelerator ``_json`` that does the actual work needs neither. For
`agtail` against a running daemon, re alone costs a fifth of the command. These run the same C
scanner and encoder json itself uses, set up as ``json.loads`` / ``json.dumps`` set them up, so
the results are the same; an interpreter without ``_json`` gets the json package itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - every CPython build has it
    _json = None  # type: ignore[assignment]


class _Decoding:
    """What the C scanner reads off a ``json.JSONDecoder()`` made with no options."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


#: The scanner json.loads uses, made once as json makes its default decoder's (it keeps and
#: clears its own memo of keys per call).
_scan = _json.make_scanner(_Decoding) if _json is not None else None  # type: ignore[arg-type]
_WHITESPACE = " \t\n\r"


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``: ValueError (json's JSONDecodeError is one) when it is not JSON."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(data)
    if isinstance(data, (bytes, bytearray)):
        text = bytes(data).decode("utf-8")  # json.loads detects UTF-16/32 too: agtaild sends UTF-8
        if text[:1] == "\ufeff":
            text = text[1:]
    elif data.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    else:
        text = data
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        doc, end = _scan(text, start)
    except StopIteration:
        raise ValueError(f"Expecting value: char {start}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return doc


def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> str:
    """``json.dumps(value)``: ASCII, ``", "`` and ``": "`` between items, NaN allowed."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value)
    if isinstance(value, str):
        return str(_json.encode_basestring_ascii(value))
    encode = _json.make_encoder(
        {}, _default, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return "".join(encode(value, 0))
