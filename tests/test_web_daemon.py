"""The web viewer end to end: a real agtaild on a copy of real Claude Code sessions, in Chromium.

The daemon runs as a subprocess on temporary dirs (data dir, socket, HOME), reads only the
corpus copy given with --root, and listens on a free loopback port. The browser logs in with
the daemon's own login link, then checks what a person would: the list shows the sessions
with their titles, a session shows its prompt and a merged tool result, search finds a word,
a session file with markup in it stays inert, and a line appended to the open session shows up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

CLAUDE_ROOT = CORPUS / "real" / "claude-2.1.197" / "projects"
PROJECT = "-tmp-rt-claude-home-src-demo-app"
BASIC = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"  # hello.py: Write, Read, Edit, Bash with results
SUBAGENT_PARENT = "77734736-bfec-415b-bcc2-49975539e98b"
HOSTILE = "0badc0de-0000-4000-8000-00000000a11e"
HOSTILE_DIR = "-tmp-hostile"

XSS_PROMPT = 'Please show <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=2"> as text'
XSS_REPLY = '<svg onload="window.__pwned=3"></svg> javascript:window.__pwned=4 https://example.org/ok'


def _line(kind: str, n: int, content: Any, parent: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2026-06-01T10:{n:02d}:00.000Z",
        "sessionId": HOSTILE,
        "cwd": "/tmp/hostile",
        "version": "2.1.197",
        "gitBranch": "main",
        "userType": "external",
    }
    if kind == "user":
        doc["message"] = {"role": "user", "content": content}
    else:
        doc["requestId"] = f"req_{n}"
        doc["message"] = {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        }
    return doc


def hostile_lines() -> list[dict[str, Any]]:
    first = _line("user", 1, XSS_PROMPT, None)
    second = _line("assistant", 2, [{"type": "text", "text": XSS_REPLY}], first["uuid"])
    return [first, second]


def appended_line() -> dict[str, Any]:
    return _line("assistant", 3, [{"type": "text", "text": "A line appended while the viewer watches."}],
                 hostile_lines()[-1]["uuid"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "projects"
        self.data = base / "data"
        self.sock_dir = Path(tempfile.mkdtemp(prefix="agtw-", dir="/tmp"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.token = ""
        self.log = base / "agtaild.log"
        #: More agtaild arguments (e.g. other agents' --root), for other test modules.
        self.extra_args: list[str] = []

    def start(self) -> None:
        shutil.copytree(CLAUDE_ROOT, self.root)
        hostile = self.root / HOSTILE_DIR / f"{HOSTILE}.jsonl"
        hostile.parent.mkdir()
        hostile.write_text("".join(json.dumps(x) + "\n" for x in hostile_lines()), "utf-8")
        home = self.base / "home"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_RUNTIME_DIR": str(self.sock_dir),
            "LANG": "C.UTF-8",
        }
        args = [
            sys.executable, "-m", "agtaild.daemon",
            "--data-dir", str(self.data),
            "--socket", str(self.sock_dir / "agtaild.sock"),
            "--listen", f"127.0.0.1:{self.port}",
            "--only-roots", "--root", f"claude-code={self.root}",
            "--debounce", "0.05", "--poll-interval", "0.5",
            "--log-level", "info",
            *self.extra_args,
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True)
        deadline = time.monotonic() + 60
        while not (self.data / "agtaild.json").exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"agtaild exited with {self.proc.returncode}:\n{self.log.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"agtaild did not start:\n{self.log.read_text()}")
            time.sleep(0.05)
        self.token = (self.data / "token").read_text().strip()

    def get(self, path: str) -> dict[str, Any]:
        req = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def wait_indexed(self, ids: set[str]) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 60
        while True:
            sessions = self.get("/api/v1/sessions?limit=200")["sessions"]
            if ids <= {s["id"] for s in sessions}:
                return sessions
            if time.monotonic() > deadline:
                raise AssertionError(f"not indexed: {ids - {s['id'] for s in sessions}}\n{self.log.read_text()}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    if not CLAUDE_ROOT.is_dir():
        pytest.fail(f"the sample corpus is missing at {CLAUDE_ROOT}")
    d = Daemon(tmp_path_factory.mktemp("web-daemon"))
    try:
        d.start()
        d.wait_indexed({BASIC, SUBAGENT_PARENT, HOSTILE})
        yield d
    finally:
        d.stop()


def unexpected(errors: list[str]) -> list[str]:
    """Browser errors other than a 404 from /resume: a daemon without resume.command answers
    404 there, and the viewer then simply shows no resume line."""
    return [e for e in errors if not ("404" in e and e.endswith("/resume)"))]


async def login(browser: Browser, daemon: Daemon, hash_: str = "") -> None:
    await browser.goto(f"{daemon.url}/login?token={daemon.token}")
    await browser.wait_for("location.pathname === '/' && !!window.agtail", what="the viewer after login")
    if hash_:
        await browser.eval(f"location.hash = {json.dumps(hash_)}")


async def test_list_shows_the_indexed_sessions(daemon: Daemon, browser: Browser, shots: Path) -> None:
    expected = daemon.get("/api/v1/sessions?limit=60")["sessions"]
    await login(browser, daemon)
    rows = await browser.wait_for(
        f"(() => {{ const r = [...document.querySelectorAll('#view-sessions .srow')]; return r.length === {len(expected)} && "
        "r.map((x) => [x.dataset.agent, x.dataset.id, x.querySelector('.srow-title').textContent]); })()",
        what="every session listed",
    )
    assert [r[1] for r in rows] == [s["id"] for s in expected]  # newest first, as the API says
    titles = {r[1]: r[2] for r in rows}
    assert titles[BASIC].startswith("Create hello.py with a greet() function")
    assert titles[HOSTILE] == XSS_PROMPT
    assert all(t and t != "(untitled session)" for t in titles.values()), titles
    assert await browser.eval("window.__pwned === undefined && !document.querySelector('#main img, #main script')")
    await browser.screenshot(shots / "daemon-sessions.png")
    assert unexpected(browser.errors) == []


async def test_session_view_shows_prompt_and_merged_tool_result(daemon: Daemon, browser: Browser, shots: Path) -> None:
    await login(browser, daemon, f"#/session/claude-code/{BASIC[:8]}")  # a unique prefix is enough
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length > 3", what="the transcript")
    text = await browser.text("#view-session")
    assert "Create hello.py with a greet() function, run it, and add a Japanese greeting." in text
    # The Bash call that ran hello.py carries its merged result (in the closed fold).
    result = await browser.eval(
        """(() => {
          const tools = [...document.querySelectorAll('.transcript details.tool')];
          const run = tools.find((d) => d.querySelector('summary').textContent.includes('python3 hello.py'));
          return run && { open: run.open, body: run.querySelector('.tool-body').textContent, status: run.querySelector('.status').textContent };
        })()"""
    )
    assert result and not result["open"]
    assert "Hello, world! こんにちは、worldさん" in result["body"]
    assert result["status"] == "✓"
    # The failed Read is marked as an error.
    assert await browser.eval(
        "[...document.querySelectorAll('.transcript details.tool.error summary')].some((s) => s.textContent.includes('does-not-exist.txt'))"
    )
    await browser.eval("document.querySelectorAll('.transcript details.tool').forEach((d) => d.open = true)")
    await browser.screenshot(shots / "daemon-session.png")

    # The session that used a subagent links to its transcript.
    await browser.eval(f"location.hash = '#/session/claude-code/{SUBAGENT_PARENT}'")
    link = await browser.wait_for(
        "document.querySelector('.transcript .tool-wrap a.child-link')?.getAttribute('href')", what="the subagent link"
    )
    await browser.eval(f"location.hash = {json.dumps(link)}")
    await browser.wait_for(
        f"document.querySelector('.parent a')?.getAttribute('href') === '#/session/claude-code/{SUBAGENT_PARENT}'",
        what="the link back to the parent",
    )
    assert unexpected(browser.errors) == []


async def test_search_finds_a_word_and_opens_its_event(daemon: Daemon, browser: Browser, shots: Path) -> None:
    await login(browser, daemon, "#/search?q=" + "greet")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0", what="search hits")
    marks = await browser.eval("[...document.querySelectorAll('#view-search .hit mark')].map((m) => m.textContent.toLowerCase())")
    assert marks and all("greet" in m for m in marks)
    hrefs = await browser.eval("[...document.querySelectorAll('#view-search .hit')].map((a) => a.getAttribute('href'))")
    assert any(h.startswith(f"#/session/claude-code/{BASIC}?at=") for h in hrefs)
    await browser.screenshot(shots / "daemon-search.png")
    first = hrefs[0]
    await browser.eval(f"location.hash = {json.dumps(first)}")
    seq = first.rsplit("=", 1)[1]
    await browser.wait_for(f"document.querySelector('.ev.target')?.dataset.seq === {json.dumps(seq)}", what="the hit's event")
    # CJK text is found as a substring.
    await browser.eval("location.hash = '#/search?q=' + encodeURIComponent('こんにちは')")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0", what="CJK hits")
    assert unexpected(browser.errors) == []


async def test_stats_show_the_corpus_usage(daemon: Daemon, browser: Browser, shots: Path) -> None:
    by_model = daemon.get("/api/v1/stats?by=model")["rows"]
    assert by_model
    await login(browser, daemon, "#/stats?days=all")
    await browser.wait_for("document.querySelectorAll('#view-stats table.stats').length === 4", what="stats tables")
    text = await browser.text("#view-stats")
    for row in by_model:
        assert str(row["key"]) in text
    assert await browser.eval("document.querySelectorAll('#view-stats .chart .bar, #view-stats .chart .seg').length") >= 1
    await browser.screenshot(shots / "daemon-stats.png")
    assert unexpected(browser.errors) == []


async def test_hostile_session_is_inert_and_live_appends_show_up(daemon: Daemon, browser: Browser, shots: Path) -> None:
    await login(browser, daemon, f"#/session/claude-code/{HOSTILE}")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length >= 2", what="the hostile transcript")
    text = await browser.text("#view-session")
    assert XSS_PROMPT in text
    assert '<svg onload="window.__pwned=3"></svg> javascript:window.__pwned=4' in text
    found = await browser.eval(
        """(() => ({
          pwned: window.__pwned === undefined ? null : window.__pwned,
          injected: document.querySelectorAll('#main img, #main svg, #main script, [onerror], [onload]').length,
          links: [...document.querySelectorAll('#view-session a.ext')].map((a) => [a.getAttribute('href'), a.rel]),
        }))()"""
    )
    assert found == {"pwned": None, "injected": 0, "links": [["https://example.org/ok", "noopener noreferrer"]]}
    await browser.screenshot(shots / "daemon-hostile.png")

    await browser.wait_for("!document.querySelector('.live-badge').hidden", what="the follow stream open")
    path = Path(daemon.root / HOSTILE_DIR / f"{HOSTILE}.jsonl")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(appended_line()) + "\n")
    await browser.wait_for(
        "document.getElementById('view-session').innerText.includes('A line appended while the viewer watches.')",
        timeout=30,
        what="the appended line, live",
    )
    await asyncio.sleep(0.3)
    assert await browser.eval("window.__pwned === undefined")
    assert unexpected(browser.errors) == []
