"""A small in-memory stand-in for agtaild.query.service.Service, for fast tests of the HTTP layers.

It answers the same methods with the same document shapes (built from the real msgspec
model), raises the same errors, and records index updates, so the API, JSON-RPC, SSE and
writer tests exercise their own code rather than SQLite. End-to-end tests use the real service.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from agtaild.errors import NotFound, UsageError
from agtaild.model import Event, Session, Usage, to_builtins


class FakeService:
    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str], Session] = {}
        self.events: dict[tuple[str, str], list[Event]] = {}
        self.lock = threading.Lock()
        self.updates: list[dict[str, Any]] = []
        self.next_report: list[dict[str, Any]] = []
        self.closed = False
        self.fail_with: Exception | None = None

    # -- test helpers ---------------------------------------------------------------------
    def add(self, agent: str, sid: str, texts: Iterable[str], **fields: Any) -> None:
        with self.lock:
            key = (agent, sid)
            self.sessions[key] = Session(agent=agent, id=sid, path=f"/x/{sid}.jsonl", title=sid, **fields)
            evs = self.events.setdefault(key, [])
            for text in texts:
                evs.append(Event(seq=len(evs), kind="text", role="user", text=text, ts="2026-01-01T00:00:00Z", uuid=f"u{len(evs)}"))

    def truncate(self, agent: str, sid: str, texts: Iterable[str]) -> None:
        with self.lock:
            self.events[(agent, sid)] = []
        self.add(agent, sid, texts)

    # -- the service interface ------------------------------------------------------------
    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.fail_with is not None:
            raise self.fail_with
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            raise NotFound(f"no method {method}")
        with self.lock:
            return dict(handler(params))

    def update_index(self, *, full: bool = False, only_paths: Iterable[str] | None = None, progress: Any = None) -> dict[str, Any]:
        paths = None if only_paths is None else sorted(only_paths)
        self.updates.append({"full": full, "only_paths": paths})
        if progress is not None:
            progress()
        changed, self.next_report = self.next_report, []
        return {"sessions": len(self.sessions), "events": 0, "files": 0, "bad_lines": 0, "seconds": 0.0, "changed": changed}

    def close(self) -> None:
        self.closed = True

    def _find(self, params: dict[str, Any]) -> tuple[str, str]:
        agent, sid = params["agent"], params["id"]
        matches = [k for k in self.sessions if k[0] == agent and k[1].startswith(sid)]
        if len(matches) != 1:
            raise NotFound(f"no session {agent}:{sid}")
        return matches[0]

    def _sessions_list(self, p: dict[str, Any]) -> dict[str, Any]:
        rows = [s for s in self.sessions.values() if p.get("agent") in (None, s.agent)]
        rows.sort(key=lambda s: s.id)
        start = int(p.get("cursor") or 0)
        limit = p.get("limit", 50)
        page = rows[start : start + limit]
        nxt = str(start + limit) if start + limit < len(rows) else None
        return {"sessions": to_builtins(page), "next": nxt}

    def _sessions_get(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"session": to_builtins(self.sessions[self._find(p)])}

    def _events_list(self, p: dict[str, Any]) -> dict[str, Any]:
        key = self._find(p)
        after = int(p["cursor"]) if p.get("cursor") else p.get("after_seq", -1)
        limit = p.get("limit", 100)
        evs = [e for e in self.events[key] if e.seq > after][:limit]
        more = evs and any(e.seq > evs[-1].seq for e in self.events[key])
        return {"events": to_builtins(evs), "next": str(evs[-1].seq) if more else None}

    def _search(self, p: dict[str, Any]) -> dict[str, Any]:
        if p["q"] == "boom":
            raise UsageError("parameter 'q': boom is not searchable", data={"param": "q"})
        hits = []
        for key, evs in self.events.items():
            for e in evs:
                if e.text and p["q"] in e.text:
                    hits.append({"session": to_builtins(self.sessions[key]), "event": to_builtins(e), "snippet": e.text})
        return {"hits": hits[: p.get("limit", 20)], "next": None}

    def _stats(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"totals": to_builtins(Usage()), "rows": []}

    def _agents_list(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"agents": [{"id": "claude-code", "name": "Claude Code"}]}


FAKE_METHODS = ("sessions.list", "sessions.get", "events.list", "search", "stats", "agents.list")
