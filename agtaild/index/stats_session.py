"""Stats by session, built straight from per-session token groups (issue #13, figure 5).

A by=session answer has a row per session, so the generic ``stats.assemble`` (a dict and a
set per key, a price lookup per group, a sort with a Python key, after a SQL join and a sort
on the built string ``agent:sid`` for every group) spent most of the request on bookkeeping.
Here the rollup is read by session row id, in (session, model) order straight from its
covering index (schema m008_statsession), one loop sums it per group and per session in local
variables, and the session keys and titles are read once per session. The answer is the
generic one byte for byte (tests/test_stats_session.py compares them): the same prices, the
same float additions in the same order, the same row order, the fields in ``usage_doc``'s order.

When two session rows share a key (a native session and its imported or archived copy), the
generic path sums their tokens per model before pricing; :func:`by_session` returns None then
and the caller uses it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Sequence
from functools import reduce
from itertools import chain
from operator import add, itemgetter
from typing import Any

from agtaild.index.queries import usage_doc
from agtaild.pricing import PriceTable

UNKNOWN = "(unknown)"
#: Ids per ``IN (…)`` statement when the sessions are read by id.
_CHUNK = 500


def _rates(pricing: PriceTable, model: str | None, long_ctx: int) -> tuple[float, float, float, float] | None:
    """The four rates ``PriceTable.cost`` would apply to this group, or None: no price."""
    price = pricing.lookup(model)
    if price is None:
        return None
    r = price.long_context if long_ctx and price.long_context is not None else price.base
    return (r.input, r.output, r.cache_read, r.cache_write)


def _names(db: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[str, str | None]]:
    """Each session's stats key (``agent:sid``) and title. When most sessions are wanted, one
    scan of the table costs less than looking each up by id."""
    sql = "SELECT id, agent || ':' || sid, title FROM sessions"
    if len(ids) > _CHUNK and 3 * len(ids) > db.execute("SELECT count(*) FROM sessions").fetchone()[0]:
        return {rid: (key, title) for rid, key, title in db.execute(sql)}
    out: dict[int, tuple[str, str | None]] = {}
    for start in range(0, len(ids), _CHUNK):
        part = ids[start : start + _CHUNK]
        rows = db.execute(f"{sql} WHERE id IN ({','.join('?' * len(part))})", part)
        out.update((rid, (key, title)) for rid, key, title in rows)
    return out


def by_session(
    db: sqlite3.Connection, pricing: PriceTable, rows_sql: str, args: Sequence[Any]
) -> dict[str, Any] | None:
    """The stats document by session from ``rows_sql``: rows ``(session row id, model,
    long_ctx, input, output, cache_read, cache_write, reasoning)`` ordered by those first three
    columns. Consecutive rows of one (session, model, long_ctx) are one group — the rollup's
    rows per day are summed here, cheaper than a GROUP BY's sort. None when two session rows
    share a key (see the module docstring), or when a session row of the tokens is gone."""
    # Two statements, one snapshot: an update committed between them must not pair one
    # session's tokens with another row's key (row ids are reused).
    own = not db.in_transaction
    if own:
        db.execute("BEGIN")
    try:
        found = _sessions(db.execute(rows_sql, args), pricing)
        ids = [f[0] for f in found]
        names = _names(db, ids)
    except BaseException:
        if own:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
    if own:
        db.execute("COMMIT")
    try:
        keys = [names[rid][0] for rid in ids]
    except KeyError:
        return None  # tokens of a session row that is gone: the generic path's join drops them
    if len(set(keys)) != len(keys):
        return None
    return _document(found, keys, [names[rid][1] for rid in ids])


#: One session: (row id, input, output, cache_read, cache_write, reasoning, cost, its models,
#: its groups' costs in order, its groups' tokens in order).
Session = tuple[int, int, int, int, int, int, "float | None", list["str | None"], list["float | None"], list[int]]
#: After the last row: ends the last group (a session row id is never None).
_END = (None, None, None, 0, 0, 0, 0, 0)
#: A (model, long_ctx) pair not priced yet in this answer.
_UNSEEN: Any = object()


def _sessions(rows: Iterable[Sequence[Any]], pricing: PriceTable) -> list[Session]:
    """Rows summed per (session, model, long_ctx) group, each group priced, the groups summed
    per session (costs added in group order). One loop with the sums in local variables: this
    is most of a by=session request."""
    rates: dict[tuple[str | None, int], tuple[float, float, float, float] | None] = {}
    found: list[Session] = []
    gsid: Any = None  # the group being summed (None: none yet)
    gmodel: str | None = None
    glc = gi = go = gcr = gcw = grs = 0
    cur: Any = None  # the session being summed
    si = so = scr = scw = srs = 0
    sc: float | None = 0.0
    models: list[str | None] = []
    costs: list[float | None] = []
    sizes: list[int] = []
    for sid, model, long_ctx, inp, outp, cr, cw, rs in chain(rows, (_END,)):
        if sid == gsid and model == gmodel and long_ctx == glc:
            gi += inp
            go += outp
            gcr += cr
            gcw += cw
            grs += rs
            continue
        if gsid is not None:
            # The group is complete: price it (PriceTable.cost, inlined: no tokens cost nothing,
            # tokens without a price cost None) and add it to its session.
            pair = (gmodel, glc)
            r = rates.get(pair, _UNSEEN)
            if r is _UNSEEN:
                r = rates[pair] = _rates(pricing, gmodel, glc)
            if not (gi or go or gcr or gcw):
                c: float | None = 0.0
            elif r is None:
                c = None
            else:
                c = (gi * r[0] + go * r[1] + gcr * r[2] + gcw * r[3]) / 1_000_000
            if gsid == cur:
                si += gi
                so += go
                scr += gcr
                scw += gcw
                srs += grs
                sc = None if c is None or sc is None else sc + c
                models.append(gmodel)
                costs.append(c)
                sizes.append(gi + go + gcr + gcw)
            else:
                if cur is not None:
                    found.append((cur, si, so, scr, scw, srs, sc, models, costs, sizes))
                cur, si, so, scr, scw, srs, sc = gsid, gi, go, gcr, gcw, grs, c
                models, costs, sizes = [gmodel], [c], [gi + go + gcr + gcw]
        gsid, gmodel, glc, gi, go, gcr, gcw, grs = sid, model, long_ctx, inp, outp, cr, cw, rs
    if cur is not None:
        found.append((cur, si, so, scr, scw, srs, sc, models, costs, sizes))
    return found


def _document(found: list[Session], keys: list[str], titles: list[str | None]) -> dict[str, Any]:
    """The rows (largest first, then by key) and the totals, whose cost adds every group's
    cost in key order, as the generic path does."""
    ti = to = tcr = tcw = trs = 0
    shown: dict[tuple[str | None, ...], list[str]] = {}
    rows = []
    for j, (_, inp, outp, cr, cw, rs, cost, models, costs, sizes) in enumerate(found):
        ti += inp
        to += outp
        tcr += cr
        tcw += cw
        trs += rs
        seen = tuple(models)
        names = shown.get(seen)
        if names is None:
            names = shown[seen] = sorted({m or UNKNOWN for m in seen})
        # queries.usage_doc's fields written out in place (a call and a dict merge per row cost
        # ~1 ms of a by=session answer); tests/test_stats_session.py compares every byte of the
        # answer with the generic path's, which uses usage_doc.
        row: dict[str, Any] = {
            "key": keys[j],
            "input_tokens": inp,
            "output_tokens": outp,
            "cache_read_tokens": cr,
            "cache_write_tokens": cw,
            "reasoning_tokens": rs,
            "total_tokens": inp + outp + cr + cw,
            "cost_usd": cost,
        }
        if cost is None:  # the priced part apart (usage_doc), its costs added in group order
            row["cost_known_usd"] = reduce(add, (c for c in costs if c is not None), 0.0)
            row["unpriced_tokens"] = sum(n for n, c in zip(sizes, costs, strict=True) if c is None)
            row["unpriced_models"] = sorted(
                {m or UNKNOWN for m, c in zip(models, costs, strict=True) if c is None}
            )
        row["models"] = names.copy()
        row["title"] = titles[j]
        rows.append(row)
    by_key = sorted(range(len(keys)), key=keys.__getitem__)
    costs = list(chain.from_iterable(found[j][8] for j in by_key))
    # Added one by one from 0.0, left to right (not sum(): since Python 3.12 it compensates).
    total_cost = None if None in costs else reduce(add, costs, 0.0)
    unpriced = None
    if total_cost is None:
        known = reduce(add, (c for c in costs if c is not None), 0.0)
        dark = [(m, n) for f in found for m, c, n in zip(f[7], f[8], f[9], strict=True) if c is None]
        unpriced = (known, sum(n for _, n in dark), {m for m, _ in dark})
    rows = [rows[j] for j in by_key]
    rows.sort(key=itemgetter("total_tokens"), reverse=True)  # stable: ties stay in key order
    return {"totals": usage_doc(ti, to, tcr, tcw, trs, total_cost, unpriced), "rows": rows}
