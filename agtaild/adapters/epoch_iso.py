"""Epoch numbers → the index's ISO form, fast, for logs with a timestamp on every line.

Kimi's wire logs stamp every record (epoch seconds as a float, or milliseconds): formatting
each through ``datetime.strftime`` was a third of the read time. Consecutive records nearly
always fall in the same second, so the ``YYYY-mm-ddTHH:MM:SS`` part is cached per second and
only the milliseconds are formatted. The result equals :func:`stamps.from_epoch` (same
rounding as ``datetime.fromtimestamp``); tests compare the two.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any

from agtaild.adapters.stamps import from_epoch

#: Beyond this (year 9999) the plain helper decides what to return.
_MAX_SECONDS = 253_402_300_799


@lru_cache(maxsize=4096)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def seconds_iso(value: Any) -> str | None:
    """Epoch seconds (int or float) → ISO with milliseconds and ``Z``; None if unusable."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not (0 <= value <= _MAX_SECONDS) or value != value:
        return from_epoch(value, unit="s")
    frac, whole = math.modf(value)
    micro = round(frac * 1_000_000)
    if micro >= 1_000_000:
        whole += 1
        micro -= 1_000_000
    return f"{_second(int(whole))}.{micro // 1000:03d}Z"


def millis_iso(value: Any) -> str | None:
    """Epoch milliseconds → ISO (integers exactly; floats as :func:`seconds_iso` does)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not (0 <= value <= _MAX_SECONDS * 1000):
            return from_epoch(value, unit="ms")
        whole, ms = divmod(value, 1000)
        return f"{_second(whole)}.{ms:03d}Z"
    if isinstance(value, float):
        return from_epoch(value, unit="ms")
    return None
