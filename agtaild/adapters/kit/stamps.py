"""Timestamps as the index stores them: ISO 8601 in UTC with milliseconds and a ``Z``.

Agents write time in many shapes (ISO with ``Z`` or an offset, microseconds, epoch seconds,
epoch milliseconds). Normalising them to one fixed-width UTC form means plain string
comparison orders them, so ``started``/``ended`` can be kept as a running min/max of strings.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

#: Epoch values above this are milliseconds, below it seconds (year 5138 in seconds).
_MS_THRESHOLD = 100_000_000_000


def _fmt(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def from_epoch(value: Any, *, unit: str = "auto") -> str | None:
    """Epoch seconds or milliseconds (``unit`` "s", "ms" or "auto") → ISO, None if unusable.

    Formats that stamp every row call this per row: from 1970 to 9999 the second is
    formatted once (cached) and the microseconds rounded as ``datetime.fromtimestamp`` rounds
    them (half to even on the fraction); :func:`_from_epoch_dt` is the general path, and
    tests compare the two."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    if unit == "ms" or (unit == "auto" and abs(seconds) >= _MS_THRESHOLD):
        seconds /= 1000.0
    if 0.0 <= seconds < _FAST_MAX_SECONDS:  # (NaN compares false)
        frac, whole = math.modf(seconds)
        micro = round(frac * 1_000_000)
        if micro >= 1_000_000:
            whole += 1
            micro -= 1_000_000
        return f"{_utc_second(int(whole))}.{micro // 1000:03d}Z"
    return _from_epoch_dt(seconds)


def _from_epoch_dt(seconds: float) -> str | None:
    """Epoch seconds → ISO through ``datetime`` (any value it can represent)."""
    try:
        return _fmt(datetime.fromtimestamp(seconds, tz=UTC))
    except (OverflowError, OSError, ValueError):
        return None


#: Below this the cached-second path of from_epoch applies (the last second of 9999).
_FAST_MAX_SECONDS = 253402300799.0
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # what datetime can represent


@lru_cache(maxsize=4096)
def _utc_second(seconds: int) -> str:
    """``YYYY-mm-ddTHH:MM:SS`` of an epoch second. Cached: records written in one session
    mostly share their seconds with their neighbours, and strftime is the costly part."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def from_epoch_ms(value: Any) -> str | None:
    """Epoch milliseconds → ISO, as ``from_epoch(value, unit="ms")`` but in integer
    arithmetic and without building a datetime: formats that stamp every record in ms
    (Cline, OpenCode and its forks) call this on their hot path. Exact to the millisecond
    (``from_epoch``'s float division can lose one far from 1970)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds, millis = divmod(int(value), 1000)
        if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
            return None
        return f"{_utc_second(seconds)}.{millis:03d}Z"
    except (OverflowError, OSError, ValueError):
        return None


#: An ISO string that is already UTC, at second precision or finer, in the index's own field
#: order: its normalised form is a slice of it (no datetime arithmetic, no strftime). ASCII
#: digits only, and no year below 1000 (strftime writes those without the leading zero).
_UTC_ISO = re.compile(
    r"([1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{3})[0-9]*)?(?:Z|\+00:00)?"
)


def norm_iso(value: Any) -> str | None:
    """Any ISO 8601 string (``Z``, offset, or naive = UTC) → the normalised form, else None.

    Every adapter calls this once per event; most agents already write UTC (``Z``, ``+00:00``
    or naive), so after ``fromisoformat`` has validated the string, those are cut to shape
    instead of formatted again (the same result as :func:`_norm_iso_dt`, about 3× faster)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    m = _UTC_ISO.fullmatch(text)
    if m is not None:
        return f"{m[1]}.{m[2] or '000'}Z"
    return _norm_iso_dt(dt)


def _norm_iso_dt(dt: datetime) -> str | None:
    """The general path of :func:`norm_iso`: any offset, any fraction, via datetime."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return _fmt(dt)
    except (OverflowError, ValueError):
        return None


def any_time(value: Any) -> str | None:
    """An ISO string or an epoch number, whichever it is."""
    if isinstance(value, str):
        return norm_iso(value)
    return from_epoch(value)


def widen(
    current_start: str | None, current_end: str | None, ts: str | None
) -> tuple[str | None, str | None]:
    """Extend a (started, ended) span to include ``ts`` (all normalised strings)."""
    if ts is None:
        return current_start, current_end
    start = ts if current_start is None or ts < current_start else current_start
    end = ts if current_end is None or ts > current_end else current_end
    return start, end
