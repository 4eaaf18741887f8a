"""Connections that have not authenticated never starve those that have (issue 22, item 1).

A real agtaild on loopback; another "local user" (tests/crowd.py, a process of its own) holds
1,000 idle TCP connections and 300 slowloris clients open against it, each one opened again as
soon as the daemon closes it, so the crowd never thins by itself. Meanwhile, each time on a
fresh connection, ``/health`` without a token and an authenticated search must answer within
1 s, and the unix socket is untouched. 0.2 (one cap of 64 shared by every loopback client)
reset every such request until the crowd left.

The crowd stops by itself after ATTACK_SECONDS (or at SIGTERM, which the test sends), and
only 127.0.0.1 is touched.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtail_client import Client
from tests.daemon_proc import REPO, DaemonProc, claude_user_line

SID = "7a3d0c41-9b2e-4f60-8d15-2c7e9f4b6a10"
WORD = "pomegranate"
IDLE = 1000
SLOWLORIS = 300
#: The crowd's own time limit, whatever happens to the test.
ATTACK_SECONDS = 60.0
ROUNDS = 15


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base: Path = tmp_path_factory.mktemp("crowd")
    proj = base / "claude" / "-tmp-crowd"
    proj.mkdir(parents=True)
    (proj / f"{SID}.jsonl").write_text(claude_user_line(SID, f"the {WORD} tree", cwd="/tmp/crowd")[0], encoding="utf-8")
    d = DaemonProc(base, {"claude-code": base / "claude"})
    try:
        d.start()
        yield d
    finally:
        d.cleanup()


def _health_over_fresh_tcp(host: str, port: int) -> bytes:
    """``/health`` without a token, on a connection of its own (as a monitor, or the viewer's
    first request, asks it)."""
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def _timed(timings: dict[str, list[float]], name: str, fn: object) -> object:
    start = time.monotonic()
    value = fn()  # type: ignore[operator]
    timings.setdefault(name, []).append(time.monotonic() - start)
    return value


def test_a_crowd_of_unauthenticated_connections_starves_nobody(daemon: DaemonProc) -> None:
    host, port_text = daemon.url.removeprefix("http://").rsplit(":", 1)
    port = int(port_text)
    crowd = subprocess.Popen(
        [sys.executable, "-m", "tests.crowd", host, port_text, str(IDLE), str(SLOWLORIS), str(ATTACK_SECONDS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO),
    )
    timings: dict[str, list[float]] = {}
    try:
        assert crowd.stdout is not None
        assert crowd.stdout.readline().strip() == "ready", crowd.stderr.read() if crowd.stderr else ""
        time.sleep(1.0)  # past the budget by now: the daemon is closing the crowd's connections
        for _ in range(ROUNDS):
            reply = _timed(timings, "health", lambda: _health_over_fresh_tcp(host, port))
            assert isinstance(reply, bytes) and reply.startswith(b"HTTP/1.1 200"), reply

            def search() -> list[dict]:
                with Client(url=daemon.url, token=daemon.token, timeout=5) as client:
                    return list(client.search(WORD, limit=5))

            hits = _timed(timings, "search", search)
            assert [h["session"]["id"] for h in hits] == [SID]  # type: ignore[union-attr]
            with daemon.unix(timeout=5) as unix:
                assert _timed(timings, "unix health", unix.health)["ok"] is True  # type: ignore[index]
            time.sleep(0.2)
        assert crowd.poll() is None, "the crowd stopped before the measurements ended"
    finally:
        if crowd.poll() is None:
            crowd.send_signal(signal.SIGTERM)
        out, _err = crowd.communicate(timeout=20)
    stats = json.loads(out.strip().splitlines()[-1])
    worst = {name: round(max(values), 3) for name, values in timings.items()}
    print(f"crowd {stats}; worst answers (s) {worst}")
    assert stats["idle"] + stats["slow"] == IDLE + SLOWLORIS, f"scaled down to the open-file limit: {stats}"
    assert stats["closed_by_server"] > 0, stats
    assert all(t < 1.0 for t in worst.values()), worst
    log = daemon.log()
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
