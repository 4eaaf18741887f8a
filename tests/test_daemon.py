"""The daemon process: its files and their modes, systemd notification, clean SIGTERM, refusing
a second daemon, the polling fallback end to end, and the CLI finding it (or not)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.daemon.main import parse_listen
from agtaild.errors import UsageError
from tests.daemon_proc import DaemonProc, SseCollector, append, claude_user_line, copy_claude, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A short directory under /tmp (unix socket paths must stay under ~100 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="agt", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def daemons() -> Iterator[list[DaemonProc]]:
    started: list[DaemonProc] = []
    yield started
    for d in started:
        d.cleanup()


def make(daemons: list[DaemonProc], base: Path, **kw: Any) -> DaemonProc:
    roots = kw.pop("roots", None) or {"claude-code": copy_claude(base / "claude")}
    d = DaemonProc(base, roots, **kw)
    daemons.append(d)
    return d


def test_files_modes_notify_and_clean_stop(tmp_path: Path, short_tmp: Path, daemons: list[DaemonProc]) -> None:
    notify_path = short_tmp / "notify"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    notify.settimeout(30)
    runtime = short_tmp / "rt"
    try:
        d = make(
            daemons,
            tmp_path,
            env={"NOTIFY_SOCKET": str(notify_path), "AGTAIL_RUNTIME_DIR": str(runtime)},
            socket_path=runtime / "agtaild.sock",  # no --socket: the default place, in the runtime dir
        ).start()
        assert notify.recv(4096).decode().startswith("READY=1")
        info = json.loads((d.data_dir / "agtaild.json").read_text())
        assert {"url", "socket", "pid", "version", "data_dir", "roots"} <= set(info)
        assert info["socket"] == str(runtime / "agtaild.sock") and info["url"].startswith("http://127.0.0.1:")
        assert stat.S_IMODE(d.data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((d.data_dir / "token").stat().st_mode) == 0o600
        assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
        assert stat.S_IMODE((runtime / "agtaild.sock").stat().st_mode) == 0o600
        token = d.token
        assert d.stop() == 0
        assert notify.recv(4096).decode().startswith("STOPPING=1")
        assert not (d.data_dir / "agtaild.json").exists()
        assert not (runtime / "agtaild.sock").exists()
        assert "stopping" in d.log()
        d.start()  # the token survives a restart: clients keep working
        assert d.token == token
    finally:
        notify.close()


def test_a_second_daemon_on_the_same_data_dir_is_refused(tmp_path: Path, daemons: list[DaemonProc]) -> None:
    first = make(daemons, tmp_path).start()
    second = DaemonProc(tmp_path, first.roots)
    try:
        proc = subprocess.run(second.argv(), capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)})
    finally:
        shutil.rmtree(second.sock_dir, ignore_errors=True)
    assert proc.returncode == 1
    assert "another agtaild already serves" in proc.stderr
    assert first.unix().health()["status"] == "ok"  # the first one is untouched


def test_a_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        sock_dir = Path(tempfile.mkdtemp(prefix="agt", dir="/tmp"))
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "agtaild.daemon", "--data-dir", str(tmp_path / "d"), "--socket", str(sock_dir / "s"),
                 "--listen", f"127.0.0.1:{port}", "--only-roots"],
                capture_output=True, text=True, timeout=60,
            )
        finally:
            shutil.rmtree(sock_dir, ignore_errors=True)
    assert proc.returncode == 1 and "is in use" in proc.stderr


def test_a_stale_socket_is_replaced(tmp_path: Path, daemons: list[DaemonProc]) -> None:
    d = make(daemons, tmp_path)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(d.socket))
    stale.close()  # left behind by a crash: nobody listens
    d.start()
    assert d.unix().health()["status"] == "ok"


def test_polling_mode_is_reported_and_still_delivers(tmp_path: Path, daemons: list[DaemonProc]) -> None:
    d = make(daemons, tmp_path, extra=["--watch", "polling", "--poll-interval", "0.3"]).start()
    watch = d.unix().health()["watch"]
    assert watch["mode"] == "polling" and "polling was requested" in watch["fallback_reason"]
    sid = "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"
    path = d.roots["claude-code"] / "-tmp-rt-claude-home-src-demo-app" / f"{sid}.jsonl"
    follow = SseCollector(d.unix(), f"/sessions/claude-code/{sid}/follow")
    try:
        append(path, claude_user_line(sid, "polled pelican")[0])
        follow.wait_for(lambda e: e.event == "event" and "pelican" in (e.data.get("text") or ""), 20, "the polled append")
    finally:
        follow.close()


def _ctx(data_dir: Path, roots: list[str], only_roots: bool, no_daemon: bool = False, **extra: Any) -> Any:
    from agtaild.cli import Context

    ns = argparse.Namespace(data_dir=str(data_dir), root=roots, only_roots=only_roots, no_daemon=no_daemon, json=True, **extra)
    return Context(ns)


def test_the_cli_uses_the_daemon_only_when_it_serves_what_was_asked(tmp_path: Path, daemons: list[DaemonProc]) -> None:
    from agtaild.query.backend import DaemonBackend, LocalBackend, open_backend

    d = make(daemons, tmp_path).start()
    same = [f"claude-code={d.roots['claude-code']}"]
    backend = open_backend(_ctx(d.data_dir, same, True))
    try:
        assert isinstance(backend, DaemonBackend)
        assert backend.client.socket_path == str(d.socket)  # socket first
        assert backend.call("sessions.list", {"limit": 1})["sessions"]
        from agtaild.errors import NotFound

        with pytest.raises(NotFound):
            backend.call("sessions.get", {"agent": "claude-code", "id": "nope"})
        with pytest.raises(UsageError):
            backend.call("sessions.list", {"limit": 0})
    finally:
        backend.close()
    other = open_backend(_ctx(d.data_dir, [f"claude-code={tmp_path / 'elsewhere'}"], True))
    assert isinstance(other, LocalBackend)
    other.close()
    forced = open_backend(_ctx(d.data_dir, same, True, no_daemon=True))
    assert isinstance(forced, LocalBackend)
    forced.close()
    # Socket gone (e.g. another user's runtime dir): TCP with the token still works.
    os.rename(d.socket, d.socket.with_name("moved"))
    tcp = open_backend(_ctx(d.data_dir, same, True))
    try:
        assert isinstance(tcp, DaemonBackend) and tcp.client.url == d.url
        assert tcp.call("agents.list", {})["agents"]
    finally:
        tcp.close()
        os.rename(d.socket.with_name("moved"), d.socket)


def test_tail_follows_over_sse(tmp_path: Path, daemons: list[DaemonProc], capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    from agtaild.cli import tail

    d = make(daemons, tmp_path).start()
    sid = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"
    ctx = _ctx(d.data_dir, [f"claude-code={d.roots['claude-code']}"], True, session=f"claude-code:{sid[:8]}",
               follow=False, lines=3, interval=1.0)
    assert tail.run(ctx) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["session"]["id"] == sid and len(doc["events"]) == 3
    # -f: the last events, then new ones as they are written (JSON Lines with --json).
    ctx.args.follow = True
    seen: list[str] = []
    done = threading.Event()

    def out_json(doc: Any) -> None:
        seen.append(json.dumps(doc))
        if "puffin" in (doc.get("text") or ""):
            done.set()
            raise KeyboardInterrupt  # ends the follow loop, as Ctrl-C would

    ctx.out_json = out_json
    thread = threading.Thread(target=lambda: _run_quietly(tail.run, ctx), daemon=True)
    thread.start()
    wait_until(lambda: len(seen) >= 3, 20, "the last events")
    path = d.roots["claude-code"] / "-tmp-rt-claude-home-src-demo-app" / f"{sid}.jsonl"
    append(path, claude_user_line(sid, "a tailed puffin")[0])
    assert done.wait(20), seen[-3:]
    thread.join(10)


def _run_quietly(fn: Any, ctx: Any) -> None:
    try:
        fn(ctx)
    except KeyboardInterrupt:
        pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [("127.0.0.1:7717", ("127.0.0.1", 7717)), ("[::1]:80", ("::1", 80)), ("none", None), ("localhost:0", ("localhost", 0))],
)
def test_parse_listen(value: str, expected: Any) -> None:
    assert parse_listen(value) == expected


@pytest.mark.parametrize("value", ["7717", "host:", ":80", "h:99999", "h:x"])
def test_parse_listen_refuses(value: str) -> None:
    with pytest.raises(UsageError):
        parse_listen(value)


def test_tail_follows_in_process_without_a_daemon(tmp_path: Path) -> None:
    import threading

    from agtaild.cli import tail

    root = copy_claude(tmp_path / "claude")
    sid = "6d4f83c7-6fe0-45b4-ae36-deb6afbc2e5e"
    ctx = _ctx(tmp_path / "data", [f"claude-code={root}"], True, no_daemon=True, session=f"claude-code:{sid}",
               follow=True, lines=2, interval=0.2)
    seen: list[dict[str, Any]] = []
    done = threading.Event()

    def out_json(doc: Any) -> None:
        seen.append(doc)
        if "gannet" in (doc.get("text") or ""):
            done.set()
            raise KeyboardInterrupt

    ctx.out_json = out_json
    thread = threading.Thread(target=lambda: _run_quietly(tail.run, ctx), daemon=True)
    thread.start()
    wait_until(lambda: len(seen) >= 2, 30, "the last events")
    append(root / "-tmp-rt-claude-home-src-demo-app" / f"{sid}.jsonl", claude_user_line(sid, "an in-process gannet")[0])
    assert done.wait(20), seen[-3:]
    thread.join(10)
    assert not thread.is_alive()


AGTAIL = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]


def test_agtail_open_prints_a_one_time_login_link(tmp_path: Path, daemons: list[DaemonProc]) -> None:
    import http.client
    from urllib.parse import urlsplit

    d = make(daemons, tmp_path).start()
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [*AGTAIL, "--data-dir", str(d.data_dir), "open", "--print"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    url = proc.stdout.strip()
    assert url.startswith(d.url + "/login?code=") and d.token not in url
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    conn.request("GET", f"{parts.path}?{parts.query}")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 303 and "HttpOnly" in (resp.getheader("Set-Cookie") or "")
    cookie = (resp.getheader("Set-Cookie") or "").split(";")[0]
    conn.request("GET", "/api/v1/agents", headers={"Cookie": cookie})
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["ok"] is True
    conn.request("GET", f"{parts.path}?{parts.query}")  # used once already
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 401
    d.stop()
    gone = subprocess.run(
        [*AGTAIL, "--data-dir", str(d.data_dir), "open", "--print"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert gone.returncode == 1 and "not running" in gone.stderr


@pytest.mark.parametrize("option", [["--rescan-interval", "0"], ["--poll-interval", "0"], ["--debounce", "-1"]])
def test_timers_that_would_spin_are_refused(tmp_path: Path, option: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agtaild.daemon", "--data-dir", str(tmp_path / "d"), "--socket", "none",
         "--listen", "127.0.0.1:0", "--only-roots", *option],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2 and option[0] in proc.stderr
