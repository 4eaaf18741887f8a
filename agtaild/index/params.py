"""Checking a method's parameters, and opaque keyset cursors.

Parameters arrive from JSON-RPC (typed JSON) and from REST query strings (all strings), so
each accessor takes either: ``limit`` may be ``50`` or ``"50"``, a boolean ``true`` or
``"true"``/``"1"``/``"yes"``. Anything else is a UsageError whose message names the parameter.
Unknown parameter names are refused too (a typo must not silently widen a query), except
names starting with ``_`` (cache busters).
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

import msgspec

from agtaild.errors import UsageError, bad_param

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_COMPACT_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


class TimeBound(msgspec.Struct):
    """A since/until bound: an instant, and the local calendar day when given as a date."""

    epoch: float
    day: str | None = None


class Params:
    def __init__(self, method: str, params: Mapping[str, Any] | None, allowed: Iterable[str]) -> None:
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise UsageError(f"{method}: params must be an object")
        allowed = set(allowed)
        unknown = sorted(k for k in params if k not in allowed and not str(k).startswith("_"))
        if unknown:
            raise bad_param(
                str(unknown[0]),
                f"is unknown here (accepted: {', '.join(sorted(allowed)) or 'none'})",
            )
        self.method = method
        self.params = params

    def _raw(self, name: str) -> Any:
        value = self.params.get(name)
        return None if value == "" and not isinstance(value, bool) else value

    def text(
        self, name: str, *, required: bool = False, allow_empty: bool = False, max_len: int = 100_000
    ) -> str | None:
        value = self.params.get(name)
        if value is None:
            if required:
                raise bad_param(name, "is required")
            return None
        if not isinstance(value, str):
            raise bad_param(name, "must be a string")
        if len(value) > max_len:
            raise bad_param(name, f"is longer than {max_len} characters")
        if allow_empty:
            return value
        if required and not value:
            raise bad_param(name, "must not be empty")
        return value or None

    def integer(
        self, name: str, default: int | None = None, *, minimum: int = 0, maximum: int | None = None
    ) -> int | None:
        value = self._raw(name)
        if value is None:
            return default
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_param(name, "must be an integer")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise bad_param(name, f"must be {bound}")
        return value

    def flag(self, name: str) -> bool | None:
        value = self._raw(name)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise bad_param(name, "must be true or false")

    def choice(self, name: str, choices: Iterable[str], default: str | None = None) -> str | None:
        value = self.text(name)
        if value is None:
            return default
        options = list(choices)
        if value not in options:
            raise bad_param(name, f"{value[:40]!r} is not one of {', '.join(options)}")
        return value

    def when(self, name: str, *, end: bool = False) -> TimeBound | None:
        value = self._raw(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise bad_param(name, "must be a string (ISO date or time)")
        try:
            return parse_bound(value, end=end)
        except ValueError:
            raise bad_param(name, not_a_date(value)) from None

    def cursor(self, name: str, tag: str) -> list[Any] | None:
        value = self._raw(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise bad_param(name, "must be a string")
        decoded = decode_cursor(value)
        if decoded is None or decoded[0] != tag:
            raise bad_param(name, "is not a cursor this query returned (pass back its `next`)")
        return decoded[1:]

    def session_ref(self) -> tuple[str | None, str]:
        """(agent, id) of the session named by ``id``, with ``agent`` or as ``AGENT:ID``; the
        agent is None for an id given alone (a prefix unique across agents: agtaild.index.refs)."""
        ident = self.text("id", required=True, max_len=1000)
        assert ident is not None
        agent = self.text("agent")
        if agent is None and ":" in ident:
            agent, ident = ident.split(":", 1)
            if not ident:
                raise bad_param("id", "names no session after the agent (AGENT:ID)")
        return agent or None, ident

    def number_cursor(self, tag: str, size: int) -> list[Any] | None:
        """``cursor`` holding ``size`` numbers (a keyset position), or None when not given."""
        values = self.cursor("cursor", tag)
        if values is None:
            return None
        if len(values) != size or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise bad_param("cursor", "is not a cursor this query returned (pass back its `next`)")
        return values


def not_a_date(value: str) -> str:
    """What is wrong with a since/until value that is neither a date, a time nor an age."""
    return (
        f"{value[:40]!r} is not a date (2026-01-31, 20260131), a time (2026-01-31T12:00, with or "
        "without a zone) or an age (30m, 12h, 7d, 2w)"
    )


def parse_bound(value: str, *, end: bool = False, now: float | None = None) -> TimeBound:
    """A date is a whole local day (``end``: the bound is the end of that day, exclusive)."""
    text = value.strip()
    rel = _RELATIVE.match(text.lower())
    if rel:
        now = time.time() if now is None else now
        return TimeBound(epoch=now - float(rel.group(1)) * _UNITS[rel.group(2)])
    compact = _COMPACT_DATE.match(text)
    if compact:
        text = "-".join(compact.groups())
    if len(text) == 10:
        day = datetime.strptime(text, "%Y-%m-%d")
        when = day + timedelta(days=1) if end else day
        return TimeBound(epoch=when.timestamp(), day=text)
    dt = datetime.fromisoformat(text)
    return TimeBound(epoch=dt.timestamp())  # naive = local time, as people type it


def encode_cursor(tag: str, *values: Any) -> str:
    raw = msgspec.json.encode([tag, *values])
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(value: str) -> list[Any] | None:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        decoded = msgspec.json.decode(raw)
    except (ValueError, msgspec.DecodeError):
        return None
    if not isinstance(decoded, list) or not decoded or not isinstance(decoded[0], str):
        return None
    return decoded
