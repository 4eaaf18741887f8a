"""``stats --by day`` from ``usage_daily`` in one loop: the same document as the generic
``assemble`` (agtaild.index.stats), byte for byte, at a fraction of its cost per row.

Over the whole history the answer has a row per day (~12,000 days on the 10 GB bench
corpus, ~4 table rows each), so the work per table row is the answer's time. The rows come
in the table's key order (day, agent, model, long-context flag): each day's rows are
consecutive, summed in local variables; a group's rates are looked up once per (model, flag);
the costs are added in the order the rows come, as the generic path adds them; the splits by
model and by agent keep their keys in the order they first appear. tests/test_place_sums.py
compares the two answers (``recount=True`` takes the generic path).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agtaild.index.queries import usage_doc
from agtaild.pricing import PriceTable

UNKNOWN = "(unknown)"
_UNSEEN: Any = object()


def by_day(rows: Sequence[Sequence[Any]], pricing: PriceTable) -> dict[str, Any] | None:
    """``rows``: (day, model, long_ctx, input, output, cache_read, cache_write, reasoning,
    agent) in increasing day order; None when they are not (the caller assembles them)."""
    rates_base: dict[str | None, tuple[float, float, float, float] | None] = {}
    rates_long: dict[str | None, tuple[float, float, float, float] | None] = {}
    out: list[dict[str, Any]] = []
    ti = to = tcr = tcw = trs = 0
    total_cost: float | None = 0.0
    total_known = 0.0
    total_unpriced = 0
    every_unpriced: set[str | None] = set()
    day: Any = None
    di = do = dcr = dcw = drs = ddark = 0
    dcost: float | None = 0.0
    dknown = 0.0
    dmodels: set[str] = set()
    dunpriced: set[str | None] = set()
    by_model: dict[str, int] = {}
    by_agent: dict[str, int] = {}
    for d, model, long_ctx, inp, outp, cr, cw, rs, agent in rows:
        tokens = inp + outp + cr + cw  # the table's sums are integers, never negative
        r = (rates_long if long_ctx else rates_base).get(model, _UNSEEN)
        if r is _UNSEEN:
            r = (rates_long if long_ctx else rates_base)[model] = _rates(pricing, model, long_ctx)
        if not tokens:
            cost: float | None = 0.0
        elif r is None:
            cost = None
        else:
            cost = (inp * r[0] + outp * r[1] + cr * r[2] + cw * r[3]) / 1_000_000
        if d != day:
            if dmodels:
                out.append(
                    _row(
                        day,
                        di,
                        do,
                        dcr,
                        dcw,
                        drs,
                        dcost,
                        dknown,
                        ddark,
                        dunpriced,
                        dmodels,
                        by_model,
                        by_agent,
                    )
                )
                if d < day:
                    return None  # not in day order
            day = d
            di, do, dcr, dcw, drs, ddark, dknown, dcost = inp, outp, cr, cw, rs, 0, 0.0, cost
            dmodels, dunpriced, by_model, by_agent = set(), set(), {}, {}
        else:
            di += inp
            do += outp
            dcr += cr
            dcw += cw
            drs += rs
            dcost = None if cost is None or dcost is None else dcost + cost
        name = model or UNKNOWN
        dmodels.add(name)
        if cost is None:
            ddark += tokens
            dunpriced.add(model)
            every_unpriced.add(model)
            total_unpriced += tokens
        else:
            dknown += cost
            total_known += cost
        total_cost = None if cost is None or total_cost is None else total_cost + cost
        by_model[name] = by_model.get(name, 0) + tokens
        who = agent or UNKNOWN
        by_agent[who] = by_agent.get(who, 0) + tokens
        ti += inp
        to += outp
        tcr += cr
        tcw += cw
        trs += rs
    if dmodels:
        out.append(
            _row(day, di, do, dcr, dcw, drs, dcost, dknown, ddark, dunpriced, dmodels, by_model, by_agent)
        )
    out.sort(key=_key)
    return {
        "totals": usage_doc(ti, to, tcr, tcw, trs, total_cost, (total_known, total_unpriced, every_unpriced)),
        "rows": out,
    }


def _row(
    day: Any, inp: int, outp: int, cr: int, cw: int, rs: int, cost: float | None, known: float, dark: int,
    unpriced: set[str | None], models: set[str], by_model: dict[str, int], by_agent: dict[str, int],
) -> dict[str, Any]:  # fmt: skip
    row: dict[str, Any] = {
        "key": day or UNKNOWN,
        **usage_doc(inp, outp, cr, cw, rs, cost, (known, dark, unpriced)),
    }
    row["models"] = sorted(models)
    row["split"] = {"model": by_model, "agent": by_agent}
    return row


def _key(row: dict[str, Any]) -> str:
    return str(row["key"])


def _rates(pricing: PriceTable, model: str | None, long_ctx: Any) -> tuple[float, float, float, float] | None:
    price = pricing.lookup(model)
    if price is None:
        return None
    r = price.long_context if long_ctx and price.long_context is not None else price.base
    return (r.input, r.output, r.cache_read, r.cache_write)
