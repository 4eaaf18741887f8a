"""Every surface 0.2 added, attacked together against one live agtaild (issue 22, "done when"):
the agents' own SQLite stores (each of the registry's, one replaced by a FIFO, one holding a
200,000-deep row, one locked during an update), the viewer in headless Chromium showing a
hostile transcript, MCP over HTTP with hostile calls, the resume argv of every agent's
sessions (a relative cwd among them), a symlink planted among the archive's pins, service
rendering of a data dir whose name is not UTF-8, and a push of the daemon's index into the team
database. Throughout, a watcher asks ``/health`` over the unix socket every 0.1 s and every
answer must come within 1 s; nothing outside the data dir is touched, nothing is removed.

The unit-level tests of each defence are beside their modules (test_agent_stores*,
test_archive_pin_safety, test_http_crowd, test_mcp*, test_resume*, test_service_names,
test_pg_*); this file checks that they hold together, against the real process.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtail_client import ApiError
from tests.daemon_proc import REPO, DaemonProc, claude_user_line, wait_until
from tests.pg_cluster import pg_cluster, pg_url
from tests.sqlite_stores import Store, copy_store, listing, sqlite_stores
from tests.test_hostile_input import HealthWatch
from tests.web_cdp import chromium_available

__all__ = ["pg_cluster", "pg_url"]

XSS_SID = "aaaaaaaa-2222-4333-8444-555555555555"
RELATIVE_SID = "bbbbbbbb-2222-4333-8444-555555555555"
XSS = "look: <img src=x onerror=window.__pwned=1> <script>window.__pwned=2</script> [x](javascript:window.__pwned=3)"


def _one_store_per_agent() -> list[Store]:
    chosen: dict[str, Store] = {}
    for store in sqlite_stores():
        chosen.setdefault(store.agent, store)
    return list(chosen.values())


class Attack:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.stores: dict[str, tuple[Path, Path]] = {}  # agent -> (root, database)
        self.outside = base / "outside"
        self.roots: dict[str, Path] = {}
        self.daemon: DaemonProc | None = None
        self.before: dict[str, list[str]] = {}

    def prepare(self) -> None:
        claude = self.base / "claude" / "-tmp-hostile"
        claude.mkdir(parents=True)
        cwd = self.base / "work"
        cwd.mkdir()
        (claude / f"{XSS_SID}.jsonl").write_text(claude_user_line(XSS_SID, XSS, cwd=str(cwd))[0], encoding="utf-8")
        (claude / f"{RELATIVE_SID}.jsonl").write_text(claude_user_line(RELATIVE_SID, "run it here", cwd="-rf")[0], encoding="utf-8")
        self.roots["claude-code"] = self.base / "claude"
        for store in _one_store_per_agent():
            root, db = copy_store(store, self.base / "stores" / store.agent)
            self.stores[store.agent] = (root, db)
            self.roots[store.agent] = root
        # Goose's database is a FIFO: opening it would wait for a writer for ever.
        if "goose" in self.stores:
            db = self.stores["goose"][1]
            db.unlink()
            os.mkfifo(db)
        # Cursor's state.vscdb holds a value nested 200,000 deep beside its sane composers.
        if "cursor" in self.stores:
            deep = '{"name": "deep", "conversation": ' + "[" * 200_000 + "]" * 200_000 + "}"
            with sqlite3.connect(self.stores["cursor"][1]) as conn:
                conn.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", ("composerData:0000-deep", deep))
        # A file outside the data dir that a planted pin names.
        self.outside.mkdir()
        (self.outside / "victim.jsonl").write_text("keep me\n", encoding="utf-8")
        for agent, (root, _db) in self.stores.items():
            folder = root if root.is_dir() else root.parent
            self.before[agent] = listing(folder)


@pytest.fixture(scope="module")
def attack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Attack]:
    a = Attack(tmp_path_factory.mktemp("surfaces"))
    a.prepare()
    a.daemon = DaemonProc(a.base, a.roots)
    try:
        a.daemon.start(timeout=120)
        yield a
    finally:
        a.daemon.cleanup()


def _sessions(daemon: DaemonProc) -> list[dict[str, Any]]:
    with daemon.unix(timeout=60) as client:
        return list(client.sessions(limit=5000))


def _mcp(daemon: DaemonProc, body: bytes, *, read_for: float = 10.0) -> tuple[int, bytes]:
    """One raw POST to /mcp over TCP with the token: (status, body)."""
    host, port = daemon.url.removeprefix("http://").rsplit(":", 1)
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection((host, int(port)), timeout=read_for) as sock:
        sock.sendall(head + body)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except TimeoutError:
            pass
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, data.partition(b"\r\n\r\n")[2]


def _tool(name: str, arguments: Any, ident: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()  # fmt: skip


def test_the_agents_stores_hold_while_health_answers(attack: Attack) -> None:
    daemon = attack.daemon
    assert daemon is not None
    before = {(s["agent"], s["id"]) for s in _sessions(daemon)}
    assert {"opencode", "cursor", "kilo", "zed", "crush", "kiro"} <= {a for a, _ in before}
    assert ("cursor", "0000-deep") in before  # the deep row is one bad unit, its neighbours read
    with HealthWatch(daemon) as watch:
        if "opencode" in attack.stores:
            db = attack.stores["opencode"][1]
            holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            holder.execute("BEGIN EXCLUSIVE")
            try:
                os.utime(db)  # the watcher sees a change; the update meets the lock
                with daemon.unix(timeout=120) as client:
                    report = client.call("index.update", {"full": True})
            finally:
                holder.close()
            assert not [c for c in report.get("changed", []) if c.get("action") == "removed"], report
        with daemon.unix(timeout=120) as client:
            again = client.call("index.update", {})
        assert not [c for c in again.get("changed", []) if c.get("action") == "removed"], again
        # Read from its own database again, no longer from the archive's copy: moved, not re-added.
        back = [c for c in again["changed"] if c["agent"] == "opencode"]
        assert back and all(c["action"] == "updated" and "/archive/" in c["from"] for c in back), back
    assert watch.failures == [] and watch.count > 5
    assert watch.worst < 1.0, f"/health took {watch.worst:.2f} s at worst"
    assert {(s["agent"], s["id"]) for s in _sessions(daemon)} >= before
    for agent, (root, _db) in attack.stores.items():
        folder = root if root.is_dir() else root.parent
        assert listing(folder) == attack.before[agent], f"{agent}: reading changed the agent's folder"


def test_mcp_resume_pins_and_service_while_health_answers(attack: Attack, tmp_path: Path) -> None:
    daemon = attack.daemon
    assert daemon is not None
    sessions = _sessions(daemon)
    pins = daemon.data_dir / "archive" / ".zstore" / "pins"
    with HealthWatch(daemon) as watch:
        # MCP over HTTP: hostile calls get answers (a result or an error), never a 5xx.
        calls = [
            _tool("search_sessions", {"query": "a" * 100_000}),
            _tool("search_sessions", {"query": "(a+)+b", "mode": "regex"}),
            _tool("read_session", {"id": "claude-code:" + "../" * 200}),
            _tool("read_session", {"id": f"claude-code:{XSS_SID}", "limit": -5}),
            _tool("no_such_tool", {}),
            _tool("list_sessions", {"limit": "many"}),
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
            b"{not json",
        ]
        for body in calls:
            status, raw = _mcp(daemon, body)
            assert 200 <= status < 500, (status, raw[:300])
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(_mcp(daemon, _tool("search_sessions", {"query": "look"}))))
                   for _ in range(24)]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(answers) == 24 and all(s == 200 for s, _ in answers)
        status, raw = _mcp(daemon, _tool("read_session", {"id": f"claude-code:{XSS_SID}"}))
        assert status == 200 and b"\\u001b" not in raw and b"\x1b" not in raw

        # The resume argv of every session of every agent: built here or refused with a reason.
        with daemon.tcp(timeout=60) as client:
            for s in sessions:
                try:
                    answer = client.resume_command(s["agent"], s["id"])
                except ApiError as exc:
                    assert 400 <= exc.status < 500, (s["agent"], s["id"], exc)
                    continue
                argv = answer.get("argv")
                assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), answer
                assert os.path.isabs(answer.get("cwd") or "/"), answer
            with pytest.raises(ApiError) as relative:
                client.resume_command("claude-code", RELATIVE_SID)
            assert relative.value.status == 409

        # A symlink planted among the pins, named like a set: never followed, nothing removed.
        pins.mkdir(parents=True, exist_ok=True)
        planted = pins / "99999999-1"
        planted.symlink_to(attack.outside, target_is_directory=True)
        with daemon.unix(timeout=120) as client:
            client.call("index.update", {"full": True})
        time.sleep(1.0)  # the finisher runs after the update
        assert (attack.outside / "victim.jsonl").read_text(encoding="utf-8") == "keep me\n"

        # Service files for a data dir whose name is not UTF-8: refused in one sentence.
        odd = os.fsencode(str(tmp_path)) + b"/data-\xff\xfe"
        done = subprocess.run(
            [os.fsencode(sys.executable), b"-c", b"import sys; from agtaild.cli import main; sys.exit(main())",
             b"--data-dir", odd, b"service", b"install", b"--manager", b"systemd", b"--dry-run"],
            capture_output=True, timeout=60, cwd=str(REPO),
            env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": f"{REPO}:{REPO / 'clients' / 'python'}"},
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert b"Traceback" not in done.stderr and b"not valid UTF-8" in done.stderr
        assert not list(tmp_path.rglob("*.tmp"))
    assert watch.failures == [] and watch.count > 5
    assert watch.worst < 1.0, f"/health took {watch.worst:.2f} s at worst"
    log = daemon.log_path.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.skipif(not chromium_available(), reason="headless Chromium (Debian's chromium) is not installed")
async def test_the_viewer_shows_the_hostile_transcript_inert_while_health_answers(attack: Attack, browser: Any) -> None:
    daemon = attack.daemon
    assert daemon is not None
    with daemon.tcp() as client:
        login = client.login_url()
    with HealthWatch(daemon) as watch:
        await browser.goto(login)
        await browser.wait_for("location.pathname === '/' && !!window.agtail", what="the viewer after login")
        await browser.eval(f"location.hash = {json.dumps('#/session/claude-code/' + XSS_SID)}")
        await browser.wait_for("document.querySelectorAll('.transcript .ev').length >= 1", what="the transcript")
        text = await browser.text("#view-session")
        assert "<img src=x onerror=window.__pwned=1>" in text and "<script>window.__pwned=2</script>" in text
        found = await browser.eval(
            "({pwned: window.__pwned === undefined ? null : window.__pwned,"
            " bad: document.querySelectorAll('#view-session img, #view-session script, [onerror]').length,"
            " js: [...document.querySelectorAll('a[href]')].filter((a) => /^javascript:/i.test(a.getAttribute('href'))).length})"
        )
        assert found == {"pwned": None, "bad": 0, "js": 0}, found
    assert watch.failures == [] and watch.worst < 1.0, (watch.failures, watch.worst)
    assert browser.errors == []


def test_a_push_of_the_live_index_to_the_team_database_while_health_answers(attack: Attack, pg_url: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    daemon = attack.daemon
    assert daemon is not None
    env = {**os.environ, "HOME": str(attack.base / "home"), "PYTHONPATH": f"{REPO}:{REPO / 'clients' / 'python'}"}
    argv = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())", "--data-dir", str(daemon.data_dir), "--json",
            "pg", "push", "--url", pg_url, "--machine", "hostile"]  # fmt: skip
    with HealthWatch(daemon) as watch:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=str(REPO), env=env)
    assert done.returncode == 0, done.stderr
    assert watch.failures == [] and watch.worst < 1.0, (watch.failures, watch.worst)
    local = {(s["agent"], s["id"]) for s in _sessions(daemon)}
    with psycopg.connect(pg_url) as conn:
        team = {(a, i) for a, i in conn.execute("SELECT agent, sid FROM sessions WHERE machine = 'hostile'")}
    assert team == local
    wait_until(lambda: daemon.unix().health()["ok"], 5, "the daemon after the push")
