"""The typed calls scripts make: sessions, search, one session, its events, usage, live events,
how to resume. Each is one JSON-RPC method of agtaild (see docs/api.md); the answers are the
JSON documents the API documents (Session, Event, Usage: plain dicts, as the CLI's --json).

Lists are iterators that follow the keyset cursors page by page, so ``for s in
c.sessions(agent="codex")`` walks every session without holding them all; ``limit`` stops
early. Parameters left None are not sent (the daemon's defaults apply).
"""

from __future__ import annotations

import time

from agtail_client.errors import Unreachable
from agtail_client.transport import Transport
from agtail_client.wire import quote

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Iterator
    from typing import Any

#: Seconds between attempts when ``follow(..., reconnect=True)`` lost the daemon.
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)


class Client(Transport):
    """A client of one agtaild. Find it with ``Client.connect()`` (or ``discover()``, which
    returns None instead of raising), or give ``socket_path=`` or ``url=`` and ``token=``.
    Use it as a context manager, or call ``close()``."""

    # -- lists that follow cursors ----------------------------------------------------------
    def sessions(
        self,
        *,
        agent: str | None = None,
        cwd: str | None = None,
        project: str | None = None,
        since: str | None = None,
        until: str | None = None,
        imported: bool | None = None,
        collection: str | None = None,
        programmatic: bool | None = None,
        archived: bool | None = None,
        q: str | None = None,
        label: str | None = None,
        starred: bool | None = None,
        hidden: str | None = None,
        where: str | None = None,
        limit: int | None = None,
        page_size: int = 200,
    ) -> Iterator[dict[str, Any]]:
        """Sessions, newest first (``sessions.list``). ``since``/``until`` take a date, a
        date-time or an age (``7d``); ``q`` keeps sessions with an event matching it. The
        user's own state: ``label`` (KEY or KEY=VALUE), ``starred``, ``hidden`` (exclude, the
        default, only, include), ``where`` (a filter such as ``messages<2``: docs/organize.md)."""
        params = {
            "agent": agent,
            "cwd": cwd,
            "project": project,
            "since": since,
            "until": until,
            "imported": imported,
            "collection": collection,
            "programmatic": programmatic,
            "archived": archived,
            "q": q,
            "label": label,
            "starred": starred,
            "hidden": hidden,
            "where": where,
        }
        return self._pages("sessions.list", "sessions", params, limit, page_size)

    def search(
        self,
        q: str,
        *,
        agent: str | None = None,
        kind: str | None = None,
        session: str | None = None,
        cwd: str | None = None,
        project: str | None = None,
        since: str | None = None,
        until: str | None = None,
        mode: str | None = None,
        imported: bool | None = None,
        collection: str | None = None,
        limit: int | None = None,
        page_size: int = 100,
    ) -> Iterator[dict[str, Any]]:
        """Full-text hits, best first (``search``): each ``{"session", "event", "snippet"}``.
        ``session`` is ``AGENT:ID``; ``kind`` an event kind (text, tool_use, …); ``mode`` how
        ``q`` matches (phrase by default)."""
        params = {
            "q": q,
            "agent": agent,
            "kind": kind,
            "session": session,
            "cwd": cwd,
            "project": project,
            "since": since,
            "until": until,
            "mode": mode,
            "imported": imported,
            "collection": collection,
        }
        return self._pages("search", "hits", params, limit, page_size)

    def events(
        self,
        agent: str,
        session_id: str,
        *,
        after_seq: int | None = None,
        collection: str | None = None,
        path: str | None = None,
        limit: int | None = None,
        page_size: int = 1000,
    ) -> Iterator[dict[str, Any]]:
        """A session's events in order (``events.list``); ``after_seq`` starts after that seq.
        ``collection``/``path`` pick one copy when the id is in several (imported) places."""
        params = {
            "agent": agent,
            "id": session_id,
            "after_seq": after_seq,
            "collection": collection,
            "path": path,
        }
        return self._pages("events.list", "events", params, limit, page_size)

    def tool_calls(
        self,
        agent: str,
        session_id: str,
        *,
        tool: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
        page_size: int = 500,
    ) -> Iterator[dict[str, Any]]:
        """A session's tool calls in order (``tools.calls``): ``{"seq", "ts", "tool", "status",
        "duration_ms", "input", "input_cut"}``; ``tool``: only that tool's."""
        params = {"agent": agent, "id": session_id, "tool": tool, "collection": collection}
        return self._pages("tools.calls", "calls", params, limit, page_size)

    def children(
        self,
        agent: str,
        session_id: str,
        *,
        collection: str | None = None,
        limit: int | None = None,
        page_size: int = 500,
    ) -> Iterator[dict[str, Any]]:
        """The sessions this one started (subagents), oldest first (``sessions.children``)."""
        params = {"agent": agent, "id": session_id, "collection": collection}
        return self._pages("sessions.children", "sessions", params, limit, page_size)

    def recent_edits(
        self,
        *,
        agent: str | None = None,
        session_id: str | None = None,
        cwd: str | None = None,
        diff_lines: int | None = None,
        limit: int | None = None,
        page_size: int = 200,
    ) -> Iterator[dict[str, Any]]:
        """File changes of one session (``agent``, ``session_id``) or under an absolute
        directory (``cwd``), newest first, diffs cut to ``diff_lines`` (``edits.recent``)."""
        params = {"agent": agent, "id": session_id, "cwd": cwd, "diff_lines": diff_lines}
        return self._pages("edits.recent", "edits", params, limit, page_size)

    def _pages(
        self, method: str, key: str, params: dict[str, Any], limit: int | None, page_size: int
    ) -> Iterator[dict[str, Any]]:
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        sent = {k: v for k, v in params.items() if v is not None}
        left = limit
        cursor: str | None = None
        while left is None or left > 0:
            page = min(page_size, left) if left is not None else page_size
            doc = self.call(method, {**sent, "limit": page, **({"cursor": cursor} if cursor else {})})
            items = doc.get(key) or []
            yield from items[:left] if left is not None else items
            if left is not None:
                left -= len(items)
            cursor = doc.get("next")
            if not cursor or not items:
                return

    # -- single documents -------------------------------------------------------------------
    def session(
        self, agent: str, session_id: str, *, collection: str | None = None, path: str | None = None
    ) -> dict[str, Any]:
        """One session (``sessions.get``); ``session_id`` may be a unique prefix. Raises
        NotFound."""
        params = {"agent": agent, "id": session_id, "collection": collection, "path": path}
        doc = self.call("sessions.get", {k: v for k, v in params.items() if v is not None})
        return doc.get("session", doc) if isinstance(doc, dict) else doc

    def overview(self, agent: str, session_id: str, *, collection: str | None = None) -> dict[str, Any]:
        """One session at a glance (``sessions.overview``): ``{"session", "tools", "tool_calls",
        "tool_errors", "edits", "children", "children_total"}``."""
        params = {"agent": agent, "id": session_id, "collection": collection}
        return dict(self.call("sessions.overview", {k: v for k, v in params.items() if v is not None}))

    def change_state(
        self,
        agent: str,
        session_id: str,
        *,
        label: str | None = None,
        unlabel: str | None = None,
        star: bool | None = None,
        hide: bool | None = None,
        title: str | None = None,
        clear_title: bool | None = None,
        collection: str | None = None,
        path: str | None = None,
    ) -> dict[str, Any]:
        """Label (``KEY`` or ``KEY=VALUE``), unlabel, star, hide or title one session as the
        user (``state.change``): ``{"session", "changes": [{"what", "key", "value", "who",
        "accepted"}]}``. A bad value raises BadRequest and nothing of the call is written."""
        params = {
            "agent": agent,
            "id": session_id,
            "label": label,
            "unlabel": unlabel,
            "star": star,
            "hide": hide,
            "title": title,
            "clear_title": clear_title,
            "collection": collection,
            "path": path,
        }
        return dict(self.call("state.change", {k: v for k, v in params.items() if v is not None}))

    def stats(
        self,
        *,
        by: str | None = None,
        agent: str | None = None,
        project: str | None = None,
        since: str | None = None,
        until: str | None = None,
        imported: bool | None = None,
        collection: str | None = None,
    ) -> dict[str, Any]:
        """Token usage and cost (``stats``): ``{"totals": Usage, "rows": [{"key", …Usage}]}``,
        grouped ``by`` day (default), model, agent, project, session, tool or hour."""
        params = {
            "by": by,
            "agent": agent,
            "project": project,
            "since": since,
            "until": until,
            "imported": imported,
            "collection": collection,
        }
        return dict(self.call("stats", {k: v for k, v in params.items() if v is not None}))

    def agents(self) -> list[dict[str, Any]]:
        """Known agents, their roots and session counts (``agents.list``)."""
        doc = self.call("agents.list", {})
        return list(doc.get("agents", [])) if isinstance(doc, dict) else list(doc)

    def resume_command(self, agent: str, session_id: str) -> dict[str, Any]:
        """How to resume a session with its agent (``resume.command``): ``{agent, cwd,
        cwd_exists, argv}``. Raises Refused for imported or archived sessions."""
        return dict(self.call("resume.command", {"agent": agent, "id": session_id}))

    # -- live ---------------------------------------------------------------------------------
    def follow(
        self,
        agent: str,
        session_id: str,
        *,
        after_seq: int | None = None,
        last_event_id: str | None = None,
        reconnect: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """New events of one session as they are written (SSE). Blocks; ends when the session
        is removed.

        ``after_seq=-1`` sends the whole session first; ``last_event_id`` (the last seq seen,
        as text) resumes a stream, missing nothing. When the daemon goes away this raises
        Unreachable, unless ``reconnect``: then it tries again (for about 15 s, see
        RECONNECT_DELAYS; a client from connect() also reads agtaild.json again, in case the
        daemon came back on another port) and resumes after the last event it gave. If the file is truncated
        or replaced, the events start again from the first (seqs repeat).
        """
        path = f"/sessions/{quote(agent, safe='')}/{quote(session_id, safe='')}/follow"
        params = {"after_seq": after_seq} if after_seq is not None else None
        failures = 0
        while True:
            try:
                stream = self.stream(path, params, last_event_id=last_event_id)
            except (Unreachable, OSError):
                if not reconnect or failures >= len(RECONNECT_DELAYS):
                    raise
                time.sleep(RECONNECT_DELAYS[failures])
                failures += 1
                self.rediscover()  # when found through a data dir: the daemon may have moved
                continue
            with stream:
                for ev in stream:
                    if ev.event == "event":
                        failures = 0
                        yield ev.data
                    elif ev.event == "removed":
                        return
                last_event_id = stream.last_event_id or last_event_id
            if not reconnect:
                raise Unreachable("agtaild ended the stream (it is stopping or restarting)")
            if failures >= len(RECONNECT_DELAYS):
                raise Unreachable("agtaild ended the stream and did not come back")
            time.sleep(RECONNECT_DELAYS[failures])
            failures += 1

    def changes(
        self, *, agent: str | None = None, last_event_id: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Sessions added, updated or removed, as they happen (SSE ``/changes``): each
        ``{"agent", "id", "path", "action"}``; ``{"action": "reset"}`` means "list again"
        (changes were missed). Raises Unreachable when the daemon goes away."""
        with self.stream("/changes", {"agent": agent}, last_event_id=last_event_id) as stream:
            for ev in stream:
                if ev.event == "change" and isinstance(ev.data, dict):
                    yield ev.data
                elif ev.event == "reset":
                    yield {"action": "reset"}
        raise Unreachable("agtaild ended the stream (it is stopping or restarting)")
