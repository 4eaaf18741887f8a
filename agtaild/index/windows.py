"""Limit windows and burn rates, computed from usage times alone (no database, no clock).

Claude Code records no limits, so its 5-hour billing blocks are computed from the times of
its responses with the rules ccusage's ``blocks`` uses (checked against ccusage itself on the
corpora, tests/test_live_usage_ccusage.py):

* responses are taken in time order; the first opens a block at its time floored to the UTC
  hour; the block ends 5 hours after it opened;
* a response more than 5 hours after its block opened, or more than 5 hours after the
  block's previous response, closes the block and opens the next one (floored again);
* a block is active while the last response is less than 5 hours ago and its end is ahead.

Burn rates are the tokens (and cost) of the responses inside a fixed window ending now,
divided by the window's length: what is being spent at this moment, not an average since
the block opened. Times ahead of ``now`` (a clock that jumped back, or a machine whose clock
is behind the agent's) are left out of every rate and counted as ``ahead``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

HOUR = 3600.0
BLOCK_SECONDS = 5 * HOUR
#: The burn windows `top` and the API show, in minutes.
BURN_MINUTES = (5, 30)


class Entry(NamedTuple):
    """One counted response: when, its tokens (all four kinds), its input + output alone
    (ccusage's block token count), its cost (None: the model has no price)."""

    epoch: float
    tokens: int
    io_tokens: int
    cost: float | None
    session: int = 0


@dataclass
class Block:
    """A 5-hour billing block: ``start`` (floored to the hour) to ``end``; ``first`` and
    ``last`` are the times of its first and last response."""

    start: float
    end: float
    entries: list[Entry] = field(default_factory=list)

    @property
    def first(self) -> float:
        return self.entries[0].epoch

    @property
    def last(self) -> float:
        return self.entries[-1].epoch

    def active(self, now: float, length: float = BLOCK_SECONDS) -> bool:
        return now - self.last < length and now < self.end

    def tokens(self) -> int:
        return sum(e.tokens for e in self.entries)

    def io_tokens(self) -> int:
        return sum(e.io_tokens for e in self.entries)


def floor_hour(epoch: float) -> float:
    """The start of the UTC hour holding ``epoch`` (epoch seconds count from a UTC midnight)."""
    return epoch - epoch % HOUR


def billing_blocks(entries: Iterable[Entry], length: float = BLOCK_SECONDS) -> list[Block]:
    """The blocks of these responses, oldest first (gaps between blocks are not blocks)."""
    blocks: list[Block] = []
    current: Block | None = None
    for entry in sorted(entries, key=lambda e: e.epoch):
        if current is not None and (entry.epoch - current.start > length or entry.epoch - current.last > length):
            current = None
        if current is None:
            start = floor_hour(entry.epoch)
            current = Block(start, start + length)
            blocks.append(current)
        current.entries.append(entry)
    return blocks


def chain_starts_at(first: float, previous: float | None, length: float = BLOCK_SECONDS) -> bool:
    """Whether the blocks of responses from ``first`` on are the same as those of the whole
    history: true when the response before it (``previous``) is more than a block length
    earlier, or there is none (a gap always opens a new block)."""
    return previous is None or first - previous > length


@dataclass
class Rate:
    """Tokens per minute and dollars per hour over a window; ``usd_per_hour`` is None when
    some of the window's tokens are of a model without a price (``usd_per_hour_known`` is
    then the priced part's rate)."""

    minutes: int
    tokens: int = 0
    cost: float | None = 0.0
    known_cost: float = 0.0
    responses: int = 0

    @property
    def tokens_per_minute(self) -> float:
        return self.tokens / self.minutes

    def as_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "minutes": self.minutes,
            "tokens": self.tokens,
            "responses": self.responses,
            "tokens_per_minute": round(self.tokens_per_minute, 1),
            "usd_per_hour": None if self.cost is None else round(self.cost * 60 / self.minutes, 4),
        }
        if self.cost is None:
            doc["usd_per_hour_known"] = round(self.known_cost * 60 / self.minutes, 4)
        return doc


def burn(entries: Iterable[Entry], now: float, minutes: int) -> Rate:
    """The rate of the responses in (now − minutes, now]."""
    rate = Rate(minutes)
    since = now - minutes * 60
    for e in entries:
        if since < e.epoch <= now:
            rate.tokens += e.tokens
            rate.responses += 1
            if e.cost is None:
                if e.tokens:
                    rate.cost = None
            else:
                rate.known_cost += e.cost
                if rate.cost is not None:
                    rate.cost += e.cost
    return rate


def rates(entries: Sequence[Entry], now: float) -> dict[str, dict[str, object]]:
    """The burn over every window of BURN_MINUTES, keyed ``"5m"``, ``"30m"``."""
    return {f"{m}m": burn(entries, now, m).as_json() for m in BURN_MINUTES}


def ahead(entries: Iterable[Entry], now: float) -> int:
    """How many responses are dated after ``now`` (left out of the rates)."""
    return sum(1 for e in entries if e.epoch > now)


def projection(used_tokens: int, used_cost: float | None, rate: Rate, now: float, end: float) -> dict[str, object]:
    """Where a window ends up if the current rate holds until ``end``: a projection, and
    labelled so (the rate can change any minute)."""
    remaining = max(0.0, end - now) / 60
    tokens = used_tokens + rate.tokens_per_minute * remaining
    cost = None if used_cost is None or rate.cost is None else used_cost + rate.cost / rate.minutes * remaining
    return {
        "label": "projection",
        "from_rate": f"{rate.minutes}m",
        "remaining_minutes": round(remaining),
        "total_tokens": round(tokens),
        "cost_usd": None if cost is None else round(cost, 4),
    }


def per_minute(entries: Iterable[Entry], now: float, minutes: int = 30) -> list[int]:
    """Tokens per minute over the last ``minutes`` minutes, oldest first (the last item is the
    minute ending now): the series of a session's small chart."""
    out = [0] * minutes
    for e in entries:
        ago = now - e.epoch
        if 0 <= ago < minutes * 60:
            out[minutes - 1 - int(ago // 60)] += e.tokens
    return out
