"""Reading sessions and events back out of the index (no native file is parsed again).

Pagination is keyset, never OFFSET: a cursor carries the sort key of the last row returned,
so page N costs the same as page 1 and events are never re-read from the start.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import msgspec

from agtaild.errors import NotFound
from agtaild.index.codec import decode_event
from agtaild.index.params import TimeBound, encode_cursor
from agtaild.index.refs import chosen
from agtaild.index.selection import id_conditions
from agtaild.pricing import PriceTable

_decode = msgspec.json.decode
#: Which copy of an AGENT:ID a bare id means: the native one, then the archived, then imports.
KIND_PREFERENCE = {"native": 0, "archive": 1, "imported": 2}


def has_secret_sql(alias: str, present: bool, allowed: list[str]) -> tuple[str, list[Any]]:
    """The condition "session ``alias`` holds a secret (not allowlisted)", or its negation
    (the findings of agtaild.index.findings)."""
    sql = f"EXISTS (SELECT 1 FROM secret_findings f WHERE f.session_id = {alias}.id"
    args: list[Any] = []
    if allowed:
        sql += f" AND f.fingerprint NOT IN ({', '.join('?' * len(allowed))})"
        args += allowed
    sql += ")"
    return (sql if present else f"NOT {sql}"), args


class SessionFilter(msgspec.Struct):
    agent: str | None = None
    cwd: str | None = None
    project: str | None = None
    since: TimeBound | None = None
    until: TimeBound | None = None
    imported: bool | None = None
    collection: str | None = None
    programmatic: bool | None = None
    archived: bool | None = None
    #: Only these sessions / never these, as (collection or "", agent, id): what the user's own
    #: state selects (labels, stars, hides: agtaild.userstate), which the index does not hold.
    only_refs: list[tuple[str, str, str]] | None = None
    without_refs: list[tuple[str, str, str]] | None = None
    #: Only sessions that hold a secret the index's pass found (True), or none (False);
    #: ``secret_allowed``: fingerprints the user allowlisted, which do not count.
    has_secret: bool | None = None
    secret_allowed: list[str] | None = None

    def sql(self, alias: str = "s") -> tuple[list[str], list[Any]]:
        a = alias
        where, args = id_conditions(f"{a}.id", self.only_refs, self.without_refs)
        if self.has_secret is not None:
            sql, extra = has_secret_sql(a, self.has_secret, self.secret_allowed or [])
            where.append(sql)
            args += extra
        if self.agent:
            where.append(f"{a}.agent = ?")
            args.append(self.agent)
        if self.cwd:
            base = self.cwd.rstrip("/") or "/"
            # the directory itself or anything below it (a range, so the index is used)
            where.append(f"({a}.cwd = ? OR ({a}.cwd >= ? AND {a}.cwd < ?))")
            args += [base, base.rstrip("/") + "/", base.rstrip("/") + "0"]
        if self.project:
            where.append(f"{a}.project = ?")
            args.append(self.project)
        if self.since is not None:
            where.append(f"{a}.activity >= ?")
            args.append(self.since.epoch)
        if self.until is not None:
            where.append(f"coalesce({a}.started, {a}.activity) < ?")
            args.append(self.until.epoch)
        if self.imported is not None:
            where.append(f"{a}.kind {'=' if self.imported else '!='} 'imported'")
        if self.collection:
            where.append(f"{a}.collection = ?")
            args.append(self.collection)
        if self.programmatic is not None:
            where.append(f"{a}.programmatic = ?")
            args.append(int(self.programmatic))
        if self.archived is not None:
            where.append(f"{a}.archived = ?")
            args.append(int(self.archived))
        return where, args


def session_usage(
    db: sqlite3.Connection, pricing: PriceTable, ids: Iterable[int]
) -> dict[int, dict[str, Any]]:
    """Each session's own usage (every response its file records), priced now."""
    ids = list(ids)
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for sid, model, long_ctx, inp, outp, cr, cw, rs in db.execute(
            "SELECT session_id, model, long_ctx, sum(input), sum(output), sum(cache_read), sum(cache_write),"
            f" sum(reasoning) FROM usage WHERE session_id IN ({marks}) GROUP BY session_id, model, long_ctx",
            part,
        ):
            u = out.setdefault(sid, empty_usage())
            add_usage(u, inp, outp, cr, cw, rs, pricing.cost(model, inp, outp, cr, cw, bool(long_ctx)), model)
    return out


#: How a usage document names a model without a name (as the stats keys do).
UNKNOWN_MODEL = "(unknown)"


def usage_doc(
    inp: int, outp: int, cr: int, cw: int, rs: int, cost: float | None,
    unpriced: tuple[float, int, Iterable[str | None]] | None = None,
) -> dict[str, Any]:
    """Usage JSON, in the contract's field order. When the cost is unknown (a model has no
    price), ``unpriced`` = (the cost of the priced part, the tokens of the unpriced part, the
    unpriced models) adds ``cost_known_usd``, ``unpriced_tokens`` and ``unpriced_models``: the
    known part is never hidden by the unknown one (without ``unpriced``, nothing is priced)."""
    doc: dict[str, Any] = {
        "input_tokens": inp,
        "output_tokens": outp,
        "cache_read_tokens": cr,
        "cache_write_tokens": cw,
        "reasoning_tokens": rs,
        "total_tokens": inp + outp + cr + cw,
        "cost_usd": cost,
    }
    if cost is None:
        known, tokens, models = unpriced if unpriced is not None else (0.0, inp + outp + cr + cw, ())
        doc["cost_known_usd"] = known
        doc["unpriced_tokens"] = tokens
        doc["unpriced_models"] = sorted({m or UNKNOWN_MODEL for m in models})
    return doc


def empty_usage() -> dict[str, Any]:
    return usage_doc(0, 0, 0, 0, 0, 0.0)


def add_usage(
    u: dict[str, Any], inp: int, outp: int, cr: int, cw: int, rs: int, cost: float | None,
    model: str | None = None,
) -> None:
    """Add one group's tokens and cost (``cost`` None: ``model`` has no price) to a usage
    document, keeping the priced part apart once any part is unpriced (see usage_doc)."""
    u["input_tokens"] += inp
    u["output_tokens"] += outp
    u["cache_read_tokens"] += cr
    u["cache_write_tokens"] += cw
    u["reasoning_tokens"] += rs
    u["total_tokens"] += inp + outp + cr + cw
    if cost is None:
        if u["cost_usd"] is not None:  # the first unpriced part: what was summed is the known part
            u.update(cost_known_usd=u["cost_usd"], unpriced_tokens=0, unpriced_models=[])
            u["cost_usd"] = None
        u["unpriced_tokens"] += inp + outp + cr + cw
        name = model or UNKNOWN_MODEL
        if name not in u["unpriced_models"]:
            u["unpriced_models"] = sorted([*u["unpriced_models"], name])
    elif u["cost_usd"] is None:
        u["cost_known_usd"] += cost
    else:
        u["cost_usd"] += cost


def unrecorded_cost(u: dict[str, Any]) -> dict[str, Any]:
    """A session's summary usage when no response of it was recorded: its tokens came from the
    summary, so their cost is unknown (cost comes from the price table, never from adapters),
    unless there are no tokens at all."""
    if not u.get("total_tokens") and not u.get("reasoning_tokens"):
        u["cost_usd"] = 0.0
        return u
    u["cost_usd"] = None
    u.update(cost_known_usd=0.0, unpriced_tokens=int(u.get("total_tokens") or 0), unpriced_models=[])
    return u


def load_sessions(db: sqlite3.Connection, pricing: PriceTable, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Session JSON documents by row id, with usage computed from the usage rows."""
    if not ids:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for rid, data in db.execute(f"SELECT id, data FROM sessions WHERE id IN ({marks})", part):
            out[rid] = _decode(data)
    usage = session_usage(db, pricing, out)
    add_short_ids(db, out.values())
    for rid, doc in out.items():
        if rid in usage:
            doc["usage"] = usage[rid]
        else:
            doc["usage"] = unrecorded_cost(doc.get("usage") or empty_usage())
    return out


#: The shortest id prefix shown: shorter prefixes collide too soon to be worth typing.
MIN_SHORT_ID = 8
#: Claude subagent ids all start "agent-": the same minimum counted after it.
SUBAGENT_PREFIX = "agent-"


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def short_id(db: sqlite3.Connection, agent: str, sid: str) -> str:
    """The shortest prefix of ``sid`` (at least :data:`MIN_SHORT_ID` characters) that no other
    session id of ``agent`` in the whole index starts with, so ``show``/``resume`` accept it.
    Time-ordered ids (Codex, Pi, OpenCode) share long starts; the two sorted neighbours of an
    id are the only ids that can share a longer prefix with it than any other."""
    longest = 0
    for op, order in (("<", "DESC"), (">", "ASC")):
        row = db.execute(
            f"SELECT sid FROM sessions WHERE agent = ? AND sid {op} ? ORDER BY sid {order} LIMIT 1",
            (agent, sid),
        ).fetchone()
        if row is not None:
            longest = max(longest, common_prefix(sid, row[0]))
    floor = MIN_SHORT_ID + (len(SUBAGENT_PREFIX) if sid.startswith(SUBAGENT_PREFIX) else 0)
    return sid[: max(floor, longest + 1)]


def add_short_ids(db: sqlite3.Connection, docs: Iterable[dict[str, Any]]) -> None:
    """Set each session document's ``short_id`` (an extension of the Session JSON)."""
    for doc in docs:
        agent, sid = doc.get("agent"), doc.get("id")
        if isinstance(agent, str) and isinstance(sid, str):
            doc["short_id"] = short_id(db, agent, sid)


def list_sessions(
    db: sqlite3.Connection,
    pricing: PriceTable,
    flt: SessionFilter,
    *,
    match_ids_sql: tuple[str, list[Any]] | None,
    limit: int,
    after: tuple[float, int] | None,
    total: bool = False,
) -> dict[str, Any]:
    """A page of sessions, newest first; with ``total``, also how many match in all (every
    page: the count ignores the cursor), so a viewer can say "100 sessions", not "60+"."""
    where, args = flt.sql()
    if match_ids_sql is not None:
        sql, margs = match_ids_sql
        where.append(f"s.id IN ({sql})")
        args += margs
    count = None
    if total:
        clause = " WHERE " + " AND ".join(where) if where else ""
        count = int(db.execute(f"SELECT count(*) FROM sessions s{clause}", args).fetchone()[0])
    if after is not None:
        where.append("(s.activity < ? OR (s.activity = ? AND s.id < ?))")
        args += [after[0], after[0], after[1]]
    clause = " WHERE " + " AND ".join(where) if where else ""
    rows = db.execute(
        f"SELECT s.id, s.activity FROM sessions s{clause} ORDER BY s.activity DESC, s.id DESC LIMIT ?",
        [*args, limit + 1],
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    docs = load_sessions(db, pricing, [r[0] for r in rows])
    nxt = encode_cursor("sessions", rows[-1][1], rows[-1][0]) if more and rows else None
    answer: dict[str, Any] = {"sessions": [docs[r[0]] for r in rows], "next": nxt}
    if count is not None:
        answer["total"] = count
    return answer


def resolve_session(
    db: sqlite3.Connection,
    agent: str | None,
    ident: str,
    *,
    collection: str | None = None,
    path: str | None = None,
) -> int:
    """The session row an AGENT:ID, a unique id prefix, or (``agent`` None) an id prefix
    unique across agents means (agtaild.index.refs); native copies win."""
    by_agent = " AND s.agent = ?" if agent else ""
    if path:
        row = db.execute(
            f"SELECT s.id FROM sessions s JOIN files f ON f.id = s.file_id WHERE f.path = ?{by_agent}",
            (path, agent) if agent else (path,),
        ).fetchone()
        if row is None:
            raise NotFound(f"no {agent + ' ' if agent else ''}session indexed from {path}")
        return int(row[0])
    sql = f"SELECT s.id, s.sid, s.kind, s.collection, s.agent FROM sessions s WHERE s.sid >= ? AND s.sid < ?{by_agent}"
    args: list[Any] = [ident, ident + "\U0010ffff", *([agent] if agent else [])]
    if collection:
        sql += " AND s.collection = ?"
        args.append(collection)
    rows = db.execute(sql + " LIMIT 200", args).fetchall()
    where = f" in collection {collection!r}" if collection else ""
    which = chosen([(r[4], r[1]) for r in rows], ident, agent, where)
    copies = [r for r in rows if (r[4], r[1]) == which]
    copies.sort(key=lambda r: (KIND_PREFERENCE.get(r[2], 9), r[3] or "", r[0]))
    return int(copies[0][0])


def event_doc(data: bytes, text: str | None, tool_result: str | None, moved: int) -> dict[str, Any]:
    doc = decode_event(data)
    doc["text"] = text
    if moved:
        doc["result"] = tool_result
    return doc


def list_events(
    db: sqlite3.Connection,
    session_id: int,
    *,
    after_seq: int | None,
    limit: int,
    before_seq: int | None = None,
) -> dict[str, Any]:
    """A page of events in seq order: after ``after_seq``, or (``before_seq``) the ``limit``
    events just before that seq. ``next`` continues forwards; ``prev_seq`` (an extension) is the
    ``before_seq`` of the page before this one, null at the start — so a viewer can open a
    window around any event and grow it both ways without reading from the start."""
    if before_seq is not None:
        rows = db.execute(
            "SELECT seq, data, text, tool_result, result_moved FROM events"
            " WHERE session_id = ? AND seq < ? AND seq > ? ORDER BY seq DESC LIMIT ?",
            (session_id, before_seq, -1 if after_seq is None else after_seq, limit + 1),
        ).fetchall()
        earlier = len(rows) > limit
        rows = rows[:limit][::-1]
        later = db.execute(
            "SELECT 1 FROM events WHERE session_id = ? AND seq >= ? LIMIT 1", (session_id, before_seq)
        ).fetchone()
        more = later is not None and bool(rows)
    else:
        rows = db.execute(
            "SELECT seq, data, text, tool_result, result_moved FROM events"
            " WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, -1 if after_seq is None else after_seq, limit + 1),
        ).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        earlier = bool(rows) and (
            db.execute(
                "SELECT 1 FROM events WHERE session_id = ? AND seq < ? LIMIT 1", (session_id, rows[0][0])
            ).fetchone()
            is not None
        )
    events = [event_doc(data, text, result, moved) for _, data, text, result, moved in rows]
    nxt = encode_cursor("events", rows[-1][0]) if more and rows else None
    return {"events": events, "next": nxt, "prev_seq": rows[0][0] if earlier and rows else None}
