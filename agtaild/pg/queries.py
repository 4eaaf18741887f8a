"""Reading the team database back as the same JSON documents the local index gives.

The shapes are those of agtaild.index.queries/search/stats (CONTRACT.md), plus ``machine`` on
every session. Usage is summed from the usage rows and priced now, as locally.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

import msgspec

from agtaild.index.params import TimeBound, encode_cursor
from agtaild.index.queries import KIND_PREFERENCE, add_usage, empty_usage, unrecorded_cost
from agtaild.index.refs import chosen
from agtaild.pg.reader_rules import EVENTS_VIEW
from agtaild.pricing import PriceTable

SESSION_COLUMNS = "s.id, s.machine, s.agent, s.sid, s.collection, s.kind, s.doc"

#: The view the current call reads events through (agtaild.pg.readers.create_events_view):
#: set for each call by agtaild.pg.service.TeamService.run; the default is right for anyone.
EVENTS: ContextVar[str] = ContextVar("agtail_events_view", default=EVENTS_VIEW)


class TeamFilter(msgspec.Struct):
    """The session filters of sessions.list / search / stats, plus ``machine``."""

    agent: str | None = None
    machine: str | None = None
    cwd: str | None = None
    project: str | None = None
    since: TimeBound | None = None
    until: TimeBound | None = None
    imported: bool | None = None
    collection: str | None = None
    programmatic: bool | None = None
    archived: bool | None = None
    #: The user's state as filters (agtaild.pg.userstate): hidden sessions are left out unless
    #: asked for, as on the local daemon.
    label: str | None = None
    starred: bool | None = None
    hidden: str = "exclude"

    def sql(self, a: str = "s") -> tuple[list[str], list[Any]]:
        from agtaild.pg.userstate import filter_sql

        where, args = filter_sql(a, label=self.label, starred=self.starred, hidden=self.hidden)
        for column in ("agent", "machine", "project", "collection"):
            value = getattr(self, column)
            if value:
                where.append(f"{a}.{column} = %s")
                args.append(value)
        if self.cwd:
            base = self.cwd.rstrip("/") or "/"
            where.append(f"({a}.cwd = %s OR {a}.cwd LIKE %s)")
            args += [base, _like_prefix(base.rstrip("/") + "/")]
        if self.since is not None:
            where.append(f"{a}.activity >= %s")
            args.append(self.since.epoch)
        if self.until is not None:
            where.append(f"coalesce({a}.started, {a}.activity) < %s")
            args.append(self.until.epoch)
        if self.imported is not None:
            where.append(f"{a}.kind {'=' if self.imported else '<>'} 'imported'")
        if self.programmatic is not None:
            where.append(f"{a}.programmatic = %s")
            args.append(self.programmatic)
        if self.archived is not None:
            where.append(f"{a}.archived = %s")
            args.append(self.archived)
        return where, args


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def session_docs(
    cur: Any, pricing: PriceTable, rows: list[tuple[Any, ...]], here: str | None
) -> dict[int, dict[str, Any]]:
    """Session documents from rows of SESSION_COLUMNS, with usage priced now.

    Only sessions of ``here`` (the machine the server runs on) keep ``resumable``: another
    machine's session is read like an imported one, never resumed from here.
    """
    docs: dict[int, dict[str, Any]] = {}
    keys: dict[tuple[str, str, str, str], int] = {}
    for rid, machine, agent, sid, collection, _kind, doc in rows:
        d = json.loads(doc)
        d["machine"] = machine
        if machine != here:
            d["resumable"] = False
        docs[rid] = d
        keys[(machine, agent, sid, collection)] = rid
    if not keys:
        return docs
    cur.execute(
        "SELECT u.machine, u.agent, u.sid, u.collection, u.model, u.long_ctx, sum(u.input), sum(u.output),"
        " sum(u.cache_read), sum(u.cache_write), sum(u.reasoning) FROM usage u"
        " JOIN sessions s USING (machine, agent, sid, collection) WHERE s.id = ANY(%s)"
        " GROUP BY 1, 2, 3, 4, 5, 6",
        (list(docs),),
    )
    usage: dict[int, dict[str, Any]] = {}
    for machine, agent, sid, collection, model, long_ctx, inp, outp, cr, cw, rs in cur.fetchall():
        rid = keys[(machine, agent, sid, collection)]
        inp, outp, cr, cw, rs = int(inp), int(outp), int(cr), int(cw), int(rs)
        add_usage(
            usage.setdefault(rid, empty_usage()),
            inp,
            outp,
            cr,
            cw,
            rs,
            pricing.cost(model, inp, outp, cr, cw, long_ctx),
            model,
        )
    for d in docs.values():
        d["short_id"] = short_id(cur, d["agent"], d["id"])
    for rid, d in docs.items():
        if rid in usage:
            d["usage"] = usage[rid]
        else:
            d["usage"] = unrecorded_cost(d.get("usage") or empty_usage())
    from agtaild.pg.userstate import annotate

    annotate(cur, docs)
    return docs


def list_sessions(
    cur: Any,
    pricing: PriceTable,
    flt: TeamFilter,
    *,
    limit: int,
    after: tuple[float, int] | None,
    here: str | None,
    total: bool = False,
) -> dict[str, Any]:
    """A page of sessions, newest first; with ``total``, also how many match on all pages."""
    where, args = flt.sql()
    count = None
    if total:
        cur.execute(
            "SELECT count(*) FROM sessions s" + (" WHERE " + " AND ".join(where) if where else ""), args
        )
        count = int(cur.fetchone()[0])
    if after is not None:
        where.append("(s.activity < %s OR (s.activity = %s AND s.id < %s))")
        args += [after[0], after[0], after[1]]
    clause = " WHERE " + " AND ".join(where) if where else ""
    cur.execute(
        f"SELECT {SESSION_COLUMNS}, s.activity FROM sessions s{clause} ORDER BY s.activity DESC, s.id DESC LIMIT %s",
        [*args, limit + 1],
    )
    rows = cur.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    docs = session_docs(cur, pricing, [r[:7] for r in rows], here)
    nxt = encode_cursor("sessions", rows[-1][7], rows[-1][0]) if more and rows else None
    answer: dict[str, Any] = {"sessions": [docs[r[0]] for r in rows], "next": nxt}
    if count is not None:
        answer["total"] = count
    return answer


def resolve_session(
    cur: Any, agent: str | None, ident: str, *, machine: str | None, collection: str | None, here: str | None
) -> int:
    """The session an AGENT:ID, a unique id prefix, or (``agent`` None) an id prefix unique
    across agents means (agtaild.index.refs). Copies of one session on several machines are
    one session's copies: this machine's first, then native before imports."""
    sql = "SELECT id, sid, kind, collection, machine, agent FROM sessions WHERE sid LIKE %s"
    args: list[Any] = [_like_prefix(ident)]
    if agent:
        sql += " AND agent = %s"
        args.append(agent)
    if machine:
        sql += " AND machine = %s"
        args.append(machine)
    if collection:
        sql += " AND collection = %s"
        args.append(collection)
    cur.execute(sql + " LIMIT 200", args)
    rows = cur.fetchall()
    which = chosen(
        [(r[5], r[1]) for r in rows], ident, agent, f" from machine {machine!r}" if machine else ""
    )
    copies = [r for r in rows if (r[5], r[1]) == which]
    copies.sort(key=lambda r: (r[4] != here, KIND_PREFERENCE.get(r[2], 9), r[3] or "", r[4], r[0]))
    return int(copies[0][0])


def load_session(cur: Any, pricing: PriceTable, rid: int, here: str | None) -> dict[str, Any]:
    cur.execute(f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = %s", (rid,))
    return session_docs(cur, pricing, cur.fetchall(), here)[rid]


def list_events(
    cur: Any, rid: int, *, after_seq: int | None, limit: int, before_seq: int | None = None
) -> dict[str, Any]:
    """A page of events in seq order, as agtaild.index.queries.list_events: after
    ``after_seq``, or the ``limit`` events just before ``before_seq``; ``prev_seq`` (the
    ``before_seq`` of the page before) lets a viewer grow a window both ways."""
    key = "SELECT machine, agent, sid, collection FROM sessions WHERE id = %s"
    after = -1 if after_seq is None else after_seq
    if before_seq is not None:
        cur.execute(
            f"SELECT seq, doc FROM {EVENTS.get()} WHERE (machine, agent, sid, collection) = ({key})"
            " AND seq < %s AND seq > %s ORDER BY seq DESC LIMIT %s",
            (rid, before_seq, after, limit + 1),
        )
        rows = cur.fetchall()
        earlier = len(rows) > limit
        rows = rows[:limit][::-1]
        cur.execute(
            f"SELECT 1 FROM {EVENTS.get()} WHERE (machine, agent, sid, collection) = ({key}) AND seq >= %s LIMIT 1",
            (rid, before_seq),
        )
        more = cur.fetchone() is not None and bool(rows)
    else:
        cur.execute(
            f"SELECT seq, doc FROM {EVENTS.get()} WHERE (machine, agent, sid, collection) = ({key})"
            " AND seq > %s ORDER BY seq LIMIT %s",
            (rid, after, limit + 1),
        )
        rows = cur.fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        earlier = False
        if rows:
            cur.execute(
                f"SELECT 1 FROM {EVENTS.get()} WHERE (machine, agent, sid, collection) = ({key}) AND seq < %s LIMIT 1",
                (rid, rows[0][0]),
            )
            earlier = cur.fetchone() is not None
    return {
        "events": [json.loads(doc) for _, doc in rows],
        "next": encode_cursor("events", rows[-1][0]) if more and rows else None,
        "prev_seq": rows[0][0] if earlier and rows else None,
    }


def short_id(cur: Any, agent: str, sid: str) -> str:
    """The shortest prefix of ``sid`` no other id of ``agent`` starts with (on the whole team
    database), as agtaild.index.queries.short_id: only the two byte-order neighbours matter."""
    from agtaild.index.queries import MIN_SHORT_ID, SUBAGENT_PREFIX, common_prefix

    longest = 0
    for op, order in (("<", "DESC"), (">", "ASC")):
        cur.execute(
            f'SELECT sid FROM sessions WHERE agent = %s AND sid COLLATE "C" {op} %s ORDER BY sid COLLATE "C" {order} LIMIT 1',
            (agent, sid),
        )
        row = cur.fetchone()
        if row is not None:
            longest = max(longest, common_prefix(sid, row[0]))
    floor = MIN_SHORT_ID + (len(SUBAGENT_PREFIX) if sid.startswith(SUBAGENT_PREFIX) else 0)
    return sid[: max(floor, longest + 1)]


STATS_BY = ("day", "model", "agent", "project", "session", "machine", "tool", "tool-category", "hour")
_STATS_KEY = {
    "day": "u.day",
    "model": "u.model",
    "agent": "u.agent",
    "project": "s.project",
    "session": "u.agent || ':' || u.sid",
    "machine": "u.machine",
}


def stats(cur: Any, pricing: PriceTable, *, by: str, flt: TeamFilter) -> dict[str, Any]:
    """Tokens and cost, counting each response once per machine (its own ``counted`` copy)."""
    if by in ("day", "model", "agent", "machine") and not (
        flt.project or flt.imported is not None or flt.collection
    ):
        precise = (flt.since is not None and flt.since.day is None) or (
            flt.until is not None and flt.until.day is None
        )
        if not precise:
            return _daily_stats(cur, pricing, by=by, flt=flt)
    where, args = ["u.counted"], []
    session_filter = TeamFilter(
        machine=flt.machine,
        project=flt.project,
        imported=flt.imported,
        collection=flt.collection,
        agent=flt.agent,
    )
    swhere, sargs = session_filter.sql("s")
    where += swhere
    args += sargs
    if flt.since is not None:
        where.append("u.day >= %s" if flt.since.day else "u.epoch >= %s")
        args.append(flt.since.day or flt.since.epoch)
    if flt.until is not None:
        where.append("u.day <= %s" if flt.until.day else "u.epoch < %s")
        args.append(flt.until.day or flt.until.epoch)
    from agtaild.index.stats import assemble

    extra = "max(s.title)" if by == "session" else "u.agent" if by == "day" else "NULL"
    split = ", u.agent" if by == "day" else ""
    scope = (
        f"FROM usage u JOIN sessions s USING (machine, agent, sid, collection) WHERE {' AND '.join(where)}"
    )
    cur.execute(
        f"SELECT {_STATS_KEY[by]} AS k, u.model, u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read),"
        f" sum(u.cache_write), sum(u.reasoning), {extra} {scope} GROUP BY 1, 2, 3{split}",
        args,
    )
    doc = assemble(cur.fetchall(), by, pricing)
    if by == "agent":
        _session_counts(cur, doc, scope, args)
    return doc


def _session_counts(cur: Any, doc: dict[str, Any], scope: str, args: list[Any]) -> None:
    """``sessions`` per ``--by agent`` row: the sessions (of every machine) with counted usage
    in the scope, as the local index counts them."""
    from agtaild.index.stats import add_session_counts

    cur.execute(f"SELECT u.agent, count(DISTINCT (u.machine, u.sid, u.collection)) {scope} GROUP BY 1", args)
    add_session_counts(doc, dict(cur.fetchall()))


def _daily_stats(cur: Any, pricing: PriceTable, *, by: str, flt: TeamFilter) -> dict[str, Any]:
    """Stats by day, model, agent or machine from ``usage_daily`` (schema m003_stats), for the
    filters it holds: machine, agent and whole days."""
    from agtaild.index.stats import assemble

    where, args = ["true"], []
    for column in ("machine", "agent"):
        value = getattr(flt, column)
        if value:
            where.append(f"u.{column} = %s")
            args.append(value)
    if flt.since is not None:
        where.append("u.day >= %s")
        args.append(flt.since.day)
    if flt.until is not None:
        where.append("u.day <= %s")
        args.append(flt.until.day)
    extra = "u.agent" if by == "day" else "NULL"
    split = ", u.agent" if by == "day" else ""
    cur.execute(
        f"SELECT {_STATS_KEY[by]} AS k, nullif(u.model, ''), u.long_ctx, sum(u.input), sum(u.output),"
        f" sum(u.cache_read), sum(u.cache_write), sum(u.reasoning), {extra} FROM usage_daily u"
        f" WHERE {' AND '.join(where)} GROUP BY 1, 2, 3{split}",
        args,
    )
    doc = assemble(cur.fetchall(), by, pricing)
    if by == "agent":  # usage_daily has no sessions: the responses have (the same filters)
        _session_counts(cur, doc, f"FROM usage u WHERE u.counted AND {' AND '.join(where)}", args)
    return doc
