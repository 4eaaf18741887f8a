"""Billing blocks, burn rates and projections on synthetic responses with known times."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agtaild.index.windows import (
    BLOCK_SECONDS,
    Entry,
    ahead,
    billing_blocks,
    burn,
    chain_starts_at,
    floor_hour,
    per_minute,
    projection,
    rates,
)

H = 3600.0


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def entry(when: str | float, tokens: int = 100, cost: float | None = 0.01, io: int | None = None) -> Entry:
    epoch = at(when) if isinstance(when, str) else when
    return Entry(epoch, tokens, tokens if io is None else io, cost)


def starts(blocks: list) -> list[str]:
    return [datetime.fromtimestamp(b.start, UTC).strftime("%m-%d %H:%M") for b in blocks]


def test_a_block_opens_at_the_utc_hour_and_lasts_five_hours() -> None:
    blocks = billing_blocks([entry("2026-03-01T10:55:30"), entry("2026-03-01T12:00:00"), entry("2026-03-01T15:00:00")])
    assert starts(blocks) == ["03-01 10:00"]
    assert blocks[0].end - blocks[0].start == BLOCK_SECONDS
    assert len(blocks[0].entries) == 3  # exactly 5 hours after the opening: still inside
    assert floor_hour(at("2026-03-01T10:59:59")) == at("2026-03-01T10:00:00")


def test_a_response_after_the_block_end_opens_the_next_block_floored_again() -> None:
    blocks = billing_blocks([entry("2026-03-01T10:20:00"), entry("2026-03-01T14:50:00"), entry("2026-03-01T15:00:01")])
    assert starts(blocks) == ["03-01 10:00", "03-01 15:00"]
    assert [len(b.entries) for b in blocks] == [2, 1]


def test_continuous_work_chains_blocks_and_a_long_gap_restarts_them() -> None:
    # A response every 50 minutes from 10:20 to 22:50, then nothing for 6 hours.
    times = [at("2026-03-01T10:20:00") + i * 50 * 60 for i in range(16)]
    times.append(at("2026-03-02T05:10:00"))
    blocks = billing_blocks([entry(t) for t in reversed(times)])  # the order given does not matter
    assert starts(blocks) == ["03-01 10:00", "03-01 15:00", "03-01 20:00", "03-02 05:00"]
    assert sum(len(b.entries) for b in blocks) == 17


def test_a_gap_longer_than_a_block_closes_the_block_even_inside_its_hours() -> None:
    # The second response is 5h01m after the first, both would fit no block of the first.
    blocks = billing_blocks([entry("2026-03-01T10:00:00"), entry("2026-03-01T15:01:00")])
    assert starts(blocks) == ["03-01 10:00", "03-01 15:00"]
    assert chain_starts_at(at("2026-03-01T15:01:00"), at("2026-03-01T10:00:00"))
    assert not chain_starts_at(at("2026-03-01T15:01:00"), at("2026-03-01T11:00:00"))
    assert chain_starts_at(at("2026-03-01T15:01:00"), None)


def test_a_block_is_active_while_its_last_response_is_recent_and_its_end_ahead() -> None:
    (block,) = billing_blocks([entry("2026-03-01T10:30:00"), entry("2026-03-01T11:00:00")])
    assert block.active(at("2026-03-01T14:59:00"))
    assert not block.active(at("2026-03-01T15:00:00"))  # the end passed
    (early,) = billing_blocks([entry("2026-03-01T10:05:00")])
    assert early.active(at("2026-03-01T14:00:00"))
    assert not early.active(at("2026-03-01T16:00:00"))


def test_burn_is_the_window_s_tokens_over_its_length() -> None:
    now = at("2026-03-01T12:00:00")
    entries = [
        entry(now - 60, 100, 0.01),
        entry(now - 10 * 60, 1000, 0.10),
        entry(now - 40 * 60, 5000, 1.00),  # outside both windows
        entry(now - 5 * 60, 7, 0.0),  # exactly 5 minutes ago: outside the 5-minute window
    ]
    five = burn(entries, now, 5)
    assert (five.tokens, five.responses, five.tokens_per_minute) == (100, 1, 20.0)
    assert five.as_json()["usd_per_hour"] == pytest.approx(0.12)
    thirty = rates(entries, now)["30m"]
    assert thirty["tokens"] == 1107
    assert thirty["tokens_per_minute"] == pytest.approx(36.9)
    assert thirty["usd_per_hour"] == pytest.approx(0.22)


def test_unpriced_tokens_make_the_dollar_rate_unknown_not_lower() -> None:
    now = at("2026-03-01T12:00:00")
    doc = burn([entry(now - 60, 100, 0.05), entry(now - 120, 300, None)], now, 5).as_json()
    assert doc["usd_per_hour"] is None
    assert doc["usd_per_hour_known"] == pytest.approx(0.6)
    assert doc["tokens"] == 400
    # A response of no tokens with no price changes nothing.
    assert burn([entry(now - 60, 0, None)], now, 5).as_json()["usd_per_hour"] == 0.0


def test_times_ahead_of_the_clock_are_left_out_and_counted() -> None:
    now = at("2026-03-01T12:00:00")
    entries = [entry(now + 3 * H, 999), entry(now - 30, 10)]
    assert burn(entries, now, 5).tokens == 10
    assert ahead(entries, now) == 1
    assert rates([], now)["5m"] == {"minutes": 5, "tokens": 0, "responses": 0, "tokens_per_minute": 0.0, "usd_per_hour": 0.0}


def test_projection_holds_the_rate_until_the_end_and_says_it_is_one() -> None:
    now = at("2026-03-01T12:00:00")
    rate = burn([entry(now - 60, 600, 0.30)], now, 30)  # 20 tokens/min, $0.01/min
    doc = projection(1000, 2.0, rate, now, now + H)
    assert doc == {"label": "projection", "from_rate": "30m", "remaining_minutes": 60, "total_tokens": 2200, "cost_usd": 2.6}
    assert projection(1000, None, rate, now, now + H)["cost_usd"] is None
    assert projection(1000, 2.0, rate, now, now - H)["total_tokens"] == 1000  # the end passed: nothing more


def test_the_per_minute_series_ends_with_the_minute_ending_now() -> None:
    now = at("2026-03-01T12:00:00")
    series = per_minute([entry(now - 10, 5), entry(now - 70, 7), entry(now - 29 * 60 - 1, 3), entry(now - 1800, 99), entry(now + 5, 1)], now)
    assert len(series) == 30
    assert (series[-1], series[-2], series[0]) == (5, 7, 3) and sum(series) == 15
