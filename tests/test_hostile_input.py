"""A live agtaild under hostile input (issue #9): control characters in transcripts,
pathological regexes, huge queries, deep JSON, malformed HTTP, slow clients, too many
connections, hostile sync manifests. Throughout, a watcher asks ``/api/v1/health`` over the
unix socket every 0.1 s and every answer must come within 1 s; at the end the daemon still
answers over TCP and stops on SIGTERM.

The unit-level tests of each defence are beside their modules (test_terminal_safety,
test_query_limits, test_api_abuse, test_http_guard, test_sync_hostile); this file checks that
they hold together, against the real process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtail_client import ApiError, Client
from tests.daemon_proc import DaemonProc, claude_user_line

SID = "11111111-2222-4333-8444-555555555555"
EVIL = "a" * 40 + " \x1b]0;PWNED\x07 \x1b[2J \x9b31m \x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\"


class HealthWatch:
    """Asks /health over the unix socket every 0.1 s in a thread; records the slowest answer."""

    def __init__(self, daemon: DaemonProc) -> None:
        self.daemon = daemon
        self.worst = 0.0
        self.failures: list[str] = []
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        client = self.daemon.unix(timeout=5)
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                client.health(timeout=5)
                self.count += 1
            except Exception as exc:  # the point is to notice anything at all
                self.failures.append(repr(exc))
                client.close()
            self.worst = max(self.worst, time.monotonic() - start)
            self._stop.wait(0.1)
        client.close()

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("hostile")
    proj = base / "claude" / "-tmp-evil"
    proj.mkdir(parents=True)
    (proj / f"{SID}.jsonl").write_text(claude_user_line(SID, EVIL, cwd="/tmp/\x1b[31mevil")[0], encoding="utf-8")
    d = DaemonProc(base, {"claude-code": base / "claude"})
    try:
        d.start()
        yield d
    finally:
        d.cleanup()


def _raw(daemon: DaemonProc, payload: bytes, *, read_for: float = 3.0) -> bytes:
    """Send raw bytes to the TCP port; whatever comes back until close or ``read_for`` s."""
    host, port = daemon.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=read_for) as sock:
        sock.sendall(payload)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except TimeoutError:
            pass
        return data


def _headers(daemon: DaemonProc) -> str:
    return f"Host: 127.0.0.1\r\nAuthorization: Bearer {daemon.token}\r\nConnection: close\r\n"


def test_the_daemon_keeps_answering_through_every_attack(daemon: DaemonProc) -> None:
    tcp = daemon.tcp(timeout=30)
    with HealthWatch(daemon) as watch:
        # A catastrophic regex: RE2 answers at once (0.1.0 froze every request for 60 s+).
        start = time.monotonic()
        assert tcp.get("/search", {"q": "(a+)+b", "mode": "regex"})["hits"] == []
        assert tcp.get("/search", {"q": "(a+)+ ", "mode": "regex"})["hits"]
        assert time.monotonic() - start < 5
        with pytest.raises(ApiError) as refused:
            tcp.get("/search", {"q": "(a)\\1", "mode": "regex"})
        assert refused.value.status == 400 and "RE2" in refused.value.message

        # A words query with too many terms: a clear 400, at once.
        with pytest.raises(ApiError) as expensive:
            tcp.get("/search", {"q": " ".join(f"w{i}" for i in range(200)), "mode": "words"})
        assert expensive.value.status == 400 and "query too expensive" in expensive.value.message

        # Deep JSON-RPC: a JSON-RPC error, never a 500.
        for body in (b"[" * 100_000, b"[" * 500 + b"]" * 500):
            reply = _raw(daemon, f"POST /rpc HTTP/1.1\r\n{_headers(daemon)}Content-Type: application/json\r\n"
                                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body)  # fmt: skip
            assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
            assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["code"] in (-32700, -32600)

        # An announced body of a terabyte: 413 from the header, at once.
        start = time.monotonic()
        reply = _raw(daemon, f"POST /rpc HTTP/1.1\r\n{_headers(daemon)}Content-Type: application/json\r\n"
                             "Content-Length: 1000000000000\r\n\r\n".encode(), read_for=2)  # fmt: skip
        assert reply.startswith(b"HTTP/1.1 413") and time.monotonic() - start < 1.5

        # Malformed requests, many of them.
        for _ in range(30):
            assert _raw(daemon, b"GET /\x00 HTTP/1.1\r\nHost: \x01\r\n\r\n", read_for=2)[9:12] == b"400"

        # Slow clients: heads that never finish, held open while others are served.
        slow = []
        host, port = daemon.url.removeprefix("http://").rsplit(":", 1)
        for _ in range(20):
            s = socket.create_connection((host, int(port)), timeout=5)
            s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(s)
        assert tcp.health()["ok"] is True
        # Many connections that never authenticate: they take no authenticated client's place
        # (tests/test_http_crowd.py crowds it with 1,300), and none outlives its deadline of 5 s.
        crowd = [socket.create_connection((host, int(port)), timeout=5) for _ in range(80)]
        time.sleep(0.3)
        assert tcp.health()["ok"] is True
        deadline = time.monotonic() + 8
        closed = 0
        for s in [*slow, *crowd]:
            s.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                closed += s.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except TimeoutError:
                pass
        assert closed == 100
        for s in [*slow, *crowd]:
            s.close()

        # A hostile sync manifest pushed to the import endpoint: refused, nothing written.
        bad = {"format": "agtail-manifest", "version": 1, "collection": "x",
               "files": [{"path": "claude-code/../../escape.jsonl", "size": 1, "sha256": "0" * 64, "agent": "claude-code"}]}  # fmt: skip
        reply = _raw(daemon, f"POST /api/v1/import/x/check HTTP/1.1\r\n{_headers(daemon)}Content-Type: application/json\r\n"
                             f"Content-Length: {len(json.dumps(bad))}\r\n\r\n{json.dumps(bad)}".encode())  # fmt: skip
        assert reply.split(b" ", 2)[1] in (b"400", b"409"), reply[:300]
        deep = b'{"files": ' + b"[" * 5000 + b"]" * 5000 + b"}"
        reply = _raw(daemon, f"POST /api/v1/import/x/check HTTP/1.1\r\n{_headers(daemon)}Content-Type: application/json\r\n"
                             f"Content-Length: {len(deep)}\r\n\r\n".encode() + deep)  # fmt: skip
        assert reply.split(b" ", 2)[1] in (b"400", b"409"), reply[:300]

    assert watch.failures == [] and watch.count > 10
    assert watch.worst < 1.0, f"/health took {watch.worst:.2f} s at worst"
    time.sleep(0.2)
    assert tcp.health()["ok"] is True  # TCP clients are served again once the crowd left
    tcp.close()

    log = daemon.log_path.read_text(errors="replace")
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
    assert log.count("bad request from") <= 3  # 30 malformed requests, rate-limited


def test_the_cli_through_the_daemon_shows_no_escape_sequences(daemon: DaemonProc) -> None:
    env = {**os.environ, "HOME": str(daemon.base / "home"), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    script = "import sys; from agtaild.cli import main; sys.exit(main())"
    for command in (["list"], ["show", f"claude-code:{SID[:8]}"], ["tail", f"claude-code:{SID[:8]}"], ["search", "PWNED"]):
        proc = subprocess.run([sys.executable, "-c", script, "--data-dir", str(daemon.data_dir), *command],
                              env=env, capture_output=True, timeout=60)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert b"PWNED" in proc.stdout + proc.stderr
        for raw in (b"\x1b", b"\x07", "\x9b".encode()):
            assert raw not in proc.stdout and raw not in proc.stderr, command


def test_sigterm_stops_the_daemon_promptly_after_the_attacks(daemon: DaemonProc) -> None:
    client = Client(socket_path=str(daemon.socket), timeout=30)
    client.get("/search", {"q": "(x+x+)+y", "mode": "regex"})
    client.close()
    start = time.monotonic()
    assert daemon.stop(timeout=10) == 0
    assert time.monotonic() - start < 10

