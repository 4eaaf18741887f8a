"""`agtail mcp` answers the handshake at once: an agent lists the tools of the MCP servers that
answered before its first model request (Claude Code in -p mode: about 2 s), and the SDK's
imports alone used to take that long. Measured as an agent meets it, a fresh process
(tests/mcp_probe.py); bench/bench_mcp_start.py has the figure (≤ 300 ms on an idle machine),
the bound here is generous for a loaded one."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.mcp.stdio import Connection, StdioServer
from tests.mcp_probe import SDK_MODULES, agtail_argv, env_for, handshake, imported_modules

CLAUDE = Path(__file__).resolve().parent / "corpus" / "real" / "claude-2.1.197" / "projects"

#: What a stdio server answering within 1.5 s got: listed by Claude Code 8 times of 8.
BOUND_SECONDS = 1.5


def test_initialize_is_answered_within_the_bound_before_any_index(tmp_path: Path) -> None:
    argv = agtail_argv("--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"claude-code={CLAUDE}", "mcp")
    then = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {"limit": 1}}},
    ]
    best = None
    for _ in range(3):  # the best of three: a loaded machine stalls any one process now and then
        done = handshake(argv, env_for(tmp_path / "home"), then=then)
        assert done["code"] == 0, done["stderr"][-2000:]
        best = done["seconds"] if best is None else min(best, done["seconds"])
    result = done["initialize"]["result"]
    assert result["serverInfo"]["name"] == "agtail" and result["protocolVersion"] == "2025-06-18"
    tools, listed = done["answers"][0]["result"]["tools"], done["answers"][1]["result"]
    assert {t["name"] for t in tools} >= {"search_sessions", "read_session", "usage_summary"}
    assert not listed["isError"] and listed["content"][0]["text"].startswith("Sessions (1, ")  # the index was built
    assert best is not None and best < BOUND_SECONDS, f"initialize answered after {best:.2f} s"


def test_the_stdio_server_never_imports_the_sdk(tmp_path: Path) -> None:
    """Neither for the handshake nor for a tool call: the SDK is the daemon's (/mcp over HTTP)."""
    argv = agtail_argv("--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"claude-code={CLAUDE}", "mcp",
                       importtime=True)
    then = [{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "search_sessions", "arguments": {"query": "hello"}}}]
    done = handshake(argv, env_for(tmp_path / "home"), then=then)
    assert done["code"] == 0 and done["answers"][0]["result"]["isError"] is False
    modules = imported_modules(done["stderr"])
    assert "agtaild.mcp.stdio" in modules
    assert sorted(m for m in modules if m.split(".")[0] in SDK_MODULES) == []


# -- the stdio server itself, on pipes -------------------------------------------------------

class Pipe:
    """The server's stdin as a pipe the test writes to, its stdout collected line by line."""

    def __init__(self, open_call: Any) -> None:
        r, w = os.pipe()
        self.stdin = os.fdopen(r, "rb")
        self.writer = os.fdopen(w, "wb")
        self.out = io.BytesIO()
        self.lock = threading.Lock()
        self.server = StdioServer(Connection(open_call), here="/here", stdin=self.stdin, stdout=self)
        self.thread = threading.Thread(target=self.server.serve, daemon=True)
        self.thread.start()

    def write(self, data: bytes) -> None:  # the server's stdout
        with self.lock:
            self.out.write(data)

    def flush(self) -> None:
        pass

    def send(self, raw: bytes | dict[str, Any]) -> None:
        self.writer.write(raw if isinstance(raw, bytes) else json.dumps(raw).encode() + b"\n")
        self.writer.flush()

    def answers(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(line) for line in self.out.getvalue().splitlines()]

    def wait_for(self, n: int) -> list[dict[str, Any]]:
        import time

        deadline = time.monotonic() + 20
        while len(self.answers()) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.answers()

    def close(self) -> list[dict[str, Any]]:
        self.writer.close()
        self.thread.join(20)
        assert not self.thread.is_alive()
        return self.answers()


def test_bad_messages_get_json_rpc_errors_and_notifications_no_answer() -> None:
    pipe = Pipe(lambda: (lambda method, params: {}))
    pipe.send(b"{not json\n")
    pipe.send(b"[1, 2]\n")
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pipe.send({"jsonrpc": "2.0", "id": "a", "method": "resources/list"})
    pipe.send({"jsonrpc": "2.0", "id": 7, "result": {}})  # a response: we asked nothing
    pipe.send({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {}})
    pipe.send({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}})
    out = pipe.close()
    assert [(a.get("id"), a.get("error", {}).get("code")) for a in out] == [
        (None, -32700), (None, -32600), ("a", -32601), (8, -32602), (9, None)
    ]
    assert out[-1]["result"]["protocolVersion"] == "2025-11-25"  # ours, the newest: the client decides


def test_a_ping_is_answered_while_a_tool_runs_and_a_queued_cancelled_call_is_dropped() -> None:
    release = threading.Event()

    def call(method: str, params: dict[str, Any]) -> Any:
        release.wait(20)
        return {"sessions": [], "next": None}

    pipe = Pipe(lambda: call)
    tool = {"name": "list_sessions", "arguments": {}}
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": tool})
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": tool})
    pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert pipe.wait_for(1) == [{"jsonrpc": "2.0", "id": 3, "result": {}}]  # the search still runs
    release.set()
    out = pipe.close()  # stdin closed: the call under way still gets its answer
    assert [a["id"] for a in out] == [3, 1]
    assert out[1]["result"]["isError"] is False and out[1]["result"]["content"][0]["text"].startswith("Sessions")


def test_a_backend_that_cannot_open_is_each_tool_calls_error() -> None:
    def cannot() -> Any:
        raise AgtailError("the index /x/index.sqlite3 is damaged")

    pipe = Pipe(cannot)
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_sessions"}})
    out = pipe.close()
    assert out[0]["result"]["serverInfo"]["name"] == "agtail"
    assert out[1]["result"] == {"content": [{"type": "text", "text": "the index /x/index.sqlite3 is damaged"}],
                                "isError": True}


def test_a_client_that_leaves_at_once_still_gets_the_index_built_and_closed(tmp_path: Path) -> None:
    """The backend opens behind the handshake; a client gone right after it does not leave a
    half-opened backend: the process waits for it, lets the first index finish, closes it."""
    import sqlite3

    data = tmp_path / "data"
    argv = agtail_argv("--data-dir", str(data), "--only-roots", "--root", f"claude-code={CLAUDE}", "mcp")
    done = handshake(argv, env_for(tmp_path / "home"))
    assert done["code"] == 0 and done["initialize"]["result"]["serverInfo"]["name"] == "agtail", done["stderr"]
    db = sqlite3.connect(data / "index.sqlite3")
    try:
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] > 0
    finally:
        db.close()
