"""The fast epoch formatter equals the plain one (stamps.from_epoch) everywhere it is used."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agtaild.adapters.epoch_iso import millis_iso, seconds_iso
from agtaild.adapters.stamps import from_epoch


@given(st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False) | st.integers(0, 4_000_000_000))
def test_seconds_like_from_epoch(value: float) -> None:
    assert seconds_iso(value) == from_epoch(value, unit="s")


@given(st.integers(0, 4_000_000_000_000))
def test_millis_like_from_epoch(value: int) -> None:
    assert millis_iso(value) == from_epoch(value, unit="ms")


def test_edges() -> None:
    assert seconds_iso(1796054775.9999996) == from_epoch(1796054775.9999996, unit="s")
    assert seconds_iso(True) is None and seconds_iso("1") is None and millis_iso(None) is None
    assert seconds_iso(-5.5) == from_epoch(-5.5, unit="s") and seconds_iso(1e300) == from_epoch(1e300, unit="s")
    assert seconds_iso(float("nan")) == from_epoch(float("nan"), unit="s")
