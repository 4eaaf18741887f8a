"""Tokens and cost by day, model, agent, project or session (tool and hour: agtaild.index.activity).

Stats count each API response once across every file of an agent (``usage.counted``: resume
replays and imported copies repeat responses), as ccusage does. Tokens are summed in SQL per
(key, model, long-context flag) and priced in Python, so pricing is always the current table
(and a user's override applies without re-indexing). Any tokens of a model without a price
make that row's cost — and the totals' — null: unknown, not zero. By session, one row per
session: agtaild.index.stats_session builds it from the rollup with the same result, faster.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from agtaild.index import place_answers
from agtaild.index.params import TimeBound
from agtaild.index.places import ready
from agtaild.index.queries import usage_doc
from agtaild.index.selection import Picked, id_conditions
from agtaild.index.stats_day import by_day
from agtaild.index.stats_session import by_session
from agtaild.pricing import PriceTable

#: Groupings; "tool", "tool-category" and "hour" count events (agtaild.index.activity).
BY = ("day", "model", "agent", "project", "session", "tool", "tool-category", "hour")
#: The groupings that count events, not tokens.
ACTIVITY_BY = ("tool", "tool-category", "hour")
UNKNOWN = "(unknown)"

_KEY_SQL = {
    "day": "u.day",
    "model": "u.model",
    "agent": "u.agent",
    "project": "s.project",
    "session": "s.agent || ':' || s.sid",
}
#: Groupings the per-day tables answer (schema m006_stats) when no filter needs the session.
_DAILY_BY = ("day", "model", "agent")


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
    limit: int | None = None,
    picked: Picked = (None, None),
    recount: bool = False,
) -> dict[str, Any]:
    """``limit``: only the first rows (by tokens, largest first; by day, the earliest days);
    the totals still count everything in scope.

    Usage whose record has no time is dated by its session's (agtaild.index.prepare); what has
    no time at all — nor has its session — is on no day, so a date bound leaves it out: the
    answer then says how much, as ``undated`` (a Usage, present only when there is some).

    ``picked``: (only these sessions, never these), what the user's own state selects (hidden
    sessions are left out by default); the per-day tables do not know sessions, so a selection
    is answered from the per-session rollup.

    By project, agent, model (with a session filter) and session (top N), the sums per place
    and per session answer when they can (agtaild.index.place_answers says when); ``recount``:
    from the rollup and the sessions anyway (the check)."""
    doc = _stats(
        db,
        pricing,
        by=by,
        agent=agent,
        project=project,
        since=since,
        until=until,
        imported=imported,
        collection=collection,
        limit=limit,
        picked=picked,
        recount=recount,
    )
    if since is not None or until is not None:
        undated = undated_usage(
            db, pricing, agent=agent, project=project, imported=imported, collection=collection, picked=picked
        )
        if undated is not None:
            doc["undated"] = undated
    return doc


def undated_usage(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    agent: str | None = None,
    project: str | None = None,
    imported: bool | None = None,
    collection: str | None = None,
    picked: Picked = (None, None),
) -> dict[str, Any] | None:
    """The counted usage in scope that has no time at all (None when there is none)."""
    where, args = id_conditions("u.session_id", *picked)
    where.insert(0, "u.day = ''")
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
    join = " JOIN sessions s ON s.id = u.session_id" if project or imported is not None or collection else ""
    sums = place_answers.SUMS
    rows = db.execute(
        f"SELECT u.model, u.model, u.long_ctx, {sums}, NULL FROM usage_rollup u{join}"
        f" WHERE {' AND '.join(where)} GROUP BY 2, 3",
        args,
    )
    totals: dict[str, Any] = assemble(rows, "model", pricing)["totals"]
    return totals if totals["total_tokens"] else None


def _stats(
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
    limit: int | None = None,
    picked: Picked = (None, None),
    recount: bool = False,
) -> dict[str, Any]:
    placed = not recount and place_answers.served(since=since, until=until, picked=picked) and ready(db)
    if placed and (
        by == "project"
        or (by in ("agent", "model") and (project or imported is not None or collection or picked[1]))
    ):
        where, pargs = place_answers.place_filters(agent, project, imported, collection)
        doc = assemble(place_answers.groups(db, by, where, pargs, picked[1]), by, pricing)
        if by == "agent":
            add_session_counts(doc, place_answers.used_sessions(db, where, pargs, picked[1]))
        if limit is not None:
            del doc["rows"][limit:]
        return doc
    precise = (since is not None and since.day is None) or (until is not None and until.day is None)
    needs_session = by in ("project", "session") or project or imported is not None or collection
    if (
        not recount
        and picked[0] is None
        and picked[1]
        and by in _DAILY_BY
        and not precise
        and not needs_session
    ):
        # Hidden sessions only: the per-day tables minus their own rows.
        days = (since.day if since else None, until.day if until else None)
        groups, counts = place_answers.daily_without(db, by, agent, days, picked[1])
        doc = (by_day(groups, pricing) if by == "day" else None) or assemble(groups, by, pricing)
        if counts is not None:
            add_session_counts(doc, counts)
        if limit is not None:
            del doc["rows"][limit:]
        return doc
    # The rollups (counted usage per day and model; per session, day and model) answer
    # everything but bounds finer than a day, which need the individual responses.
    chosen = picked[0] is not None or bool(picked[1])
    daily = not precise and not needs_session and not chosen and by in _DAILY_BY
    table = "usage u" if precise else "usage_daily u" if daily else "usage_rollup u"
    if daily and by != "day" and since is None and until is None:
        table = "usage_totals u"  # no dates: the sums over all days
    where, args = id_conditions("u.session_id", *picked)
    where.insert(0, "u.counted = 1" if precise else "1")
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
    model = "nullif(u.model, '')" if daily else "u.model"  # usage_daily keeps an unknown model as ''
    extra = ", s.title" if by == "session" else ", u.agent" if by == "day" else ", NULL"
    sums = place_answers.SUMS
    # By day, also by agent: each day row says how its tokens split by model and by agent.
    group = "k, u.model, u.long_ctx" + (", u.agent" if by == "day" else "")
    if daily and by == "day":
        # One usage_daily row is one (day, agent, model, long_ctx) group already: no sort.
        sums = place_answers.COLUMNS
        group = ""
    scope = f"FROM {table}{join} WHERE {' AND '.join(where)}"
    if by == "session":
        # Without a filter on the sessions, the rollup (or the responses) alone: no join.
        session_filter = project or imported is not None or collection or chosen
        own_scope = scope if session_filter else f"FROM {table} WHERE {' AND '.join(where)}"
        if limit is not None:
            # The totals come from the per-day tables (as by model) when nothing needs the sessions.
            totals = (
                None
                if session_filter
                else _stats(db, pricing, by="model", agent=agent, since=since, until=until)["totals"]
            )
            top = None
            if placed:
                top = place_answers.TopSessions(db, agent, picked[1], project, imported, collection)
                if session_filter:  # by model with the same filters, from the sums per place
                    totals = _stats(
                        db, pricing, by="model", agent=agent, project=project, imported=imported,
                        collection=collection, picked=picked,
                    )["totals"]  # fmt: skip
            return _top_sessions(db, pricing, scope, own_scope, args, limit, totals, top)
        # The rollup's rows (one per session, day and model) are few: summed in Python, which
        # costs less than a GROUP BY's sort; the responses (precise bounds) are grouped here.
        cols = place_answers.COLUMNS
        rows = (
            f"SELECT u.session_id, u.model, u.long_ctx, {sums} {own_scope} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
            if precise
            else f"SELECT u.session_id, u.model, u.long_ctx, {cols} {own_scope} ORDER BY 1, 2, 3"
        )
        fast = by_session(db, pricing, rows, args)
        if fast is not None:
            return fast
    sql = f"SELECT {_KEY_SQL[by]} AS k, {model}, u.long_ctx, {sums}{extra} {scope}"
    sql += f" GROUP BY {group}" if group else ""
    if by == "day" and not recount:
        # usage_daily's rows in its key order, or the groups in the GROUP BY's: a day's rows
        # together, summed in one loop (else, should the order differ, assembled as below).
        found = by_day(db.execute(sql, args).fetchall(), pricing)
        if found is not None:
            if limit is not None:
                del found["rows"][limit:]
            return found
    doc = assemble(db.execute(sql, args), by, pricing)
    if by == "agent":
        # Sessions with counted usage in the scope: the rollup (per session and day) answers
        # whole days; the responses themselves a finer bound.
        if placed:
            counts = place_answers.used_sessions(db, *place_answers.place_filters(agent), picked[1])
        else:
            per_session = "usage u" if precise else "usage_rollup u"
            counts = dict(
                db.execute(
                    f"SELECT u.agent, count(DISTINCT u.session_id) FROM {per_session}{join}"
                    f" WHERE {' AND '.join(where)} GROUP BY u.agent",
                    args,
                ).fetchall()
            )
        add_session_counts(doc, counts)
    if limit is not None:
        del doc["rows"][limit:]
    return doc


def add_session_counts(doc: dict[str, Any], counts: dict[str, int]) -> None:
    """``sessions`` on each ``--by agent`` row (``counts``: agent → sessions) and the totals."""
    for row in doc["rows"]:
        row["sessions"] = int(counts.get(row["key"], 0))
    doc["totals"]["sessions"] = sum(int(n) for n in counts.values())


def _top_sessions(
    db: sqlite3.Connection,
    pricing: PriceTable,
    scope: str,
    rank_scope: str,
    args: list[Any],
    limit: int,
    totals: dict[str, Any] | None,
    top: place_answers.TopSessions | None = None,
) -> dict[str, Any]:
    """The ``limit`` sessions with the most tokens: ranked in SQL (on ``rank_scope``, which
    joins the sessions only when a filter needs them), so Python prices and builds only the
    rows returned. Every session tied with the last one is fetched, and ``assemble`` sorts
    them by key, as the whole answer does. ``totals``: the scope's totals, when the caller has
    them (else summed here per model: the same tokens; a cost summed in another order may
    differ in its last digits)."""
    tokens = "sum(u.input + u.output + u.cache_read + u.cache_write)"
    sums = place_answers.SUMS
    # One more than asked: a tie across the cut means every session tied with the last one
    # (and a long list is not passed as parameters).
    ranked = (
        top.ranked(limit + 1)
        if top is not None
        else db.execute(
            f"SELECT u.session_id, {tokens} AS t {rank_scope} GROUP BY u.session_id ORDER BY t DESC LIMIT ?",
            [*args, limit + 1],
        ).fetchall()
    )
    if not ranked:
        doc = assemble((), "session", pricing)
    else:
        if limit > 500 or (len(ranked) > limit and ranked[limit][1] == ranked[limit - 1][1]):
            last = ranked[:limit][-1][1]  # the last one kept
            if top is not None:
                chosen, chosen_args = top.at_least(last)
            else:
                chosen = f"SELECT u.session_id {rank_scope} GROUP BY u.session_id HAVING {tokens} >= ?"
                chosen_args = [*args, last]
        else:
            ids = [sid for sid, _ in ranked[:limit]]
            chosen, chosen_args = ",".join("?" * len(ids)), ids
        rows = db.execute(
            f"SELECT {_KEY_SQL['session']} AS k, u.model, u.long_ctx, {sums}, s.title {scope}"
            f" AND u.session_id IN ({chosen}) GROUP BY k, u.model, u.long_ctx",
            [*args, *chosen_args],
        )
        doc = assemble(rows, "session", pricing)
        del doc["rows"][limit:]
    if totals is None:
        per_model = db.execute(
            f"SELECT u.model, u.model, u.long_ctx, {sums}, NULL {scope} GROUP BY 2, 3", args
        )
        totals = assemble(per_model, "model", pricing)["totals"]
    doc["totals"] = totals
    return doc


def assemble(groups: Iterable[Sequence[Any]], by: str, pricing: PriceTable) -> dict[str, Any]:
    """The stats document from summed token groups: ``(key, model, long_ctx, input, output,
    cache_read, cache_write, reasoning, extra)`` where ``extra`` is the session's title
    (``by=session``), the agent (``by=day``: each day row says how its tokens split by model
    and by agent) or nothing. Shared by the local index and the team database.

    Sums are kept in plain lists while grouping (a by=session answer has a row per session,
    so the per-group work is most of its time); costs are added in the order the groups
    come, for the rows and the totals alike."""
    # key -> [input, output, cache_read, cache_write, reasoning, cost, known cost, unpriced tokens]
    acc: dict[str, list[Any]] = {}
    models: dict[str, set[str]] = {}
    unpriced: dict[str, set[str | None]] = {}
    titles: dict[str, str | None] = {}
    splits: dict[str, dict[str, dict[str, int]]] = {}
    total_cost: float | None = 0.0
    total_known = 0.0  # the priced part, in the same order (the cost when all is priced)
    total_unpriced = 0
    cost_of = pricing.cost
    for key, model, long_ctx, inp, outp, cr, cw, rs, title in groups:
        inp, outp, cr, cw, rs = int(inp), int(outp), int(cr), int(cw), int(rs)
        k = key if key else UNKNOWN
        cost = cost_of(model, inp, outp, cr, cw, bool(long_ctx))
        a = acc.get(k)
        if a is None:
            a = acc[k] = [inp, outp, cr, cw, rs, cost, 0.0, 0]
            models[k] = {model or UNKNOWN}
        else:
            a[0] += inp
            a[1] += outp
            a[2] += cr
            a[3] += cw
            a[4] += rs
            a[5] = None if cost is None or a[5] is None else a[5] + cost
            models[k].add(model or UNKNOWN)
        if cost is None:
            a[7] += inp + outp + cr + cw
            unpriced.setdefault(k, set()).add(model)
            total_unpriced += inp + outp + cr + cw
        else:
            a[6] += cost
            total_known += cost
        total_cost = None if cost is None or total_cost is None else total_cost + cost
        if by == "session":
            titles[k] = title
        elif by == "day":
            tokens = inp + outp + cr + cw
            part = splits.get(k)
            if part is None:
                part = splits[k] = {"model": {}, "agent": {}}
            m, agent = model or UNKNOWN, title or UNKNOWN
            part["model"][m] = part["model"].get(m, 0) + tokens
            part["agent"][agent] = part["agent"].get(agent, 0) + tokens
    totals = [0, 0, 0, 0, 0]
    out = []
    for k, (inp, outp, cr, cw, rs, cost, known, dark) in acc.items():
        totals[0] += inp
        totals[1] += outp
        totals[2] += cr
        totals[3] += cw
        totals[4] += rs
        row: dict[str, Any] = {
            "key": k,
            **usage_doc(inp, outp, cr, cw, rs, cost, (known, dark, unpriced.get(k, ()))),
        }
        if by != "model":
            row["models"] = sorted(models[k])
        if by == "session":
            row["title"] = titles.get(k)
        if by == "day":
            row["split"] = splits[k]
        out.append(row)
    if by == "day":
        out.sort(key=lambda r: r["key"])
    else:
        out.sort(key=lambda r: (-r["total_tokens"], r["key"]))
    every_unpriced = set().union(*unpriced.values()) if unpriced else set()
    return {
        "totals": usage_doc(
            totals[0],
            totals[1],
            totals[2],
            totals[3],
            totals[4],
            total_cost,
            (total_known, total_unpriced, every_unpriced),
        ),
        "rows": out,
    }
