"""Live usage: the sessions spending now, how fast, and the limit windows they count against.

Read from the index as it stands (the daemon keeps it current); nothing is invented:

* sessions active in the last ``active_minutes`` (``sessions.activity``), each with its
  tokens and cost so far (the rollup) and its burn over the last 5 and 30 minutes (its
  counted responses, agtaild.index.windows);
* Claude Code: the 5-hour billing block now open, computed from response times the way
  ccusage's ``blocks`` does, with a projection to its end; and the last 7 days' total;
* Codex: the newest ``rate_limits`` snapshot Codex wrote into a rollout (the adapter keeps it
  in the session's ``extra``), shown as recorded, with its age; fields this version does not
  know are kept raw under ``unknown``;
* today's total of every agent (the same numbers as ``stats --since today``).

Responses are found through the sessions active since the lookback (sessions_agent_activity),
never by scanning every usage row: a response is never later than its session's activity.
Every query is bounded on both sides of the clock: times up to ``AHEAD`` past ``now`` still
belong to the present (a clock set back, a machine a few hours behind the agent's; the rates
count them as ``ahead``), times further ahead do not — a session whose last activity is dated
more than a day in the future is not active now, and its responses are in no window of now
(else an index holding such sessions, or a clock set back a year, would read every one of them).
"""

from __future__ import annotations

import math
import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

import msgspec

from agtaild.index.params import TimeBound
from agtaild.index.queries import add_usage, empty_usage
from agtaild.index.windows import (
    BLOCK_SECONDS,
    Block,
    Entry,
    ahead,
    billing_blocks,
    burn,
    chain_starts_at,
    per_minute,
    projection,
    rates,
)
from agtaild.pricing import PriceTable

CLAUDE = "claude-code"
CODEX = "codex"
WEEK = 7 * 86400.0
#: How far back Claude's responses are read first; further (×4 each time) while the block
#: chain runs on past it (a gap of more than 5 hours always starts a new chain).
LOOKBACK = 8 * 86400.0
#: Codex sessions looked at for the newest rate-limit snapshot (the most recently active).
CODEX_SESSIONS = 20
#: How far past ``now`` a session's activity (or a recorded snapshot) may be dated and still be
#: of the present: a clock set back or a wrong time zone (at most 14 hours). Further ahead is
#: another time, left out of the live view.
AHEAD = 86400.0
#: The fields of a Codex window (``primary``/``secondary``) and of the snapshot this code knows.
_WINDOW_FIELDS = ("used_percent", "window_minutes", "resets_at", "resets_in_seconds")
_SNAPSHOT_FIELDS = (
    "limit_id",
    "limit_name",
    "primary",
    "secondary",
    "credits",
    "plan_type",
    "rate_limit_reached_type",
)

_COLUMNS = "u.session_id, u.epoch, u.model, u.long_ctx, u.input, u.output, u.cache_read, u.cache_write"


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def _entries(rows: Any, pricing: PriceTable) -> list[Entry]:
    cost_of = pricing.cost
    out = []
    for sid, epoch, model, long_ctx, inp, outp, cr, cw in rows:
        out.append(
            Entry(
                float(epoch),
                inp + outp + cr + cw,
                inp + outp,
                cost_of(model, inp, outp, cr, cw, bool(long_ctx)),
                sid,
            )
        )
    return out


def agent_entries(
    db: sqlite3.Connection, pricing: PriceTable, agent: str, since: float | None, until: float | None = None
) -> list[Entry]:
    """The counted responses of ``agent`` dated from ``since`` (None: all) to ``until``
    (None: any time; else sessions active up to AHEAD past it), oldest first."""
    if since is None and until is None:
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM usage u WHERE u.agent = ? AND u.counted = 1 AND u.epoch IS NOT NULL",
            (agent,),
        )
    else:
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM sessions s CROSS JOIN usage u ON u.session_id = s.id"
            " WHERE s.agent = ? AND s.activity >= ? AND s.activity <= ?"
            " AND u.counted = 1 AND u.epoch >= ? AND u.epoch <= ?",
            (agent, *_span(since, until), *_span(since, until, ahead=0.0)),
        )
    return sorted(_entries(rows, pricing), key=lambda e: e.epoch)


def _span(since: float | None, until: float | None, ahead: float = AHEAD) -> tuple[float, float]:
    """SQL bounds for times from ``since`` to ``until`` (+ ``ahead``), None meaning no bound."""
    return (-math.inf if since is None else since, math.inf if until is None else until + ahead)


def _previous_epoch(db: sqlite3.Connection, agent: str, before: float, now: float) -> float | None:
    """The time of the last counted response of ``agent`` in the block length before ``before``."""
    row = db.execute(
        "SELECT max(u.epoch) FROM sessions s CROSS JOIN usage u ON u.session_id = s.id"
        " WHERE s.agent = ? AND s.activity >= ? AND s.activity <= ? AND u.counted = 1 AND u.epoch >= ? AND u.epoch < ?",
        (agent, before - BLOCK_SECONDS, now + AHEAD, before - BLOCK_SECONDS, before),
    ).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def claude_history(db: sqlite3.Connection, pricing: PriceTable, now: float) -> list[Entry]:
    """Claude's responses up to ``now`` from the start of the block chain that reaches it (at
    least the last LOOKBACK): the blocks computed from them are those of the whole history."""
    lookback = LOOKBACK
    while True:
        since = now - lookback
        entries = agent_entries(db, pricing, CLAUDE, since, now)
        if not entries:
            return entries
        if chain_starts_at(entries[0].epoch, _previous_epoch(db, CLAUDE, entries[0].epoch, now)):
            return entries
        if lookback > 400 * 86400:
            return agent_entries(db, pricing, CLAUDE, None, now)
        lookback *= 4


def _usage_of(entries: list[Entry]) -> dict[str, Any]:
    """Tokens and cost of entries (tokens only in total; the cost known or not)."""
    cost: float | None = 0.0
    known = 0.0
    unpriced = 0
    for e in entries:
        if e.cost is None:
            if e.tokens:
                cost = None
                unpriced += e.tokens
        else:
            known += e.cost
            if cost is not None:
                cost += e.cost
    doc: dict[str, Any] = {
        "total_tokens": sum(e.tokens for e in entries),
        "responses": len(entries),
        "cost_usd": None if cost is None else round(cost, 6),
    }
    if cost is None:
        doc["cost_known_usd"] = round(known, 6)
        doc["unpriced_tokens"] = unpriced
    return doc


def block_doc(block: Block, now: float) -> dict[str, Any]:
    """A billing block as the API shows it."""
    used = _usage_of(block.entries)
    doc: dict[str, Any] = {
        "agent": CLAUDE,
        "kind": "block",
        "source": "computed",
        "hours": BLOCK_SECONDS / 3600,
        "start": iso(block.start),
        "end": iso(block.end),
        "first": iso(block.first),
        "last": iso(block.last),
        "active": block.active(now),
        "resets_in_seconds": max(0, round(block.end - now)),
        "usage": used,
        "io_tokens": block.io_tokens(),
        "burn": rates(block.entries, now),
    }
    if doc["active"]:
        doc["projection"] = projection(
            used["total_tokens"], used["cost_usd"], burn(block.entries, now, 30), now, block.end
        )
    return doc


def claude_windows(
    db: sqlite3.Connection, pricing: PriceTable, now: float
) -> tuple[list[dict[str, Any]], Block | None]:
    """The Claude block open now (if any) and the last 7 days' total; and the open block."""
    entries = claude_history(db, pricing, now)
    blocks = billing_blocks(entries)
    current = blocks[-1] if blocks and blocks[-1].active(now) else None
    out = []
    if current is not None:
        out.append(block_doc(current, now))
    week = [e for e in entries if now - WEEK < e.epoch <= now]
    if week:
        out.append({
            "agent": CLAUDE, "kind": "week", "source": "computed", "start": iso(now - WEEK), "end": iso(now),
            "usage": _usage_of(week), "note": "the last 7 days (Claude Code records no weekly limit)",
        })  # fmt: skip
    return out, current


def _codex_window(name: str, raw: Any, recorded: float | None, now: float) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    doc: dict[str, Any] = {"agent": CODEX, "kind": name, "source": "recorded"}
    percent = raw.get("used_percent")
    doc["used_percent"] = (
        percent if isinstance(percent, int | float) and not isinstance(percent, bool) else None
    )
    minutes = raw.get("window_minutes")
    doc["window_minutes"] = minutes if isinstance(minutes, int) and not isinstance(minutes, bool) else None
    resets = raw.get("resets_at")
    if not (isinstance(resets, int | float) and not isinstance(resets, bool)):
        resets = None
        left = raw.get("resets_in_seconds")  # older CLIs: seconds from the snapshot's time
        if isinstance(left, int | float) and not isinstance(left, bool) and recorded is not None:
            resets = recorded + left
    doc["resets_at"] = iso(resets) if resets is not None else None
    doc["resets_in_seconds"] = None if resets is None else round(resets - now)
    unknown = {k: v for k, v in raw.items() if k not in _WINDOW_FIELDS}
    if unknown:
        doc["unknown"] = unknown
    return doc


def codex_windows(db: sqlite3.Connection, now: float) -> list[dict[str, Any]]:
    """The windows of the newest rate-limit snapshot any recent Codex session recorded."""
    from agtaild.index.prepare import parse_time

    best: tuple[float, dict[str, Any], str] | None = None
    rows = db.execute(
        "SELECT sid, data FROM sessions WHERE agent = ? AND activity <= ? ORDER BY activity DESC, id DESC LIMIT ?",
        (CODEX, now + AHEAD, CODEX_SESSIONS),
    )
    for sid, data in rows:
        try:
            extra = msgspec.json.decode(data).get("extra") or {}
        except (msgspec.DecodeError, AttributeError):
            continue
        kept = extra.get("rate_limits") if isinstance(extra, dict) else None
        if not isinstance(kept, dict) or not isinstance(kept.get("snapshot"), dict):
            continue
        at = parse_time(kept.get("recorded_at")) if isinstance(kept.get("recorded_at"), str) else None
        if at is not None and at <= now + AHEAD and (best is None or at > best[0]):
            best = (at, kept["snapshot"], sid)
    if best is None:
        return []
    at, snapshot, sid = best
    out = []
    common = {"recorded_at": iso(at), "age_seconds": round(now - at), "session": {"agent": CODEX, "id": sid}}
    for name in ("primary", "secondary"):
        window = _codex_window(name, snapshot.get(name), at, now)
        if window is not None:
            out.append({**window, **common})
    unknown = {k: v for k, v in snapshot.items() if k not in _SNAPSHOT_FIELDS}
    known = {
        k: snapshot.get(k)
        for k in ("limit_id", "plan_type", "rate_limit_reached_type")
        if snapshot.get(k) is not None
    }
    if not out or unknown or known:
        # The snapshot itself: no window in it (an API key, or a provider without limits),
        # or fields this version does not know (kept raw).
        out.append({"agent": CODEX, "kind": "snapshot", "source": "recorded", **known, **common,
                    **({"unknown": unknown} if unknown else {})})  # fmt: skip
    return out


def _session_totals(db: sqlite3.Connection, pricing: PriceTable, ids: list[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {i: empty_usage() for i in ids}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    rows = db.execute(
        "SELECT session_id, model, long_ctx, sum(input), sum(output), sum(cache_read), sum(cache_write), sum(reasoning)"
        f" FROM usage_rollup WHERE session_id IN ({marks}) GROUP BY 1, 2, 3",
        ids,
    )
    for sid, model, long_ctx, inp, outp, cr, cw, rs in rows:
        add_usage(
            out[sid], inp, outp, cr, cw, rs, pricing.cost(model, inp, outp, cr, cw, bool(long_ctx)), model
        )
    return out


def live_usage(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    now: float | None = None,
    active_minutes: int = 30,
    agent: str | None = None,
    sessions: bool = True,
) -> dict[str, Any]:
    """The live usage document (``GET /api/v1/usage/live``); ``sessions`` False leaves the
    active sessions out (the windows and today's total alone: what a statusline needs)."""
    from agtaild.index.prepare import local_day
    from agtaild.index.stats import stats

    now = time.time() if now is None else now
    since = now - active_minutes * 60
    where, args = ["s.activity >= ?", "s.activity <= ?"], list[Any]([since, now + AHEAD])
    if agent:
        where.append("s.agent = ?")
        args.append(agent)
    active = (
        db.execute(
            "SELECT s.id, s.agent, s.sid, s.title, s.cwd, s.project, s.activity FROM sessions s"
            f" WHERE {' AND '.join(where)} ORDER BY s.activity DESC, s.id DESC LIMIT 500",
            args,
        ).fetchall()
        if sessions
        else []
    )
    ids = [row[0] for row in active]
    recent: dict[int, list[Entry]] = {i: [] for i in ids}
    models: dict[int, str | None] = {}
    if ids:
        marks = ",".join("?" * len(ids))
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM usage u WHERE u.session_id IN ({marks}) AND u.counted = 1 AND u.epoch >= ?"
            " ORDER BY u.epoch",
            [*ids, now - 30 * 60],
        ).fetchall()
        for row in rows:
            if row[2]:
                models[row[0]] = row[2]
        for e in _entries(rows, pricing):
            recent[e.session].append(e)
        # The model of each session's newest response (SQLite: a bare column beside max()
        # comes from the row holding the maximum).
        for sid, model, _ in db.execute(
            f"SELECT session_id, model, max(epoch) FROM usage WHERE session_id IN ({marks}) AND model IS NOT NULL"
            " GROUP BY session_id",
            ids,
        ):
            models.setdefault(sid, model)
    totals = _session_totals(db, pricing, ids)
    windows: list[dict[str, Any]] = []
    block: Block | None = None
    if agent in (None, CLAUDE):
        found, block = claude_windows(db, pricing, now)
        windows += found
    codex = codex_windows(db, now) if agent in (None, CODEX) else []
    windows += codex
    codex_primary = next((w for w in codex if w["kind"] == "primary"), None)
    docs = []
    for rid, agent_id, sid, title, cwd, project, activity in active:
        counts_against = None
        if agent_id == CLAUDE and block is not None:
            counts_against = f"{CLAUDE} block {iso(block.start)}"
        elif agent_id == CODEX and codex_primary is not None:
            counts_against = f"{CODEX} primary ({codex_primary['window_minutes']} min)"
        docs.append({
            "agent": agent_id, "id": sid, "title": title, "cwd": cwd, "project": project,
            "model": models.get(rid), "last_activity": iso(activity),
            "idle_seconds": max(0, round(now - activity)), "usage": totals[rid],
            "burn": rates(recent[rid], now), "minutes": per_minute(recent[rid], now), "window": counts_against,
        })  # fmt: skip
        if ahead(recent[rid], now):
            docs[-1]["ahead"] = ahead(recent[rid], now)
    docs.sort(
        key=lambda d: (
            -d["burn"]["5m"]["tokens"],
            -d["burn"]["30m"]["tokens"],
            d["idle_seconds"],
            d["agent"],
            d["id"],
        )
    )
    day = local_day(now) or ""
    today = stats(
        db,
        pricing,
        by="agent",
        agent=agent,
        since=TimeBound(epoch=now, day=day),
        until=TimeBound(epoch=now, day=day),
    )
    return {
        "now": iso(now),
        "now_epoch": now,
        "active_minutes": active_minutes,
        "sessions": docs,
        "windows": windows,
        "today": {"day": day, "usage": today["totals"], "agents": today["rows"]},
    }


def session_usage(db: sqlite3.Connection, pricing: PriceTable, rid: int, now: float) -> dict[str, Any]:
    """One session's totals and burn, active or not (the statusline's own session)."""
    agent, sid, title, activity = db.execute(
        "SELECT agent, sid, title, activity FROM sessions WHERE id = ?", (rid,)
    ).fetchone()
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM usage u WHERE u.session_id = ? AND u.counted = 1 AND u.epoch >= ?",
        (rid, now - 30 * 60),
    ).fetchall()
    return {
        "agent": agent, "id": sid, "title": title, "last_activity": iso(activity),
        "usage": _session_totals(db, pricing, [rid])[rid], "burn": rates(_entries(rows, pricing), now),
    }  # fmt: skip
