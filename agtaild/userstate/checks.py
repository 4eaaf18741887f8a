"""What a label, a value and a title may be: bad input is refused whole, with the reason.

Keys are short names (letters, digits, ``.``, ``_``, ``-``, ``/``, ``:``); values and titles
are one line of printable text. Limits keep one session's state small whatever asks for it
(an agent over MCP included).
"""

from __future__ import annotations

import re
import unicodedata

from agtaild.errors import UsageError

KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}")
MAX_VALUE = 256
MAX_TITLE = 300
#: Labels one session may carry.
MAX_LABELS = 64
WHO = ("user", "agent", "rule")
#: Who wins: a higher rank's change is never overwritten by a lower one's.
RANK = {"rule": 0, "agent": 1, "user": 2}


def _printable(text: str, what: str, limit: int) -> str:
    if len(text) > limit:
        raise UsageError(f"{what} is {len(text)} characters long; at most {limit}")
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise UsageError(
                f"{what} holds a control or unassigned character (U+{ord(ch):04X}); use printable text"
            )
    return text


def key(text: str) -> str:
    if not isinstance(text, str) or not KEY.fullmatch(text):
        raise UsageError(
            f"label key {text!r}: use up to 64 letters, digits, '.', '_', '-', '/' or ':', starting with a letter or digit"
        )
    return text


def value(text: str | None) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        raise UsageError("a label value is text")
    return _printable(text, f"label value {text[:40]!r}", MAX_VALUE)


def title(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise UsageError("a title needs some text")
    return _printable(text.strip(), "the title", MAX_TITLE)


def who(text: str) -> str:
    if text not in WHO:
        raise UsageError(f"who made a change: one of {', '.join(WHO)}, not {text!r}")
    return text


#: A carried change may be stamped this far ahead of this machine's clock (clocks drift); one
#: further ahead would win every later change, so it is refused.
MAX_CLOCK_AHEAD = 86400.0


def at(value: object, now: float) -> float:
    """A carried change's time: seconds since the epoch, not in the future (give or take a day)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value <= now + MAX_CLOCK_AHEAD):
        raise UsageError(f"a change's time must be seconds since 1970, not after now: {str(value)[:40]!r}")
    return float(value)


def parse_label(arg: str) -> tuple[str, str]:
    """``key`` or ``key=value`` as the CLI takes it."""
    k, _, v = arg.partition("=")
    return key(k), value(v)
