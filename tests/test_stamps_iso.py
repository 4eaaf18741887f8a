"""stamps.norm_iso and stamps.from_epoch: their fast paths equal the general datetime paths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from agtaild.adapters.kit.stamps import _from_epoch_dt, _norm_iso_dt, from_epoch, norm_iso


def _general(text: str) -> str | None:
    try:
        return _norm_iso_dt(datetime.fromisoformat(text.strip()))
    except ValueError:
        return None


_SUFFIXES = st.sampled_from(["", "Z", "+00:00", "+02:00", "-05:30", "-00:00"])
_SEPARATORS = st.sampled_from(["T", " "])


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.sampled_from(["seconds", "milliseconds", "microseconds", "auto"]),
    _SUFFIXES,
    _SEPARATORS,
)
def test_shortcut_equals_general_path(dt: datetime, spec: str, suffix: str, sep: str) -> None:
    text = dt.isoformat(sep=sep, timespec=spec) + suffix
    assert norm_iso(text) == _general(text)


@given(st.text(alphabet="0123456789-T:.Z+ ", max_size=32))
def test_shortcut_on_iso_like_garbage(text: str) -> None:
    assert norm_iso(text) == _general(text) if text.strip() else norm_iso(text) is None


def test_known_values() -> None:
    assert norm_iso("2026-11-30T16:00:00.123456") == "2026-11-30T16:00:00.123Z"
    assert norm_iso("2026-11-30T16:00:00Z") == "2026-11-30T16:00:00.000Z"
    assert norm_iso(" 2026-11-30T16:00:00.1234567+00:00 ") == "2026-11-30T16:00:00.123Z"
    assert norm_iso("2026-11-30T18:00:00.5+02:00") == "2026-11-30T16:00:00.500Z"
    assert norm_iso("0999-01-01T00:00:00Z") == _norm_iso_dt(datetime(999, 1, 1, tzinfo=UTC))
    assert norm_iso("2026-11-30T23:59:60Z") is None and norm_iso("2026-13-01T00:00:00Z") is None
    assert norm_iso("2026-11-30T16:00:00-01:00") == _norm_iso_dt(
        datetime(2026, 11, 30, 16, tzinfo=timezone(timedelta(hours=-1)))
    )
    assert (
        norm_iso("") is None
        and norm_iso(5) is None
        and norm_iso("２０２６-11-30T16:00:00Z") == _general("２０２６-11-30T16:00:00Z")
    )


def _epoch_general(value: float, unit: str) -> str | None:
    seconds = float(value)
    if unit == "ms" or (unit == "auto" and abs(seconds) >= 100_000_000_000):
        seconds /= 1000.0
    return _from_epoch_dt(seconds)


@given(
    st.floats(min_value=-1e13, max_value=3e14) | st.integers(-(10**13), 3 * 10**14),
    st.sampled_from(["s", "ms", "auto"]),
)
def test_from_epoch_cached_second_equals_datetime(value: float, unit: str) -> None:
    assert from_epoch(value, unit=unit) == _epoch_general(value, unit)


def test_from_epoch_edges() -> None:
    for value in (0, 0.0005, 0.9999995, 1796054775.9999996, 253402300798.9999, 253402300799, -0.5, 1e300):
        for unit in ("s", "ms", "auto"):
            assert from_epoch(value, unit=unit) == _epoch_general(value, unit), (value, unit)
    assert from_epoch(1796054775123) == "2026-11-30T16:06:15.123Z"
    assert from_epoch(True) is None and from_epoch("1") is None and from_epoch(float("inf")) is None
