"""The web viewer in a real browser (headless Chromium), against the real API layer.

The API application is agtaild's own (create_app: routes, parameter checks, token and cookie,
SSE), over a small in-memory service with hand-written sessions, so that every view can be
checked against known data: paging, filters, search snippets, subagent links, live updates,
and above all that hostile transcript text stays text.

Screenshots go to $AGTAIL_WEB_SHOTS when set (to look at the design), else to a temp dir.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.app import create_app
from agtaild.api.hub import ChangeHub
from agtaild.api.security import Security
from agtaild.errors import NotFound
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

TOKEN = "test-token-" + "x" * 40
SESSION_PAGE_CAP = 3  # the fake returns at most this many sessions per page, to exercise paging
EVENT_PAGE_CAP = 4

# Hostile text: if any of it is ever parsed as markup, window.__pwned gets set or an element
# with an event handler appears.
XSS_TITLE = '<img src=x onerror="window.__pwned=1">Refactor auth'
XSS_SCRIPT = "<script>window.__pwned=2</script>"
XSS_IMG = '<img src=x onerror="window.__pwned=3">'
XSS_SVG = '<svg onload="window.__pwned=4"></svg>'
XSS_JS_LINK = "javascript:window.__pwned=5"
XSS_ATTR_LINK = 'https://example.com/"onmouseover="window.__pwned=6'

USAGE = {
    "input_tokens": 1200,
    "output_tokens": 3400,
    "cache_read_tokens": 250000,
    "cache_write_tokens": 12000,
    "reasoning_tokens": 0,
    "total_tokens": 266600,
    "cost_usd": 0.4213,
}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _session(agent: str, sid: str, title: str, mtime: float, **kw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "agent": agent,
        "id": sid,
        "path": f"/home/u/.{agent}/{sid}.jsonl",
        "title": title,
        "cwd": "/home/u/src/webapp",
        "project": "webapp",
        "git_branch": "main",
        "models": ["claude-sonnet-4-5"],
        "started": _iso(mtime - 2400),
        "ended": _iso(mtime),
        "mtime": mtime,
        "messages": 6,
        "usage": dict(USAGE),
        "origin": "cli",
        "programmatic": False,
        "parent": None,
        "imported": False,
        "collection": None,
        "archived": False,
        "bad_lines": 0,
        "truncated": False,
        "ending": None,
        "compactions": 0,
        "resumable": True,
    }
    doc.update(kw)
    return doc


def _ev(seq: int, kind: str, **kw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "seq": seq,
        "kind": kind,
        "ts": f"2026-05-01T09:{seq:02d}:00Z",
        "role": None,
        "text": None,
        "tool": None,
        "input": None,
        "result": None,
        "is_error": None,
        "hook": None,
        "model": None,
        "usage": None,
        "uuid": f"u-{seq}",
        "parent_uuid": None,
        "source": {"line": seq + 1},
        "raw": None,
    }
    doc.update(kw)
    return doc


MAIN = "a1b2c3d4-main-session"
CHILD = "agent-77ab"
HOSTILE = "e5f6-hostile-session"
CODEX = "019a-codex-session"
LIVE = "live-0001"


def _data() -> tuple[list[dict[str, Any]], dict[tuple[str, str], list[dict[str, Any]]]]:
    base = 1_777_000_000.0
    sessions = [
        _session("claude-code", MAIN, "Fix the flaky login test", base + 100, messages=14),
        _session(
            "claude-code", CHILD, "Find where the login timeout is set", base + 90,
            parent={"agent": "claude-code", "id": MAIN, "tool_use_id": "toolu_task1"}, messages=3,
        ),
        _session("claude-code", HOSTILE, XSS_TITLE, base + 80, project='<b onmouseover="window.__pwned=7">proj</b>',
                 models=['"><script>window.__pwned=8</script>'], imported=True, collection="laptop"),
        _session("codex", CODEX, "Add a dark mode to the settings page", base + 70, models=["gpt-5-codex"],
                 archived=True, resumable=False),
        _session("claude-code", "old-1", "Write the README", base - 86400 * 3),
        _session("claude-code", "old-2", "Bump dependencies", base - 86400 * 4, usage={**USAGE, "cost_usd": None}),
        _session("codex", "old-3", "Explain the build", base - 86400 * 5, models=["gpt-5"]),
        _session("claude-code", LIVE, "A session being written right now", base + 50, messages=1),
    ]
    main_events = [
        _ev(0, "text", role="user", text="The login test fails one run in ten. Can you find out why?\nIt is tests/test_login.py."),
        _ev(1, "thinking", role="assistant", text="The flakiness smells like a timing issue in the session fixture."),
        _ev(2, "text", role="assistant", model="claude-sonnet-4-5",
            text="Let me look at the test first. See https://docs.pytest.org/en/stable/ for fixtures.\n\n"
                 "```python\ndef test_login(client):\n    assert client.login()\n```\nThen `pytest -k login`."),
        _ev(3, "tool_use", role="assistant", tool="Bash", tool_use_id="toolu_bash1",
            input={"command": "pytest tests/test_login.py -x -q", "description": "Run the login test"},
            result="F\nFAILED tests/test_login.py::test_login - TimeoutError: login took 5.2s\n1 failed in 5.31s",
            is_error=False),
        _ev(4, "hook", role=None, hook={"event": "PostToolUse", "tool": "Bash", "command": "./hooks/lint.sh", "text": "lint ok"}),
        _ev(5, "tool_use", role="assistant", tool="Read", tool_use_id="toolu_read1",
            input={"file_path": "/home/u/src/webapp/missing.py"}, result="File does not exist.", is_error=True),
        _ev(6, "tool_use", role="assistant", tool="Task", tool_use_id="toolu_task1",
            input={"description": "Find the timeout", "prompt": "Where is the login timeout configured?"},
            result=[{"type": "text", "text": "The timeout is set in conftest.py line 12 (5 s)."}], is_error=False),
        _ev(7, "tool_use", role="assistant", tool="Edit", tool_use_id="toolu_edit1",
            input={"file_path": "/home/u/src/webapp/conftest.py", "old_string": "TIMEOUT = 5", "new_string": "TIMEOUT = 30"},
            result="The file was updated.", is_error=False),
        _ev(8, "system", role=None, subtype="compact_boundary", text="Conversation compacted"),
        _ev(9, "text", role="user", text="Great, does it pass now? Mention the zebracorn keyword please."),
        _ev(10, "text", role="assistant", model="claude-sonnet-4-5",
            text="Yes: 50 runs in a row pass. The zebracorn keyword is here."),
        _ev(11, "summary", role=None, text="Fixed a flaky login test by raising the fixture timeout"),
    ]
    hostile_events = [
        _ev(0, "text", role="user", text=f"Please render this: {XSS_SCRIPT} and {XSS_IMG} and {XSS_SVG}"),
        _ev(1, "text", role="assistant", model='<img src=x onerror="window.__pwned=9">',
            text=f"Links: {XSS_JS_LINK} and [click](javascript:window.__pwned=10) and {XSS_ATTR_LINK} and https://safe.example.org/page."),
        _ev(2, "tool_use", role="assistant", tool='<img src=x onerror="window.__pwned=11">', tool_use_id="toolu_x",
            input={"command": XSS_SCRIPT, "<b>key</b>": XSS_IMG}, result=f"{XSS_SVG}\n{XSS_SCRIPT}", is_error=False),
        _ev(3, "unknown", role=None, raw={"type": "weird", "html": XSS_IMG}),
        _ev(4, "hook", role=None, hook={"event": XSS_IMG, "tool": "Bash", "command": XSS_SCRIPT, "text": XSS_SVG}),
    ]
    child_events = [
        _ev(0, "text", role="user", text="Where is the login timeout configured?"),
        _ev(1, "text", role="assistant", text="In conftest.py, line 12."),
    ]
    live_events = [_ev(0, "text", role="user", text="Start of a live session.")]
    events = {
        ("claude-code", MAIN): main_events,
        ("claude-code", HOSTILE): hostile_events,
        ("claude-code", CHILD): child_events,
        ("claude-code", LIVE): live_events,
    }
    for s in sessions:
        events.setdefault((s["agent"], s["id"]), [_ev(0, "text", role="user", text=s["title"])])
    return sessions, events


def _texts(ev: dict[str, Any]) -> str:
    parts = [ev.get("text") or ""]
    for key in ("input", "result"):
        if ev.get(key) is not None:
            parts.append(json.dumps(ev[key], ensure_ascii=False))
    return "\n".join(parts)


class FakeService:
    """The service methods the API calls, over in-memory documents (thread-safe)."""

    def __init__(self) -> None:
        self.sessions, self.events = _data()
        self.lock = threading.Lock()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.calls.append((method, dict(params)))
            return copy.deepcopy(getattr(self, method.replace(".", "_"))(params))

    def _find(self, agent: str, sid: str) -> dict[str, Any]:
        for s in self.sessions:
            if s["agent"] == agent and s["id"].startswith(sid):
                return s
        raise NotFound(f"no session {agent}:{sid}")

    @staticmethod
    def _page(items: list[Any], params: dict[str, Any], cap: int) -> tuple[list[Any], str | None]:
        start = int(params.get("cursor") or 0)
        size = min(int(params.get("limit") or 50), cap)
        page = items[start : start + size]
        more = start + size < len(items)
        return page, (str(start + size) if more else None)

    def agents_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "agents": [
                {"id": "claude-code", "name": "Claude Code", "sessions": 6},
                {"id": "codex", "name": "Codex", "sessions": 2},
                {"id": "gemini", "name": "Gemini CLI", "sessions": 0},
            ]
        }

    def sessions_list(self, params: dict[str, Any]) -> dict[str, Any]:
        items = sorted(self.sessions, key=lambda s: -s["mtime"])
        if params.get("agent"):
            items = [s for s in items if s["agent"] == params["agent"]]
        if params.get("cwd"):
            items = [s for s in items if s["cwd"] == params["cwd"]]
        if params.get("q"):
            items = [s for s in items if params["q"].lower() in s["title"].lower()]
        for flag in ("imported", "archived"):
            if flag in params:
                items = [s for s in items if s[flag] == params[flag]]
        page, nxt = self._page(items, params, SESSION_PAGE_CAP if "cwd" not in params else 1000)
        return {"sessions": page, "next": nxt, **({"total": len(items)} if params.get("total") else {})}

    def sessions_get(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"session": self._find(params["agent"], params["id"])}

    def events_list(self, params: dict[str, Any]) -> dict[str, Any]:
        s = self._find(params["agent"], params["id"])
        items = self.events[(s["agent"], s["id"])]
        if "before_seq" in params:  # the page just before a seq, as the real service gives it
            earlier = [e for e in items if e["seq"] < params["before_seq"]]
            page = earlier[-min(int(params.get("limit") or 50), EVENT_PAGE_CAP) :]
            prev = page[0]["seq"] if page and page[0]["seq"] > items[0]["seq"] else None
            return {"events": page, "next": None, "prev_seq": prev}
        if "after_seq" in params:
            items = [e for e in items if e["seq"] > params["after_seq"]]
        page, nxt = self._page(items, params, EVENT_PAGE_CAP if "after_seq" not in params else 1000)
        all_items = self.events[(s["agent"], s["id"])]
        prev_seq = page[0]["seq"] if page and page[0]["seq"] > all_items[0]["seq"] else None
        return {"events": page, "next": nxt, "prev_seq": prev_seq}

    def projects_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """One project per working directory (the fakes have no git roots)."""
        groups: dict[str, dict[str, Any]] = {}
        for s in self.sessions:
            if params.get("agent") and s["agent"] != params["agent"]:
                continue
            g = groups.setdefault(s["cwd"], {"project": s["cwd"].rsplit("/", 1)[-1], "root": s["cwd"], "sessions": 0,
                                             "agents": [], "last_active": 0.0, "cwds": [s["cwd"]], "total_tokens": 0,
                                             "cost_usd": 0.0})  # fmt: skip
            g["sessions"] += 1
            g["agents"] = sorted({*g["agents"], s["agent"]})
            g["last_active"] = max(g["last_active"], s["mtime"])
            g["total_tokens"] += s["usage"]["total_tokens"]
        return {"projects": sorted(groups.values(), key=lambda g: -g["last_active"])}

    def resume_command(self, params: dict[str, Any]) -> dict[str, Any]:
        s = self._find(params["agent"], params["id"])
        return {"agent": s["agent"], "cwd": s["cwd"], "cwd_exists": True, "argv": ["claude", "--resume", s["id"]]}

    def search(self, params: dict[str, Any]) -> dict[str, Any]:
        q = params["q"].lower()
        hits = []
        for s in sorted(self.sessions, key=lambda s: -s["mtime"]):
            if params.get("agent") and s["agent"] != params["agent"]:
                continue
            for ev in self.events[(s["agent"], s["id"])]:
                if params.get("kind") and ev["kind"] != params["kind"]:
                    continue
                text = _texts(ev)
                at = text.lower().find(q)
                if at < 0:
                    continue
                lo = max(0, at - 30)
                snippet = text[lo:at] + "«" + text[at : at + len(q)] + "»" + text[at + len(q) : at + len(q) + 60]
                hits.append({"session": s, "event": ev, "snippet": snippet.replace("\n", " ")})
        page, nxt = self._page(hits, params, 20)
        return {"hits": page, "next": nxt}

    def stats(self, params: dict[str, Any]) -> dict[str, Any]:
        by = params.get("by", "day")
        keys = {
            "day": [f"2026-04-{d:02d}" for d in range(10, 30)],
            "model": ["claude-sonnet-4-5", "gpt-5-codex", "claude-opus-4-1"],
            "agent": ["claude-code", "codex"],
        }.get(by, ["x"])
        rows: list[dict[str, Any]] = []
        for i, key in enumerate(keys):
            n = 1000 * (i + 1) * (3 if i % 4 == 0 else 1)
            rows.append({"key": key, "input_tokens": n, "output_tokens": n // 2, "cache_read_tokens": n * 10,
                         "cache_write_tokens": n // 4, "reasoning_tokens": 0, "total_tokens": n * 11 + n // 2 + n // 4,
                         "cost_usd": None if key == "claude-opus-4-1" else n / 20000})
        totals: dict[str, Any] = {k: sum(r[k] for r in rows) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                        "cache_write_tokens", "reasoning_tokens", "total_tokens")}
        totals["cost_usd"] = None if any(r["cost_usd"] is None for r in rows) else sum(r["cost_usd"] for r in rows)
        return {"totals": totals, "rows": rows}

    def usage_live(self, params: dict[str, Any]) -> dict[str, Any]:
        """The shape of agtaild.index.live.live_usage's answer (tests/test_live_usage.py checks
        the real one), with a hostile title."""
        rate = {"minutes": 5, "tokens": 4400, "responses": 4, "tokens_per_minute": 880.0, "usd_per_hour": 0.36}
        slow = {"minutes": 30, "tokens": 550, "responses": 1, "tokens_per_minute": 18.3, "usd_per_hour": None,
                "usd_per_hour_known": 0.01}  # fmt: skip
        session = {"agent": "claude-code", "id": "fast-1111", "title": XSS_TITLE, "cwd": "/w/app", "project": "app",
                   "model": "claude-opus-4-8", "last_activity": "2026-03-01T11:59:00Z", "idle_seconds": 60,
                   "usage": dict(USAGE), "burn": {"5m": rate, "30m": rate}, "minutes": [0] * 25 + [1100] * 4 + [0],
                   "window": "claude-code block 2026-03-01T11:00:00Z"}  # fmt: skip
        other = {**session, "agent": "codex", "id": "01aa0000-0001", "title": "fix the build", "model": "gpt-5.5",
                 "burn": {"5m": {**slow, "minutes": 5, "tokens": 0, "tokens_per_minute": 0.0}, "30m": slow},
                 "minutes": [0] * 20 + [550] + [0] * 9, "window": None}  # fmt: skip
        block = {"agent": "claude-code", "kind": "block", "source": "computed", "start": "2026-03-01T11:00:00Z",
                 "end": "2026-03-01T16:00:00Z", "active": True, "resets_in_seconds": 14400, "usage": dict(USAGE),
                 "projection": {"label": "projection", "from_rate": "30m", "remaining_minutes": 240,
                                "total_tokens": 900000, "cost_usd": 1.5}}  # fmt: skip
        primary = {"agent": "codex", "kind": "primary", "source": "recorded", "used_percent": 42.5, "window_minutes": 300,
                   "resets_at": "2026-03-01T14:00:00Z", "resets_in_seconds": 7200, "recorded_at": "2026-03-01T11:50:00Z",
                   "age_seconds": 600, "unknown": {XSS_IMG: 1}}  # fmt: skip
        return {"now": "2026-03-01T12:00:00Z", "now_epoch": 1772366400.0, "active_minutes": 30,
                "sessions": [session, other], "windows": [block, primary],
                "today": {"day": "2026-03-01", "usage": dict(USAGE), "agents": []}}  # fmt: skip


METHODS = ["agents.list", "sessions.list", "sessions.get", "events.list", "resume.command", "search", "stats", "projects.list",
           "usage.live"]  # fmt: skip


class Site:
    def __init__(self, server: Any, service: FakeService, hub: ChangeHub) -> None:
        self.server = server
        self.service = service
        self.hub = hub

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server.port}{path}"


@pytest.fixture
async def site(aiohttp_server: Any) -> Site:
    service = FakeService()
    hub = ChangeHub()
    app = create_app(service, methods=METHODS, security=Security(TOKEN), hub=hub, readers=2)
    server = await aiohttp_server(app, host="127.0.0.1")
    return Site(server, service, hub)


async def login(browser: Browser, site: Site, hash_: str = "") -> None:
    await browser.goto(site.url(f"/login?token={TOKEN}"))
    await browser.wait_for("location.pathname === '/' && !!window.agtail", what="the viewer after login")
    if hash_:
        await browser.eval(f"location.hash = {json.dumps(hash_)}")


async def assert_inert(browser: Browser) -> None:
    """Nothing from the data ran or became an element."""
    found = await browser.eval(
        """(() => ({
          pwned: window.__pwned === undefined ? null : window.__pwned,
          scripts: [...document.scripts].map((s) => s.getAttribute('src')),
          bad: document.querySelectorAll('img, svg, iframe, object, embed, b, [onerror], [onload], [onmouseover]').length,
          badLinks: [...document.querySelectorAll('a[href]')].filter((a) => !/^(https?:|#)/.test(a.getAttribute('href')) && a.getAttribute('href') !== '/').map((a) => a.getAttribute('href')),
        }))()"""
    )
    assert found == {"pwned": None, "scripts": ["/web/main.js"], "bad": 0, "badLinks": []}, found


def rows_js() -> str:
    return "[...document.querySelectorAll('#view-sessions .srow')].map((r) => r.querySelector('.srow-title').textContent)"


async def test_session_list_pages_filters_and_stays_inert(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site)
    titles = await browser.wait_for(f"(() => {{ const t = {rows_js()}; return t.length >= 3 && t; }})()", what="first page")
    assert titles == ["Fix the flaky login test", "Find where the login timeout is set", XSS_TITLE]
    body = await browser.text("#view-sessions")
    assert "webapp" in body and "claude-code" in body and "imported · laptop" in body and "subagent" in body
    await assert_inert(browser)
    # The header counts every session, not the ones loaded so far ("3+ sessions"): issue 23 #22.
    count_js = "document.querySelector('#view-sessions .count').textContent"
    assert await browser.wait_for(f"{count_js} !== 'Loading…' && {count_js}") == f"{len(site.service.sessions)} sessions"

    # Keyset pages: "load more" until everything is there, newest first, grouped by day.
    for _ in range(5):
        if not await browser.eval("!!document.querySelector('#view-sessions button.load-more')"):
            break
        count = len(await browser.eval(rows_js()))
        await browser.click("#view-sessions button.load-more")
        await browser.wait_for(f"{rows_js()}.length > {count}", what="the next page")
    titles = await browser.eval(rows_js())
    assert len(titles) == len(site.service.sessions)
    assert titles[-1] == "Explain the build"
    assert await browser.eval(count_js) == f"{len(site.service.sessions)} sessions"
    days = await browser.eval("[...document.querySelectorAll('#view-sessions .day')].map((d) => d.textContent)")
    assert len(days) >= 3 and len(days) == len(set(days))
    body = await browser.text("#view-sessions")
    assert "archived" in body
    await browser.screenshot(shots / "sessions.png")

    # Filter by agent through the select; the hash records it.
    await browser.eval(
        "(() => { const s = document.querySelector('#view-sessions select.agent-select'); s.value = 'codex';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    await browser.wait_for(
        "(() => { const b = [...document.querySelectorAll('#view-sessions .srow .badge.agent')].map((b) => b.textContent);"
        " return b.length > 0 && b.every((x) => x === 'codex'); })()",
        what="only codex sessions",
    )
    assert "agent=codex" in await browser.eval("location.hash")
    options = await browser.eval("[...document.querySelectorAll('#view-sessions select.agent-select option')].map((o) => o.textContent)")
    assert options == ["All agents", "Claude Code (6)", "Codex (2)"]  # no agent without sessions
    assert ("sessions.list", {"agent": "codex", "limit": 60, "total": True}) in site.service.calls
    assert await browser.wait_for(f"{count_js} === '2 sessions'", what="the count of the filtered list")

    # Filter by text.
    await browser.eval("location.hash = '#/?q=readme'")
    await browser.wait_for(f"JSON.stringify({rows_js()}) === JSON.stringify(['Write the README'])", what="text filter")

    # Filter by source: only what was imported from another machine.
    await browser.eval("location.hash = '#/'")
    await browser.wait_for(f"{rows_js()}.length === 3")
    await browser.eval(
        "(() => { const s = document.querySelector('#view-sessions select.source-select'); s.value = 'imported';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    await browser.wait_for(f"JSON.stringify({rows_js()}) === JSON.stringify([{json.dumps(XSS_TITLE)}])", what="imported only")
    assert await browser.eval("location.hash") == "#/?source=imported"
    assert ("sessions.list", {"imported": True, "limit": 60, "total": True}) in site.service.calls
    assert await browser.eval(count_js) == "1 session"
    # Later pages do not ask for the count again.
    assert not [c for c in site.service.calls if c[0] == "sessions.list" and "cursor" in c[1] and "total" in c[1]]
    assert browser.errors == []


async def test_session_view_renders_a_readable_transcript(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site, f"#/session/claude-code/{MAIN}")
    await browser.wait_for("document.querySelector('.session-title')?.textContent === 'Fix the flaky login test'")
    # The first page is there; the rest comes with "load more" (or by itself, when the end of
    # the page is in view: further pages load on scroll).
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length >= 4")
    for _ in range(20):  # (the button may go by itself as pages load on their own)
        if await browser.eval("document.querySelectorAll('.transcript .ev').length") >= 12:
            break
        await browser.eval("document.querySelector('#view-session button.load-more')?.click()")
        await asyncio.sleep(0.2)
    assert await browser.eval("document.querySelectorAll('.transcript .ev').length") == 12
    text = await browser.text("#view-session")
    assert "The login test fails one run in ten." in text
    assert "zebracorn" in text
    assert "pytest tests/test_login.py -x -q" in text  # the tool call's summary line
    assert "cd /home/u/src/webapp && claude --resume a1b2c3d4-main-session" in text
    assert "$0.42" in text and "250k" in text  # cost and cache reads

    info = await browser.eval(
        """(() => {
          const ev = (n) => document.getElementById('ev-' + n);
          const bash = ev(3).querySelector('details.tool');
          return {
            thinkingClosed: !ev(1).querySelector('details.thinking').open,
            bashClosed: !bash.open,
            bashResult: bash.querySelector('.tool-body').textContent,
            bashStatus: bash.querySelector('.status').textContent,
            readError: ev(5).querySelector('details.tool').classList.contains('error'),
            readStatus: ev(5).querySelector('.status').textContent,
            hookSubdued: ev(4).classList.contains('role-meta'),
            systemSubdued: ev(8).classList.contains('role-meta'),
            code: ev(2).querySelector('pre.code code').textContent,
            inline: ev(2).querySelector('code.inline').textContent,
            link: [ev(2).querySelector('a.ext').href, ev(2).querySelector('a.ext').rel, ev(2).querySelector('a.ext').target],
            roles: [...document.querySelectorAll('.ev-head .role')].map((r) => r.textContent),
            childLink: ev(6).querySelector('a.child-link')?.getAttribute('href'),
            headChild: document.querySelector('.children a.child-link')?.textContent,
            edit: [ev(7).querySelector('pre.del')?.textContent, ev(7).querySelector('pre.add')?.textContent],
          };
        })()"""
    )
    assert info["thinkingClosed"] and info["bashClosed"]
    assert "TimeoutError: login took 5.2s" in info["bashResult"]  # the merged result, in the fold
    assert info["bashStatus"] == "✓"
    assert info["readError"] and info["readStatus"] == "error"
    assert info["hookSubdued"] and info["systemSubdued"]
    assert info["code"] == "def test_login(client):\n    assert client.login()"
    assert info["inline"] == "pytest -k login"
    assert info["link"] == ["https://docs.pytest.org/en/stable/", "noopener noreferrer", "_blank"]
    assert info["roles"] == ["User", "Assistant", "User", "Assistant"]
    assert info["childLink"] == f"#/session/claude-code/{CHILD}"
    assert info["headChild"] == "Find where the login timeout is set"
    assert info["edit"] == ["TIMEOUT = 5", "TIMEOUT = 30"]

    # Open the tool call and take a picture.
    await browser.eval("document.querySelector('#ev-3 details.tool').open = true")
    await browser.screenshot(shots / "session.png")

    # The same in the dark.
    await browser.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    bg = await browser.eval("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(17, 20, 24)", bg
    await browser.screenshot(shots / "session-dark.png")
    await browser.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})

    # The subagent links back to its parent.
    await browser.eval(f"location.hash = '#/session/claude-code/{CHILD}'")
    await browser.wait_for("document.querySelector('.session-title')?.textContent === 'Find where the login timeout is set'")
    await browser.wait_for("document.querySelector('.parent a')?.textContent === 'Fix the flaky login test'")
    assert await browser.eval("document.querySelector('.parent a').getAttribute('href')") == f"#/session/claude-code/{MAIN}"
    assert browser.errors == []


async def test_hostile_transcript_is_shown_as_text(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site, f"#/session/claude-code/{HOSTILE}")
    # Four events, then the fifth: by "load more", or by itself when the end is in view.
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length >= 4")
    await browser.eval("document.querySelector('#view-session button.load-more')?.click()")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 5")
    # Open every fold so that all of it is rendered and visible.
    await browser.eval("document.querySelectorAll('#view-session details').forEach((d) => d.open = true)")
    text = await browser.text("#view-session")
    for literal in (XSS_TITLE, XSS_SCRIPT, XSS_IMG, XSS_SVG, XSS_JS_LINK, "[click](javascript:window.__pwned=10)"):
        assert literal in text, literal
    await assert_inert(browser)
    links = await browser.eval("[...document.querySelectorAll('#view-session a.ext')].map((a) => [a.getAttribute('href'), a.rel])")
    assert links == [
        ["https://example.com/", "noopener noreferrer"],  # a quote ends a URL
        ["https://safe.example.org/page", "noopener noreferrer"],
    ]
    await browser.screenshot(shots / "hostile.png")
    # Hover everything, as a person moving the mouse would.
    await browser.eval("document.querySelectorAll('*').forEach((n) => n.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})))")
    await assert_inert(browser)
    assert browser.errors == []


async def test_search_snippets_and_jump_to_the_event(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site)
    await browser.wait_for("document.querySelectorAll('#view-sessions .srow').length > 0")
    # The header search box leads to the search view.
    await browser.eval(
        "(() => { const i = document.getElementById('quicksearch-q'); i.value = 'zebracorn';"
        " document.getElementById('quicksearch').requestSubmit(); })()"
    )
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length === 2", what="two hits")
    marks = await browser.eval("[...document.querySelectorAll('#view-search .hit mark')].map((m) => m.textContent)")
    assert marks == ["zebracorn", "zebracorn"]
    snippet = await browser.eval("document.querySelector('#view-search .hit .snippet').textContent")
    assert "«" not in snippet and "Mention the zebracorn keyword" in snippet
    await browser.screenshot(shots / "search.png")

    # A hit deep in the session (seq 10, on the third page of events) opens it there.
    href = await browser.eval("document.querySelectorAll('#view-search .hit')[1].getAttribute('href')")
    assert href == f"#/session/claude-code/{MAIN}?at=10"
    await browser.click("#view-search .hit:nth-child(2)")
    await browser.wait_for("document.querySelector('.ev.target')?.id === 'ev-10'", what="the hit's event highlighted")
    visible = await browser.eval(
        "(() => { const r = document.getElementById('ev-10').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()"
    )
    assert visible

    # Hostile text in a snippet stays text, with its match marked.
    await browser.eval("location.hash = '#/search?q=' + encodeURIComponent('onerror')")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0")
    assert set(await browser.eval("[...document.querySelectorAll('#view-search .hit mark')].map((m) => m.textContent)")) == {"onerror"}
    await assert_inert(browser)

    # Kind filter goes to the API.
    await browser.eval("location.hash = '#/search?q=login&kind=tool_use'")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0")
    kinds = await browser.eval("[...document.querySelectorAll('#view-search .hit .kind')].map((k) => k.textContent)")
    assert kinds and all(k.startswith("tool use") for k in kinds)
    assert browser.errors == []


async def test_live_follow_and_changes(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site, f"#/session/claude-code/{LIVE}")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 1")
    await browser.wait_for("!document.querySelector('.live-badge').hidden", what="the follow stream open")
    await browser.wait_for("document.getElementById('live-toggle').dataset.state === 'on'", what="the changes stream open")

    events = site.service.events[("claude-code", LIVE)]
    sess = next(s for s in site.service.sessions if s["id"] == LIVE)

    async def publish(*more: dict[str, Any]) -> None:
        with site.service.lock:
            events.extend(more)
            sess["messages"] = len(events)
        await site.hub.publish([{"agent": "claude-code", "id": LIVE, "path": sess["path"], "action": "updated"}])

    await publish(
        _ev(1, "text", role="assistant", text="Appended while you watch."),
        _ev(2, "tool_use", role="assistant", tool="Bash", tool_use_id="toolu_live", input={"command": "make test"}),
    )
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 3", what="live events")
    assert "Appended while you watch." in await browser.text("#view-session")
    assert await browser.eval("document.querySelector('#ev-2 .status').textContent") == "…"

    # The result is merged into the call later: no new event, the session changes.
    with site.service.lock:
        events[2]["result"] = "all 212 tests passed"
        events[2]["is_error"] = False
    await publish()
    await browser.wait_for("document.querySelector('#ev-2 .status')?.textContent === '✓'", what="the merged result")
    assert "all 212 tests passed" in await browser.eval("document.querySelector('#ev-2 .tool-body').textContent")
    await browser.wait_for("[...document.querySelectorAll('.fact dd')].some((d) => d.textContent === '3')", what="header update")
    await browser.screenshot(shots / "live.png")

    # The list refreshes on /changes: a new session appears at the top.
    await browser.eval("location.hash = '#/'")
    await browser.wait_for(f"{rows_js()}.length > 0")
    with site.service.lock:
        site.service.sessions.append(_session("codex", "brand-new", "A brand new session", 1_777_000_500.0))
        site.service.events[("codex", "brand-new")] = [_ev(0, "text", role="user", text="hi")]
    await site.hub.publish([{"agent": "codex", "id": "brand-new", "path": "/x", "action": "added"}])
    await browser.wait_for(f"{rows_js()}[0] === 'A brand new session'", what="the new session at the top")
    await browser.wait_for(
        f"document.querySelector('#view-sessions .count').textContent === '{len(site.service.sessions)} sessions'",
        what="the count, one more",
    )

    # Live off: nothing streams any more.
    await browser.click("#live-toggle")
    assert await browser.eval("document.getElementById('live-toggle').getAttribute('aria-pressed')") == "false"
    assert browser.errors == []


async def test_live_follow_starts_over_on_a_rewrite_and_says_when_the_session_is_gone(site: Site, browser: Browser) -> None:
    """Followed over the change stream (no stream of its own): a file rewritten under the same
    seqs starts the transcript over; a removed session says so and is no longer followed."""
    await login(browser, site, f"#/session/claude-code/{LIVE}")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 1")
    await browser.wait_for("!document.querySelector('.live-badge').hidden", what="following live")
    events = site.service.events[("claude-code", LIVE)]
    sess = next(s for s in site.service.sessions if s["id"] == LIVE)
    change = {"agent": "claude-code", "id": LIVE, "path": sess["path"], "action": "updated"}
    with site.service.lock:
        events.append(_ev(1, "text", role="assistant", text="First version of the answer."))
    await site.hub.publish([change])
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 2", what="the appended event")
    # Rewritten: other events at the same seqs (other uuids), one more than before.
    with site.service.lock:
        events[:] = [
            _ev(0, "text", role="user", text="A rewritten start.", uuid="w-0"),
            _ev(1, "text", role="assistant", text="A rewritten answer.", uuid="w-1"),
            _ev(2, "text", role="user", text="And a third event.", uuid="w-2"),
        ]
    await site.hub.publish([change])
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length === 3", what="the rewritten transcript")
    text = await browser.text("#view-session")
    assert "A rewritten start." in text and "And a third event." in text
    assert "First version of the answer." not in text and "Start of a live session." not in text
    # Gone: said once, no longer followed.
    await site.hub.publish([{**change, "action": "removed"}])
    await browser.wait_for("(document.getElementById('banner').textContent || '').includes('This session is gone')", what="the banner")
    assert await browser.eval("document.querySelector('.live-badge').hidden")
    calls = len(site.service.calls)
    await site.hub.publish([change])
    await asyncio.sleep(1.0)
    assert not [c for c in site.service.calls[calls:] if c[0] == "events.list" and c[1].get("after_seq", -9) >= 1]
    assert browser.errors == []


async def test_stats_view(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site, "#/stats")
    # By model, by agent, tool calls, by day (and the hour heat map, tested in test_web_reading).
    await browser.wait_for("document.querySelectorAll('#view-stats table.stats').length === 4", what="stats tables")
    assert await browser.eval("document.querySelectorAll('#view-stats .chart .bar').length") == 20
    text = await browser.text("#view-stats")
    for key in ("claude-sonnet-4-5", "gpt-5-codex", "claude-opus-4-1", "2026-04-29", "codex"):
        assert key in text
    assert "—" in text  # unknown price shown as unknown, not $0
    by = {c[1].get("by") for c in site.service.calls if c[0] == "stats"}
    assert by == {"day", "model", "agent", "tool", "hour"}
    assert all("since" in c[1] for c in site.service.calls if c[0] == "stats")
    await browser.screenshot(shots / "stats.png")
    assert browser.errors == []


async def test_live_usage_view(site: Site, browser: Browser, shots: Path) -> None:
    await login(browser, site, "#/live")
    await browser.wait_for("document.querySelectorAll('#view-live tr.live-session').length === 2", what="live sessions")
    bars = await browser.eval("[...document.querySelectorAll('#view-live .burn-chart')].map((c) => c.children.length)")
    assert bars == [30, 30]
    heights = await browser.eval("[...document.querySelectorAll('#view-live tr.live-session')[0].querySelectorAll('.burn-bar')].map((b) => b.style.height)")
    assert heights[-5:] == ["100%", "100%", "100%", "100%", "0%"]
    text = await browser.text("#view-live")
    assert "5-hour block 11:00–16:00 UTC" in text and "projection" in text and "resets in 4h00m" in text
    assert "primary (300 min): 42.5% used, resets in 2h00m (recorded 10m ago)" in text
    assert "880/min · $0.36/h" in text and "18/min · $0.01+?/h" in text  # an unknown price is not $0
    assert XSS_TITLE in text  # shown as text
    await assert_inert(browser)
    link = await browser.eval("document.querySelector('#view-live tr.live-session a').getAttribute('href')")
    assert link == "#/session/claude-code/fast-1111"
    await browser.screenshot(shots / "live.png")
    assert browser.errors == []


async def test_signed_out_viewer_asks_for_the_login_link(site: Site, browser: Browser) -> None:
    # Without the cookie the page (no data in it) loads, its API calls get 401 and it shows
    # how to sign in; no session data reaches it.
    await browser.goto(site.url("/"))
    await browser.wait_for("!document.getElementById('view-login').hidden", what="the sign-in view")
    assert "agtail open" in await browser.text("#view-login")
    assert await browser.eval("document.querySelectorAll('#view-sessions .srow').length") == 0
    # With it, the page loads; when the cookie goes away the viewer says how to sign in.
    await login(browser, site)
    await browser.wait_for("document.querySelectorAll('#view-sessions .srow').length > 0")
    await browser.send("Network.clearBrowserCookies")
    await browser.eval("location.hash = '#/stats'")
    await browser.wait_for("!document.getElementById('view-login').hidden", what="the sign-in view")
    assert "agtail open" in await browser.text("#view-login")
    # The 401s are the only errors the browser saw.
    assert browser.errors and all("401" in e for e in browser.errors), browser.errors


async def test_narrow_screen(site: Site, browser: Browser, shots: Path) -> None:
    await browser.set_viewport(390, 844)
    await login(browser, site)
    await browser.wait_for("document.querySelectorAll('#view-sessions .srow').length > 0")
    overflow = await browser.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    await browser.screenshot(shots / "narrow-sessions.png")
    await browser.eval(f"location.hash = '#/session/claude-code/{MAIN}'")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length > 0")
    await asyncio.sleep(0.2)
    overflow = await browser.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    await browser.screenshot(shots / "narrow-session.png")
    assert browser.errors == []


async def test_the_top_search_box_holds_a_query_only_on_the_search_view(site: Site, browser: Browser) -> None:
    """Issue 23 #22: the box kept the last query on the Stats, Projects and session pages."""
    await login(browser, site)
    await browser.wait_for("document.querySelectorAll('#view-sessions .srow').length > 0")
    await browser.eval(
        "(() => { const i = document.getElementById('quicksearch-q'); i.value = 'zebracorn';"
        " document.getElementById('quicksearch').requestSubmit(); })()"
    )
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length === 2", what="the search view")
    box = "document.getElementById('quicksearch-q').value"
    assert await browser.eval(box) == "zebracorn"
    for hash_, ready in (
        ("#/stats", "document.querySelectorAll('#view-stats table.stats').length > 0"),
        ("#/projects", "document.querySelectorAll('#view-projects .project-row').length > 0"),
        (f"#/session/claude-code/{MAIN}", "document.querySelectorAll('.transcript .ev').length > 0"),
        ("#/", "document.querySelectorAll('#view-sessions .srow').length > 0"),
    ):
        await browser.eval(f"location.hash = {json.dumps(hash_)}")
        await browser.wait_for(ready, what=hash_)
        assert await browser.eval(box) == "", hash_
        # Back on the search view, its query is in the box again.
        await browser.eval("location.hash = '#/search?q=zebracorn'")
        await browser.wait_for("document.querySelectorAll('#view-search .hit').length === 2", what="search again")
        assert await browser.eval(box) == "zebracorn"
    # What the reader is typing into the box is not taken away by a route change.
    await browser.eval("location.hash = '#/stats'")
    await browser.wait_for("document.querySelectorAll('#view-stats table.stats').length > 0")
    await browser.eval("(() => { const i = document.getElementById('quicksearch-q'); i.focus(); i.value = 'half typ'; })()")
    await browser.eval("location.hash = '#/stats?days=7'")
    await browser.wait_for("document.querySelector('#view-stats select.range-select')?.value === '7'")
    assert await browser.eval(box) == "half typ"
    assert browser.errors == []


#: For every table of a view: is its box inside the screen, and once the box is scrolled to its
#: end, is the table's last column (Total/Cost, Agents …) inside the box?
_TABLES_FIT = """((root) => [...document.querySelectorAll(root + ' .table-wrap')].map((wrap) => {
  wrap.scrollLeft = wrap.scrollWidth;
  const box = wrap.getBoundingClientRect();
  const heads = [...wrap.querySelectorAll('thead th')];
  const last = heads[heads.length - 1].getBoundingClientRect();
  const total = heads.find((th) => th.textContent === 'Total');
  const t = total ? total.getBoundingClientRect() : last;
  const inside = (r) => r.left >= Math.max(box.left, 0) - 1 && r.right <= Math.min(box.right, innerWidth) + 1;
  const fits = box.left >= 0 && box.right <= innerWidth + 1 && inside(last) && inside(t);
  wrap.scrollLeft = 0;
  return [heads[0].textContent + ' \u2026 ' + heads[heads.length - 1].textContent, fits, Math.round(box.right), Math.round(last.right)];
}))"""


@pytest.mark.parametrize("width", [390, 1400])
async def test_wide_tables_scroll_in_their_own_box(site: Site, browser: Browser, shots: Path, width: int) -> None:
    """Issue 23 #22: at 390 px the by-model and by-agent tables ran off the right edge (TOTAL and
    COST unreachable). Each table scrolls within its box; the page itself never scrolls sideways."""
    await browser.set_viewport(width, 844)
    # Names as long as real ones, so the tables are wider than a phone.
    for s in site.service.sessions:
        s["project"] = "webapp-frontend-monorepo"
    await login(browser, site, "#/stats")
    await browser.wait_for("document.querySelectorAll('#view-stats table.stats').length === 4", what="stats tables")
    tables = await browser.eval(_TABLES_FIT + "('#view-stats')")
    assert len(tables) == 4
    assert all(fits for _, fits, *_ in tables), tables
    assert await browser.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    await browser.screenshot(shots / f"stats-{width}.png")
    await browser.eval("location.hash = '#/projects'")
    await browser.wait_for("document.querySelectorAll('#view-projects .project-row').length > 0", what="projects")
    tables = await browser.eval(_TABLES_FIT + "('#view-projects')")
    assert len(tables) == 1 and tables[0][1], tables
    assert await browser.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    assert browser.errors == []
