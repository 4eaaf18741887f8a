"""Codex token usage: which rows count, and how they map to the Anthropic convention.

Where usage is written:

* ``event_msg/token_count`` (since 2025-09): ``info`` is ``{total_token_usage,
  last_token_usage, model_context_window}`` or ``null`` (a rate-limit-only update).
  ``total`` is the thread's running sum, ``last`` the response that just finished.
* ``token_usage_record`` (0.17x): one per response (``response_id``), with ``usage`` (the
  response), ``thread_token_usage`` (the running sum) and the writer's ``thread_id``. In the
  real 0.171.0 files every record is followed by a token_count carrying the same totals;
  when Codex is killed mid-tool the record is the only trace of the last response.

What counts, decided from the data:

* A row whose running total equals the previous row's total is the same response written
  again: a re-emitted token_count, or the token_count that follows its token_usage_record.
  It counts nothing. (Summing ``last`` blindly over-counts: CodexBar's real fork oracle has a
  row with ``last`` = 225 513 while the total does not move.)
* Otherwise the row counts its own response usage (``last`` / ``usage``). The delta of the
  totals is used only when ``last`` is missing. ``last`` is preferred because the first row
  of a file can carry a total that includes history not in this file (the agent-history
  fixture: total 132 000, last 3 200) and because ccusage counts ``last`` the same way.
* Rows copied from a parent thread (forks and spawned sub-agents start with a copy of the
  parent's items, token counts included, with new timestamps) only move the baseline:
  Codex seeds the child's running total from the parent, so they are the parent's usage.

Normalized like the rest of agtail (and ccusage): input = input − cached − cache-write,
cache read = cached input, output includes reasoning, reasoning = reasoning output,
total = input + output + cache read + cache write (= Codex's own input + output).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.codex.text import as_dict, as_int
from agtaild.model import Usage

#: No response uses a trillion tokens; larger counts are clamped so running sums stay in int64.
TOKEN_LIMIT = 2**40
# Index positions in a counts list.
INPUT, CACHED, CACHE_WRITE, OUTPUT, REASONING, TOTAL = range(6)


class _TokenUsage(msgspec.Struct):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int | None = None


def token_counts(obj: Any) -> list[int] | None:
    """Codex's TokenUsage object as ``[input, cached, cache_write, output, reasoning, total]``."""
    if type(obj) is not dict:
        return None
    try:
        u = msgspec.convert(obj, _TokenUsage)
    except msgspec.ValidationError:  # a count that is not an integer: count it as 0
        u = _TokenUsage(
            input_tokens=as_int(obj.get("input_tokens")),
            cached_input_tokens=as_int(obj.get("cached_input_tokens")),
            cache_write_input_tokens=as_int(obj.get("cache_write_input_tokens")),
            output_tokens=as_int(obj.get("output_tokens")),
            reasoning_output_tokens=as_int(obj.get("reasoning_output_tokens")),
            total_tokens=as_int(obj["total_tokens"]) if "total_tokens" in obj else None,
        )
    total = u.input_tokens + u.output_tokens if u.total_tokens is None else u.total_tokens
    counts = [
        u.input_tokens,
        u.cached_input_tokens,
        u.cache_write_input_tokens,
        u.output_tokens,
        u.reasoning_output_tokens,
        total,
    ]
    if max(counts) > TOKEN_LIMIT or min(counts) < -TOKEN_LIMIT:  # nonsense: keep sums storable
        counts = [max(-TOKEN_LIMIT, min(c, TOKEN_LIMIT)) for c in counts]
    return counts


def difference(after: list[int], before: list[int] | None) -> list[int]:
    """``after - before``; a total that went down means the counter restarted: ``after``."""
    if before is None:
        return list(after)
    delta = [a - b for a, b in zip(after, before, strict=True)]
    return list(after) if any(d < 0 for d in delta) else delta


def to_usage(counts: list[int]) -> Usage:
    raw_input = max(counts[INPUT], 0)
    cached = min(max(counts[CACHED], 0), raw_input)
    cache_write = min(max(counts[CACHE_WRITE], 0), raw_input - cached)
    usage = Usage(
        input_tokens=raw_input - cached - cache_write,
        output_tokens=max(counts[OUTPUT], 0),
        cache_read_tokens=cached,
        cache_write_tokens=cache_write,
        reasoning_tokens=max(counts[REASONING], 0),
        cost_usd=None,
    )
    return usage.fix_total()


def token_count_rows(payload: dict[str, Any]) -> tuple[list[int] | None, list[int] | None, str | None]:
    """(running total, response usage, model) of a token_count payload (info may be null)."""
    info = as_dict(payload.get("info"))
    model = info.get("model") if isinstance(info.get("model"), str) else None
    return token_counts(info.get("total_token_usage")), token_counts(info.get("last_token_usage")), model


def usage_record_rows(payload: dict[str, Any]) -> tuple[list[int] | None, list[int] | None, str | None]:
    """(running total, response usage, model) of a 0.17x token_usage_record payload."""
    model = payload.get("model") if isinstance(payload.get("model"), str) else None
    return token_counts(payload.get("thread_token_usage")), token_counts(payload.get("usage")), model


def counted_usage(
    total: list[int] | None,
    last: list[int] | None,
    prev_total: list[int] | None,
    *,
    copied: bool,
) -> list[int] | None:
    """The counts this row adds to the session, or None (see the module docstring)."""
    if total is not None and prev_total is not None and total == prev_total:
        return None
    if copied:
        return None
    if last is not None:
        counts = last
    elif total is not None:
        counts = difference(total, prev_total)
    else:
        return None
    if not any(counts[i] for i in (INPUT, CACHED, CACHE_WRITE, OUTPUT, REASONING)):
        return None
    return counts
