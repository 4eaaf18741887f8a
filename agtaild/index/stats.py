"""Tokens and cost by day, model, agent, project or session (tool and hour: agtaild.index.activity).

Stats count each API response once across every file of an agent (``usage.counted``: resume
replays and imported copies repeat responses), as ccusage does. Tokens are summed in SQL per
(key, model, long-context flag) and priced in Python, so pricing is always the current table
(and a user's override applies without re-indexing). Any tokens of a model without a price
make that row's cost — and the totals' — null: unknown, not zero.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from agtaild.index.params import TimeBound
from agtaild.index.queries import add_usage, empty_usage
from agtaild.pricing import PriceTable

#: Groupings; "tool" and "hour" count events (agtaild.index.activity).
BY = ("day", "model", "agent", "project", "session", "tool", "hour")
UNKNOWN = "(unknown)"

_KEY_SQL = {
    "day": "u.day",
    "model": "u.model",
    "agent": "u.agent",
    "project": "s.project",
    "session": "s.agent || ':' || s.sid",
}


def stats(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    by: str,
    agent: str | None = None,
    project: str | None = None,
    since: TimeBound | None = None,
    until: TimeBound | None = None,
    imported: bool | None = None,
    collection: str | None = None,
) -> dict[str, Any]:
    # The rollup (counted usage per session, day and model) answers everything but bounds
    # finer than a day, which need the individual responses.
    precise = (since is not None and since.day is None) or (until is not None and until.day is None)
    table = "usage u" if precise else "usage_rollup u"
    needs_session = by in ("project", "session") or project or imported is not None or collection
    where = ["u.counted = 1"] if precise else ["1"]
    args: list[Any] = []
    if agent:
        where.append("u.agent = ?")
        args.append(agent)
    if project:
        where.append("s.project = ?")
        args.append(project)
    if imported is not None:
        where.append(f"s.kind {'=' if imported else '!='} 'imported'")
    if collection:
        where.append("s.collection = ?")
        args.append(collection)
    # A date bound compares calendar days (exact in the local zone); a time bound, instants.
    if since is not None:
        where.append("u.day >= ?" if since.day else "u.epoch >= ?")
        args.append(since.day or since.epoch)
    if until is not None:
        where.append("u.day <= ?" if until.day else "u.epoch < ?")
        args.append(until.day or until.epoch)
    join = " JOIN sessions s ON s.id = u.session_id" if needs_session else ""
    extra = ", s.title" if by == "session" else ", u.agent" if by == "day" else ", NULL"
    # By day, also by agent: each day row says how its tokens split by model and by agent.
    split = ", u.agent" if by == "day" else ""
    sql = (
        f"SELECT {_KEY_SQL[by]} AS k, u.model, u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read),"
        f" sum(u.cache_write), sum(u.reasoning){extra} FROM {table}{join} WHERE {' AND '.join(where)}"
        f" GROUP BY k, u.model, u.long_ctx{split}"
    )
    return assemble(db.execute(sql, args), by, pricing)


def assemble(groups: Iterable[Sequence[Any]], by: str, pricing: PriceTable) -> dict[str, Any]:
    """The stats document from summed token groups: ``(key, model, long_ctx, input, output,
    cache_read, cache_write, reasoning, extra)`` where ``extra`` is the session's title
    (``by=session``), the agent (``by=day``: each day row says how its tokens split by model
    and by agent) or nothing. Shared by the local index and the team database."""
    rows: dict[str, dict[str, Any]] = {}
    models: dict[str, set[str]] = {}
    titles: dict[str, str | None] = {}
    splits: dict[str, dict[str, dict[str, int]]] = {}
    totals = empty_usage()
    for key, model, long_ctx, inp, outp, cr, cw, rs, title in groups:
        inp, outp, cr, cw, rs = int(inp), int(outp), int(cr), int(cw), int(rs)
        k = key if key else UNKNOWN
        cost = pricing.cost(model, inp, outp, cr, cw, bool(long_ctx))
        add_usage(rows.setdefault(k, empty_usage()), inp, outp, cr, cw, rs, cost)
        add_usage(totals, inp, outp, cr, cw, rs, cost)
        models.setdefault(k, set()).add(model or UNKNOWN)
        if by == "session":
            titles[k] = title
        elif by == "day":
            tokens = inp + outp + cr + cw
            part = splits.setdefault(k, {"model": {}, "agent": {}})
            part["model"][model or UNKNOWN] = part["model"].get(model or UNKNOWN, 0) + tokens
            part["agent"][title or UNKNOWN] = part["agent"].get(title or UNKNOWN, 0) + tokens
    out = []
    for k, usage in rows.items():
        row: dict[str, Any] = {"key": k, **usage}
        if by != "model":
            row["models"] = sorted(models[k])
        if by == "session":
            row["title"] = titles.get(k)
        if by == "day":
            row["split"] = splits.get(k, {"model": {}, "agent": {}})
        out.append(row)
    if by == "day":
        out.sort(key=lambda r: r["key"])
    else:
        out.sort(key=lambda r: (-r["total_tokens"], r["key"]))
    return {"totals": totals, "rows": out}
