"""Server-Sent Events: `follow` (one session's new events) and `changes` (sessions added,
updated or removed).

Both are woken by the change hub, never by polling; a comment line every KEEPALIVE seconds
keeps proxies from closing the stream and lets us notice clients that went away.

follow: event ``event`` per new event with ``id: <seq>``; a reconnecting client sends
``Last-Event-ID`` (or ``after_seq``) and gets every event after it. When the session's file
was truncated or replaced, the stream sends ``reset`` and starts again from the first event;
when the session disappears it sends ``removed`` and ends; when it moves (its file deleted and
the archive's copy standing in) it is followed at its new place. Events already delivered are not
re-sent when they are later completed (e.g. a tool result merged into its call): re-read
them with ``events.list``.

changes: event ``change`` per changed session with ``id: <boot>-<n>``; ``Last-Event-ID`` from
the same daemon run replays what was missed, anything else gets ``reset`` (re-list).

A stream ends as soon as its client's connection is gone (the guarded connection says so,
agtaild/api/guard.py), not at its next keepalive: ``live_streams`` in /health then counts the
streams browsers really hold.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

from agtaild.api.context import CTX, ApiContext, encode
from agtaild.api.hub import ChangeHub
from agtaild.api.params import Method, Param, ParamError
from agtaild.api.rest import API

KEEPALIVE = 15.0
PAGE = 500

FOLLOW = Method(
    "follow",
    "Follow a session's new events (SSE)",
    (
        Param("agent", "string", "agent id", required=True, in_path=True),
        Param("id", "string", "session id (a unique prefix is enough)", required=True, in_path=True),
        Param("after_seq", "integer", "start after this seq (-1: from the first event; default: only new ones)", minimum=-1),
        Param("after", "integer", "the same as after_seq (what the web viewer sends)", minimum=-1),
    ),
)
CHANGES = Method(
    "changes",
    "Sessions added, updated or removed (SSE)",
    (Param("agent", "string", "only this agent's sessions"),),
)


def _frame(event: str, data: Any, id_: str | None = None) -> bytes:
    head = f"id: {id_}\n" if id_ is not None else ""
    return f"{head}event: {event}\ndata: ".encode() + encode(data) + b"\n\n"


async def _open(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    )
    await resp.prepare(request)
    await resp.write(b"retry: 1000\n: connected\n\n")
    return resp


async def _wait(request: web.Request, hub: ChangeHub, pos: int, timeout: float = KEEPALIVE) -> bool | None:
    """Wait for the hub: True when something was published after ``pos``, False after
    ``timeout`` seconds of quiet, None when the client's connection is gone."""
    gone = getattr(request.protocol, "gone", None)  # only the daemon's guarded connections have it
    if not isinstance(gone, asyncio.Future):
        return await hub.wait(pos, timeout)
    if gone.done():
        return None
    waiter = asyncio.ensure_future(hub.wait(pos, timeout))
    await asyncio.wait((waiter, gone), return_when=asyncio.FIRST_COMPLETED)
    if waiter.done():
        return waiter.result()
    waiter.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiter
    return None


async def _last_seq(ctx: ApiContext, exact: dict[str, Any]) -> int:
    """The seq of the session's last event (-1 when it has none), paging with the keyset cursor."""
    last, cursor = -1, None
    while True:
        params: dict[str, Any] = {**exact, "limit": 1000}
        if cursor:
            params["cursor"] = cursor
        doc = await ctx.call("events.list", params)
        if doc["events"]:
            last = int(doc["events"][-1]["seq"])
        cursor = doc.get("next")
        if not cursor:
            return last


def _identity(event: dict[str, Any]) -> tuple[Any, ...]:
    return (event.get("seq"), event.get("kind"), event.get("uuid"), event.get("ts"))


async def follow(request: web.Request) -> web.StreamResponse:
    ctx = request.app[CTX]
    params = FOLLOW.parse_query(request.query, request.match_info)
    hub = ctx.hub
    hub_pos = hub.last  # taken before reading: nothing published from here on can be missed
    session = (await ctx.call("sessions.get", {"agent": params["agent"], "id": params["id"]}))["session"]
    agent, sid = session["agent"], session["id"]
    exact: dict[str, Any] = {"agent": agent, "id": sid}
    if session.get("path"):
        exact["path"] = session["path"]  # this copy of the session, not another with the same id
    after: int
    header = request.headers.get("Last-Event-ID", "").strip()
    if header:
        if not header.lstrip("-").isdigit():
            raise ParamError("Last-Event-ID", f"expected an event seq, got {header[:40]!r}")
        after = max(-1, int(header))
    elif "after_seq" in params or "after" in params:
        after = int(params["after_seq"] if "after_seq" in params else params["after"])
    else:
        after = await _last_seq(ctx, exact)
    resp = await _open(request)
    hub.subscribers += 1
    known: tuple[Any, ...] | None = None  # identity of the last event delivered
    try:
        while True:
            if after >= 0 and not await _still_there(ctx, exact, after, known):
                await resp.write(_frame("reset", {"reason": "the session was truncated or replaced"}))
                after, known = -1, None
            while True:
                doc = await ctx.call("events.list", {**exact, "after_seq": after, "limit": PAGE})
                for ev in doc["events"]:
                    await resp.write(_frame("event", ev, str(ev["seq"])))
                    after, known = int(ev["seq"]), _identity(ev)
                if len(doc["events"]) < PAGE:
                    break
            while True:
                woke = await _wait(request, hub, hub_pos)
                if hub.closed or woke is None:
                    return resp
                if not woke:
                    await resp.write(b": keepalive\n\n")
                    continue
                changes, lost = hub.since(hub_pos)
                hub_pos = hub.last
                mine = [c for c in changes if c.agent == agent and c.id == sid]
                if any(c.action == "removed" for c in mine):
                    await resp.write(_frame("removed", {"agent": agent, "id": sid}))
                    return resp
                moved = [c for c in mine if c.action == "updated" and "path" in exact and c.path and c.path != exact["path"]]
                if moved:
                    # The session moved within one update (its agent deleted the file and the
                    # archive's copy stands in, or a database read again after a lock): the same
                    # session, followed at its new place; its events are the same events.
                    exact["path"] = moved[-1].path
                if mine or lost:
                    break
    except ConnectionResetError:
        return resp  # the client went away
    finally:
        hub.subscribers -= 1


async def _still_there(ctx: ApiContext, exact: dict[str, Any], seq: int, known: tuple[Any, ...] | None) -> bool:
    """Is the last delivered event still the same event? If not, the file was rewritten."""
    try:
        doc = await ctx.call("events.list", {**exact, "after_seq": seq - 1, "limit": 1})
    except Exception:
        return True  # a transient read problem must not look like a reset; the next wake retries
    events = doc["events"]
    if not events or int(events[0]["seq"]) != seq:
        return False
    return known is None or _identity(events[0]) == known


async def changes(request: web.Request) -> web.StreamResponse:
    ctx = request.app[CTX]
    params = CHANGES.parse_query(request.query)
    agent = params.get("agent")
    hub = ctx.hub
    header = request.headers.get("Last-Event-ID")
    pos = hub.parse_event_id(header)
    visible = getattr(ctx.service, "visible", None)
    resp = await _open(request)
    hub.subscribers += 1
    try:
        if pos is None:
            pos = hub.last
            if header:
                await resp.write(_frame("reset", {"reason": "missed changes cannot be replayed"}, f"{hub.boot}-{pos}"))
        while not hub.closed:
            missed, lost = hub.since(pos)
            if lost:
                await resp.write(_frame("reset", {"reason": "missed changes cannot be replayed"}, f"{hub.boot}-{hub.last}"))
                missed = []
            shown = missed
            if missed and visible is not None:  # a team server's reader: only sessions it may see
                shown = await ctx.run(lambda m=missed: visible(m))  # type: ignore[misc]
            for c in shown:
                if agent is None or c.agent == agent:
                    await resp.write(_frame("change", c.as_json(), c.event_id(hub.boot)))
            pos = max(pos, hub.last if lost else (missed[-1].n if missed else pos))
            woke = await _wait(request, hub, pos)
            if woke is None:
                break
            if not woke and not hub.closed:
                await resp.write(b": keepalive\n\n")
    except ConnectionResetError:
        pass  # the client went away
    finally:
        hub.subscribers -= 1
    return resp


def add_routes(app: web.Application) -> None:
    app.router.add_get(f"{API}/sessions/{{agent}}/{{id}}/follow", follow)
    app.router.add_get(f"{API}/changes", changes)
