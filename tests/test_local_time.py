"""agtaild.cli.format.local_time without datetime gives what datetime gives: for epochs and for
ISO timestamps of every shape (with and without a fraction and a zone, odd ones too), in zones
with half-hour, 45-minute and +14 h offsets and with summer time."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.cli import format as fmt

ZONES = ("UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Berlin", "Pacific/Kiritimati")


def by_datetime(value: str | float, seconds: bool) -> str:
    """The function as it was written with datetime."""
    try:
        if isinstance(value, (int, float)):
            dt = datetime.fromtimestamp(value).astimezone()
        else:
            dt = datetime.fromisoformat(value)
            dt = dt.astimezone() if dt.tzinfo else dt
    except (ValueError, OverflowError, OSError):
        return str(value)[:16]
    return dt.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


stamps = st.builds(
    lambda y, mo, d, h, mi, s, sep, tail: f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{tail}",
    st.sampled_from([1, 9, 999, 1000, 1969, 1970, 2024, 2026, 9998, 9999]) | st.integers(1, 9999),
    st.integers(1, 12), st.integers(1, 31), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
    st.sampled_from("T "),
    st.sampled_from(["", "Z", ".123Z", ".5", ".123456+01:00", "+05:30", "-08:00", "+14:00", "+24:00", "x", ".Z", "-00:45"]),
)


@given(value=stamps | st.floats(-7e10, 3e11) | st.integers(-2**40, 2**40), seconds=st.booleans())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_local_time_is_what_datetime_makes_of_it(zone: str, value: str | float, seconds: bool) -> None:
    assert fmt.local_time(value, seconds=seconds) == by_datetime(value, seconds), (zone, value)
