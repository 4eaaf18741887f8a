"""Epoch milliseconds in integer arithmetic (stamps.from_epoch_ms: Kimi Code, Cline, OpenCode)
equal the general formatter (stamps.from_epoch) wherever both apply."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agtaild.adapters.kit.stamps import from_epoch, from_epoch_ms


@given(st.integers(0, 4_000_000_000_000))
def test_millis_like_from_epoch(value: int) -> None:
    assert from_epoch_ms(value) == from_epoch(value, unit="ms")


def test_edges() -> None:
    assert from_epoch_ms(True) is None and from_epoch_ms("1") is None and from_epoch_ms(None) is None
    assert from_epoch_ms(253402300799999) == "9999-12-31T23:59:59.999Z"  # exact (the float path: .998)
    assert from_epoch_ms(253402300800000) is None and from_epoch(253402300800000, unit="ms") is None
