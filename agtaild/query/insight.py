"""A closer look at one session, or at a directory's work: what the MCP read tools (and the
API) ask beyond listing and searching.

- ``sessions.overview``: a session with its user state, usage, ending, compactions, its tool
  calls counted by tool, the files it changed, and its child sessions (subagents).
- ``sessions.children``: the sessions whose parent it is, a page at a time.
- ``tools.calls``: its tool calls in order (name, status, duration where the agent recorded
  when the result came), optionally of one tool, a page at a time.
- ``edits.recent``: the file changes (agtaild.index.edits) of one session or under one
  directory, newest first, each with its diff cut to a number of lines.

Every answer is bounded (a ``limit`` with a maximum, a ``cursor`` to continue, inputs and diffs
cut) and holds transcript text, masked on the way out like every answer
(agtaild.query.masking).
"""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
from typing import Any

import msgspec

from agtaild.errors import bad_param
from agtaild.index.params import Params, encode_cursor

#: Children listed by an overview (the count says how many there are).
OVERVIEW_CHILDREN = 20
#: Characters of a tool call's input shown in ``tools.calls``.
INPUT_CHARS = 300
#: Events read at most to fill one page of ``tools.calls`` filtered by tool.
SCAN_EVENTS = 20_000
_SESSION = ("agent", "id", "collection", "path")


def _resolve(svc: Any, p: Params) -> int:
    from agtaild.index.queries import resolve_session

    agent, ident = p.session_ref()
    svc.check_agent(p.method, agent)
    return resolve_session(svc._reader(), agent, ident, collection=p.text("collection"), path=p.text("path"))


def _epoch(ts: Any) -> float | None:
    if not isinstance(ts, str) or len(ts) < 19:
        return None
    try:
        when = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _brief(session: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "agent",
        "id",
        "short_id",
        "collection",
        "imported",
        "title",
        "cwd",
        "project",
        "started",
        "ended",
        "messages",
        "usage",
        "state",
    )
    return {k: session.get(k) for k in keys if session.get(k) is not None}


def _children_rows(db: sqlite3.Connection, agent: str, sid: str, collection: str | None) -> list[int]:
    """Ids of the sessions whose parent is (agent, sid), in the same collection, oldest first."""
    needle = json.dumps(sid)
    out = []
    for rid, data in db.execute(
        "SELECT id, CAST(data AS TEXT) FROM sessions WHERE agent = ? AND coalesce(collection, '') = ?"
        " AND instr(CAST(data AS TEXT), ?) > 0 ORDER BY coalesce(started, activity), id",
        (agent, collection or "", needle),
    ):
        try:
            parent = json.loads(data).get("parent")
        except ValueError:
            continue
        if isinstance(parent, dict) and parent.get("id") == sid:
            out.append(rid)
    return out


def _session_docs(svc: Any, ids: list[int]) -> list[dict[str, Any]]:
    from agtaild.index.queries import add_short_ids, load_sessions
    from agtaild.query.organize import annotate

    docs = load_sessions(svc._reader(), svc.pricing(), ids)
    out = [docs[i] for i in ids if i in docs]
    add_short_ids(svc._reader(), out)
    annotate(getattr(svc, "state", None), out)
    return out


def _tool_counts(db: sqlite3.Connection, rid: int) -> list[dict[str, Any]]:
    counts: dict[str, dict[str, Any]] = {}
    for (data,) in db.execute("SELECT data FROM events WHERE session_id = ? AND kind = 'tool_use'", (rid,)):
        doc = _decode(data)
        name = str(doc.get("tool") or "?")
        row = counts.setdefault(name, {"tool": name, "calls": 0, "errors": 0})
        row["calls"] += 1
        if doc.get("is_error"):
            row["errors"] += 1
    return sorted(counts.values(), key=lambda r: (-r["calls"], r["tool"]))


def _decode(data: bytes) -> dict[str, Any]:
    from agtaild.index.codec import decode_event

    try:
        return decode_event(data)
    except (msgspec.DecodeError, ValueError, TypeError):
        return {}


def overview(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import load_sessions
    from agtaild.query.organize import annotate

    p = Params("sessions.overview", params, _SESSION)
    rid = _resolve(svc, p)
    db = svc._reader()
    session = load_sessions(db, svc.pricing(), [rid])[rid]
    annotate(getattr(svc, "state", None), [session])
    children = _children_rows(db, session["agent"], session["id"], session.get("collection"))
    (files, changes, failed) = db.execute(
        "SELECT count(DISTINCT path), count(*), coalesce(sum(failed), 0) FROM edits WHERE session_id = ?",
        (rid,),
    ).fetchone()
    tools = _tool_counts(db, rid)
    return {
        "session": session,
        "tools": tools[:50],
        "tool_calls": sum(t["calls"] for t in tools),
        "tool_errors": sum(t["errors"] for t in tools),
        "edits": {"files": files, "changes": changes, "failed": failed},
        "children": _children_docs(svc, children[:OVERVIEW_CHILDREN]),
        "children_total": len(children),
    }


def _children_docs(svc: Any, ids: list[int]) -> list[dict[str, Any]]:
    return [_brief(d) for d in _session_docs(svc, ids)]


def children(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import load_sessions

    p = Params("sessions.children", params, (*_SESSION, "limit", "cursor"))
    rid = _resolve(svc, p)
    limit = p.integer("limit", 50, minimum=1, maximum=500) or 50
    after = p.number_cursor("children", 1)
    db = svc._reader()
    session = load_sessions(db, svc.pricing(), [rid])[rid]
    ids = _children_rows(db, session["agent"], session["id"], session.get("collection"))
    start = int(after[0]) if after else 0
    page = ids[start : start + limit]
    nxt = encode_cursor("children", start + limit) if start + limit < len(ids) else None
    return {"parent": _brief(session), "sessions": _session_docs(svc, page), "total": len(ids), "next": nxt}


def tool_calls(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    p = Params("tools.calls", params, (*_SESSION, "tool", "after_seq", "limit", "cursor"))
    rid = _resolve(svc, p)
    tool = p.text("tool", max_len=200)
    limit = p.integer("limit", 50, minimum=1, maximum=500) or 50
    after = p.integer("after_seq", -1, minimum=-1)
    cursor = p.number_cursor("tools", 1)
    if cursor is not None:
        after = max(int(cursor[0]), after if after is not None else -1)
    db = svc._reader()
    calls: list[dict[str, Any]] = []
    last = after if after is not None else -1
    scanned = 0
    more = False
    for seq, data, result, moved in db.execute(
        "SELECT seq, data, tool_result, result_moved FROM events WHERE session_id = ? AND kind = 'tool_use'"
        " AND seq > ? ORDER BY seq",
        (rid, last),
    ):
        if len(calls) >= limit or scanned >= SCAN_EVENTS:
            more = True
            break
        scanned += 1
        last = seq
        doc = _decode(data)
        name = str(doc.get("tool") or "?")
        if tool is not None and name != tool:
            continue
        calls.append(_call(seq, doc, result if moved else doc.get("result")))
    return {
        "calls": calls,
        "tool": tool,
        "next": encode_cursor("tools", last) if more else None,
        "scanned_through_seq": last,
    }


def _call(seq: int, doc: dict[str, Any], result: Any) -> dict[str, Any]:
    raw_extra = doc.get("extra")
    extra: dict[str, Any] = raw_extra if isinstance(raw_extra, dict) else {}
    started, ended = _epoch(doc.get("ts")), _epoch(extra.get("result_ts"))
    if doc.get("is_error"):
        status = "error"
    elif doc.get("is_error") is False or result is not None:
        status = "ok"
    else:
        status = "no result recorded"
    raw_input = doc.get("input")
    text_input = (
        raw_input if isinstance(raw_input, str) else json.dumps(raw_input, ensure_ascii=False, default=str)
    )
    out: dict[str, Any] = {
        "seq": seq,
        "ts": doc.get("ts"),
        "tool": doc.get("tool"),
        "status": status,
        "duration_ms": round((ended - started) * 1000)
        if started is not None and ended is not None and ended >= started
        else None,
        "input": text_input[:INPUT_CHARS] if raw_input is not None else None,
        "input_cut": max(0, len(text_input) - INPUT_CHARS) if raw_input is not None else 0,
    }
    if extra.get("subagent"):
        out["subagent"] = extra["subagent"]
    return out


def recent_edits(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The changes of one session (``agent``/``id``) or under one directory (``cwd``), newest
    first; ``diff_lines`` lines of each diff."""
    from agtaild.index.queries import short_id

    p = Params("edits.recent", params, (*_SESSION, "cwd", "limit", "cursor", "diff_lines"))
    limit = p.integer("limit", 20, minimum=1, maximum=200) or 20
    diff_lines = p.integer("diff_lines", 30, minimum=0, maximum=2000)
    assert diff_lines is not None
    cwd = p.text("cwd", max_len=4096)
    after = p.number_cursor("edits", 2)
    db = svc._reader()
    where: list[str] = []
    args: list[Any] = []
    if params.get("id") is not None:
        where.append("e.session_id = ?")
        args.append(_resolve(svc, p))
    elif cwd is None:
        raise bad_param("cwd", "name a session (agent, id) or a directory (cwd)")
    if cwd is not None:
        if not os.path.isabs(cwd) or "\x00" in cwd:
            raise bad_param("cwd", "must be an absolute path")
        base = os.path.normpath(cwd)
        where.append("(e.path >= ? AND e.path < ?)")
        args += [base.rstrip("/") + "/", base.rstrip("/") + "0"]
    if after is not None:
        where.append("(coalesce(e.epoch, 0) < ? OR (coalesce(e.epoch, 0) = ? AND e.id < ?))")
        args += [after[0], after[0], after[1]]
    rows = db.execute(
        "SELECT e.id, e.session_id, e.seq, e.epoch, e.path, e.kind, e.failed, e.from_path, e.data,"
        " s.agent, s.sid, s.collection, s.title FROM edits e JOIN sessions s ON s.id = e.session_id"
        f" WHERE {' AND '.join(where)} ORDER BY coalesce(e.epoch, 0) DESC, e.id DESC LIMIT ?",
        (*args, limit + 1),
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    shorts: dict[tuple[str, str], str] = {}
    records = []
    for rid, _sess, seq, epoch, path, kind, failed, from_path, data, agent, sid, collection, title in rows:
        try:
            doc = msgspec.msgpack.decode(data)
        except msgspec.DecodeError:
            doc = {}
        if (agent, sid) not in shorts:
            shorts[(agent, sid)] = short_id(db, agent, sid)
        lines = [x for h in doc.get("hunks") or [] for x in h.get("lines") or [] if isinstance(x, str)]
        if not lines:
            ops = doc.get("ops")
            if (
                isinstance(ops, list)
                and len(ops) == 1
                and isinstance(ops[0], list)
                and ops[0][:1] == ["write"]
            ):
                lines = ["+" + str(x) for x in (ops[0][1] if isinstance(ops[0][1], list) else [])]
        record: dict[str, Any] = {
            "edit_id": rid,
            "session": {
                "agent": agent,
                "id": sid,
                "short_id": shorts[(agent, sid)],
                "collection": collection,
                "title": title,
            },
            "seq": seq,
            "time": _iso(epoch),
            "kind": kind,
            "failed": bool(failed),
            "path": path,
            "from_path": from_path,
            "tool": doc.get("tool"),
            "diff": lines[:diff_lines],
            "diff_cut": max(0, len(lines) - diff_lines),
        }
        if doc.get("command"):
            record["command"] = str(doc["command"])[:1000]
        records.append(record)
    last = rows[-1] if rows else None
    nxt = encode_cursor("edits", last[3] or 0, last[0]) if more and last is not None else None
    return {"edits": records, "next": nxt}


METHODS = {
    "sessions.overview": overview,
    "sessions.children": children,
    "tools.calls": tool_calls,
    "edits.recent": recent_edits,
}
