"""MCP: `agtail mcp` over stdio and the daemon's /mcp, driven by the official SDK's own client.

The stdio server runs in-process mode on the sample corpus (plus a hostile session written
here and an imported copy); the HTTP endpoint runs in a real agtaild (tests/daemon_proc.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from agtaild.mcp import render
from agtaild.mcp.tools import BY_NAME, ToolArgumentError, check_arguments
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL, DaemonProc

REPO = Path(__file__).resolve().parent.parent
TOOLS = {"search_sessions", "list_sessions", "sessions_here", "read_session", "usage_summary", "handoff_brief",
         "set_title", "add_label", "remove_label", "file_history", "session_overview", "session_tool_calls",
         "recent_edits", "child_sessions", "compare_usage", "activity_report", "tool_usage", "list_projects",
         "search_session"}
#: The subagent of the Claude "sub" scenario: its answer is the needle.
NEEDLE = "wc -l reports 6"
NEEDLE_SESSION = "claude-code:agent-abeadf394adf045da"
HOSTILE_SID = "0b1e5c3a-7d2f-4c55-9a61-5e0f3d9c2b10"
HOSTILE_CWD = "/work/hostile-app"
#: Text no transcript may use to break the protocol: a fake JSON-RPC answer on its own line,
#: NUL, escape codes, Unicode line separators and a Content-Length header. (A lone surrogate
#: makes the indexer count the line as bad, so it never reaches a tool: render.clean's test.)
HOSTILE = (
    'zebra-needle-77\n{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n'
    "\u0000\u001b[31mred\u001b[0m \u2028\u2029\u0085 Content-Length: 5\r\n\r\n"
)


def _line(**doc: Any) -> str:
    return json.dumps(doc) + "\n"


def write_hostile_session(projects: Path) -> Path:
    """A Claude Code session whose texts try to break the protocol, with a 60 kB tool output."""
    folder = projects / "-work-hostile-app"
    folder.mkdir(parents=True)
    base = {"sessionId": HOSTILE_SID, "cwd": HOSTILE_CWD, "version": "2.1.197", "isSidechain": False}
    lines = [
        _line(type="user", uuid="u1", parentUuid=None, timestamp="2026-11-30T10:00:00.000Z",
              message={"role": "user", "content": "Dump the big file. " + HOSTILE}, **base),
        _line(type="assistant", uuid="a1", parentUuid="u1", timestamp="2026-11-30T10:00:01.000Z",
              message={"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                    "input": {"command": "cat big.txt"}}],
                       "usage": {"input_tokens": 10, "output_tokens": 5}}, **base),
        _line(type="user", uuid="u2", parentUuid="a1", timestamp="2026-11-30T10:00:02.000Z",
              message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                     "content": "B" * 60_000 + HOSTILE}]}, **base),
        _line(type="assistant", uuid="a2", parentUuid="u2", timestamp="2026-11-30T10:00:03.000Z",
              message={"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "text", "text": "Done. " + HOSTILE}],
                       "usage": {"input_tokens": 12, "output_tokens": 7}}, **base),
    ]
    path = folder / f"{HOSTILE_SID}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    claude = tmp_path / "claude-projects"
    shutil.copytree(CLAUDE_REAL, claude)
    write_hostile_session(claude)
    return {"claude-code": claude, "codex": CODEX_REAL}


def import_copy(data_dir: Path, collection: str) -> None:
    """One Claude session imported from another machine (the import store's native layout)."""
    src = CLAUDE_REAL / "-tmp-rt-claude-home-src-demo-app" / "c17426d0-3a0c-46ca-9b8c-d079169cd4a9.jsonl"
    dest = data_dir / "imported" / collection / "claude-code" / "-tmp-rt-claude-home-src-demo-app"
    dest.mkdir(parents=True)
    shutil.copy2(src, dest / src.name)


def stdio_params(data_dir: Path, roots: dict[str, Path], cwd: Path) -> StdioServerParameters:
    args = ["-c", "import sys; from agtaild.cli import main; sys.exit(main())", "mcp",
            "--data-dir", str(data_dir), "--only-roots"]
    for agent, path in roots.items():
        args += ["--root", f"{agent}={path}"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(cwd))


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(name, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text


def expected_brief(tmp_path: Path, roots: dict[str, Path], agent: str, ident: str, to: str) -> str:
    """The brief `agtail handoff --print` makes of the same roots, in-process."""
    from agtaild.adapters import get_adapter
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service
    from agtaild.share.brief import build
    from agtaild.share.gather import open_session

    svc = Service(Config(data_dir=str(tmp_path / "expected"), roots=[RootSpec(a, str(p)) for a, p in roots.items()], archive=False))
    try:
        svc.update_index()
        return build(open_session(svc.call, agent, ident), target=get_adapter(to).name)
    finally:
        svc.close()


# -- pure parts ------------------------------------------------------------------------------


def test_clean_leaves_valid_utf8_without_control_codes() -> None:
    out = render.clean("a\x00b\x1b[31mc\ud800d\te\nf\x7f")
    out.encode("utf-8")  # would raise on a lone surrogate
    assert out == "a\\x00b\\x1b[31mc?d\te\nf\\x7f"


def test_cut_marks_what_it_left_out() -> None:
    assert render.cut("abc", 5) == "abc"
    assert render.cut("abcdefgh", 3, "ask for more") == "abc …[truncated: 5 more chars; ask for more]"


def test_arguments_are_checked_against_the_schema() -> None:
    tool = BY_NAME["read_session"]
    args = check_arguments(tool, {"id": "claude-code:abc"})
    assert args["after_seq"] == -1 and args["limit"] == 50 and args["tool_output_chars"] == 600
    for bad, message in (
        ({}, "'id' is required"),
        ({"id": 5}, "must be a string"),
        ({"id": "x:y", "limit": 0}, "between 1 and 500"),
        ({"id": "x:y", "limit": True}, "must be an integer"),
        ({"id": "x:y", "colour": "red"}, "unknown argument"),
        ([1, 2], "must be an object"),
    ):
        with pytest.raises(ToolArgumentError, match=message):
            check_arguments(tool, bad)
    with pytest.raises(ToolArgumentError, match="one of"):
        check_arguments(BY_NAME["usage_summary"], {"by": "colour"})


def test_a_bug_is_a_tool_error_without_its_details_and_the_server_lives_on() -> None:
    from agtaild.errors import NotFound
    from agtaild.mcp.server import build_server

    def call(method: str, params: dict[str, Any]) -> Any:
        if method == "stats":
            raise RuntimeError("secret detail /home/someone/.claude")
        if method == "sessions.get":
            raise NotFound("no codex session 'abc'")
        return {"sessions": [], "next": None}

    async def run() -> None:
        async with Client(build_server(call, here="/somewhere")) as client:
            result = await client.call_tool("usage_summary", {})
            text = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and text == "usage_summary: internal error (the server's log has the details)"
            result = await client.call_tool("read_session", {"id": "codex:abc"})
            assert result.is_error and result.content[0].text == "no codex session 'abc'"  # type: ignore[union-attr]
            result = await client.call_tool("sessions_here", {})
            assert not result.is_error and result.content[0].text == "Sessions in /somewhere: none."  # type: ignore[union-attr]

    anyio.run(run)


# -- stdio -----------------------------------------------------------------------------------


def test_stdio_server_answers_every_tool_from_the_corpus(tmp_path: Path, roots: dict[str, Path]) -> None:
    data = tmp_path / "data"
    import_copy(data, "laptop")
    here = tmp_path / "work"
    here.mkdir()

    async def run() -> None:
        async with Client(stdio_params(data, roots, here), read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            for tool in listed.tools:
                assert tool.input_schema["type"] == "object" and tool.description

            # The needle: found by search, read by the id the search printed.
            err, text = await call(client, "search_sessions", {"query": NEEDLE})
            assert not err, text
            assert f"- {NEEDLE_SESSION} seq 4 " in text
            assert "[subagent of claude-code:77734736-bfec-415b-bcc2-49975539e98b]" in text
            err, text = await call(client, "read_session", {"id": NEEDLE_SESSION})
            assert not err, text
            assert text.startswith(f"Session {NEEDLE_SESSION}\n")
            assert "hello.py has 6 lines (wc -l reports 6)." in text
            assert text.endswith("(end of session)")

            # Filters reach the service.
            err, text = await call(client, "search_sessions", {"query": "hello.py", "agent": "codex", "limit": 2})
            assert not err and "codex:" in text and "claude-code:" not in text.split("best first:")[1]
            assert "(more: call again with cursor=" in text

            # Recent sessions, the imported copy labelled as such.
            err, text = await call(client, "list_sessions", {"limit": 50})
            assert not err, text
            assert "claude-code:c17426d0-3a0c-46ca-9b8c-d079169cd4a9" in text
            assert "[imported from collection laptop]" in text
            err, text = await call(client, "read_session",
                                   {"id": "claude-code:c17426d0", "collection": "laptop", "limit": 1})
            assert not err, text
            assert "[imported from collection laptop]" in text
            assert "(more: read_session(id='claude-code:c17426d0-3a0c-46ca-9b8c-d079169cd4a9', collection='laptop', after_seq=0))" in text

            # "This directory": the server's cwd by default, or the one given.
            err, text = await call(client, "sessions_here", {})
            assert not err and text == f"Sessions in {here}: none."
            err, text = await call(client, "sessions_here", {"cwd": HOSTILE_CWD})
            assert not err and f"claude-code:{HOSTILE_SID}" in text and "codex:" not in text

            err, text = await call(client, "usage_summary", {"since": "2026-01-01", "by": "agent"})
            assert not err, text
            assert text.startswith("Usage since 2026-01-01: ")
            assert "- claude-code: " in text and "- codex: " in text

            # The handoff brief: the one `agtail handoff --print` makes, here for the asking agent.
            err, text = await call(client, "handoff_brief", {"id": "claude-code:c17426d0", "to": "codex"})
            assert not err, text
            assert text == expected_brief(tmp_path, roots, "claude-code", "c17426d0", "codex")
            assert text.startswith("# Handoff") and "Continue it in Codex CLI" in text
            assert "- [x] Add tests" in text

            # Bad arguments and unknown sessions are tool errors; the connection lives on.
            for name, args, message in (
                ("handoff_brief", {"id": "claude-code:c17426d0", "to": "nosuchagent"}, "argument 'to': unknown agent"),
                ("handoff_brief", {"id": "claude-code:c17426d0", "max_tokens": 10}, "between 200 and"),
                ("handoff_brief", {"id": "claude-code:ffffffff"}, "no claude-code session"),
                ("read_session", {}, "'id' is required"),
                ("read_session", {"id": "no-colon"}, "no session 'no-colon'"),  # an id of any agent
                ("read_session", {"id": "claude-code:"}, "must be AGENT:ID"),
                ("read_session", {"id": "claude-code:ffffffff"}, "no claude-code session"),
                ("read_session", {"id": "nosuchagent:abc"}, "unknown agent"),
                ("list_sessions", {"limit": "ten"}, "must be an integer"),
                ("search_sessions", {"query": "x", "since": "yesterday-ish"}, "is not a date"),
                ("search_sessions", {"query": "(", "mode": "regex"}, "argument 'query' is not a regular expression RE2 accepts"),
                ("no_such_tool", {}, "no tool 'no_such_tool'"),
            ):
                err, text = await call(client, name, args)
                assert err, (name, args, text)
                assert message in text, (name, args, text)
            err, text = await call(client, "list_sessions", {"limit": 1})
            assert not err and text.startswith("Sessions (1, ")

    anyio.run(run)


def test_stdio_transcript_text_cannot_break_the_protocol(tmp_path: Path, roots: dict[str, Path]) -> None:
    async def run() -> None:
        async with Client(stdio_params(tmp_path / "data", roots, tmp_path), read_timeout_seconds=60) as client:
            err, text = await call(client, "search_sessions", {"query": "zebra-needle-77"})
            assert not err and f"claude-code:{HOSTILE_SID}" in text
            err, text = await call(client, "read_session", {"id": f"claude-code:{HOSTILE_SID}"})
            assert not err, text
            text.encode("utf-8")
            assert "\x00" not in text and "\x1b" not in text and "\r" not in text
            assert "\\x1b[31mred" in text and "\u2028\u2029\\x85" in text and '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}' in text
            # The 60 kB tool output is cut, with the marker saying how to see more.
            assert "…[truncated: " in text and "tool_output_chars=N" in text
            assert len(text) < 10_000
            err, wide = await call(
                client, "read_session", {"id": f"claude-code:{HOSTILE_SID}", "tool_output_chars": 100_000, "max_chars": 100_000}
            )
            assert not err and "B" * 60_000 in wide
            # A small page: the footer names the next page, which continues where this one stopped.
            err, first = await call(client, "read_session", {"id": f"claude-code:{HOSTILE_SID}", "limit": 2})
            assert "after_seq=1))" in first and "[2]" not in first
            err, second = await call(client, "read_session", {"id": f"claude-code:{HOSTILE_SID}", "after_seq": 1})
            assert "[0]" not in second and "[2]" in second and second.endswith("(end of session)")
            # The session is still served after all that.
            err, text = await call(client, "list_sessions", {"limit": 1})
            assert not err

    anyio.run(run)


# -- HTTP in the daemon ----------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path, roots: dict[str, Path]) -> Any:
    proc = DaemonProc(tmp_path, dict(roots)).start()
    try:
        yield proc
    finally:
        proc.cleanup()


def test_daemon_serves_mcp_over_http_with_the_token(daemon: DaemonProc) -> None:
    url = daemon.url.rstrip("/") + "/mcp"

    async def run() -> None:
        auth_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {daemon.token}"}, timeout=60)
        async with auth_http as http, Client(streamable_http_client(url, http_client=http)) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            err, text = await call(client, "search_sessions", {"query": NEEDLE})
            assert not err and f"- {NEEDLE_SESSION} seq 4 " in text
            err, text = await call(client, "read_session", {"id": NEEDLE_SESSION})
            assert not err and "hello.py has 6 lines (wc -l reports 6)." in text
            err, text = await call(client, "list_sessions", {"agent": "codex", "limit": 3})
            assert not err and text.startswith("Sessions (3, ")
            err, text = await call(client, "usage_summary", {"since": "2026-01-01"})
            assert not err and text.startswith("Usage since 2026-01-01: ")
            # Over HTTP the daemon has no "this directory": the caller names it.
            err, text = await call(client, "sessions_here", {})
            assert err and "'cwd' is required" in text
            err, text = await call(client, "sessions_here", {"cwd": HOSTILE_CWD})
            assert not err and f"claude-code:{HOSTILE_SID}" in text
            err, text = await call(client, "read_session", {"id": "claude-code:"})
            assert err and "AGENT:ID" in text
            err, text = await call(client, "handoff_brief", {"id": f"claude-code:{HOSTILE_SID}", "to": "gemini"})
            assert not err and text.startswith("# Handoff") and "Continue it in Gemini" in text

        # The unix socket needs no token.
        transport = httpx2.AsyncHTTPTransport(uds=str(daemon.socket))
        unix_http = httpx2.AsyncClient(transport=transport, timeout=60)
        async with unix_http as http, Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client:
            err, text = await call(client, "search_sessions", {"query": "zebra-needle-77"})
            assert not err and f"claude-code:{HOSTILE_SID}" in text

        # Over TCP: no token, no answer; a foreign Host or Origin is refused even with it.
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        accept = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient(timeout=30) as http:
            resp = await http.post(url, json=body, headers=accept)
            assert resp.status_code == 401 and resp.json()["error"]["code"] == "unauthorized"
            auth = {**accept, "Authorization": f"Bearer {daemon.token}"}
            resp = await http.post(url, json=body, headers={**auth, "Host": "evil.example"})
            assert resp.status_code == 403
            resp = await http.post(url, json=body, headers={**auth, "Origin": "http://evil.example"})
            assert resp.status_code == 403
            resp = await http.post(url, content=b"{not json", headers={**auth, "Content-Type": "application/json"})
            assert 400 <= resp.status_code < 500
            # Stateless: nothing to stream from the server.
            resp = await http.get(url, headers={"Accept": "text/event-stream", "Authorization": f"Bearer {daemon.token}"})
            assert resp.status_code == 405

    anyio.run(run)
    assert "Traceback" not in daemon.log()
    assert "Terminating session" not in daemon.log()  # no INFO line per request


def test_stdio_server_answers_through_a_running_daemon(daemon: DaemonProc, tmp_path: Path) -> None:
    """No roots given: only the daemon (which reads the corpus) knows the needle as a live
    session. In-process, this data dir would at most hold archive copies, labelled archived."""
    args = ["-c", "import sys; from agtaild.cli import main; sys.exit(main())", "mcp", "--data-dir", str(daemon.data_dir)]
    home = tmp_path / "empty-home"
    home.mkdir()
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp_path),
                                   env={**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home)})

    async def run() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            err, text = await call(client, "search_sessions", {"query": NEEDLE})
            assert not err and f"- {NEEDLE_SESSION} seq 4 " in text and "[archived" not in text
            err, text = await call(client, "sessions_here", {"cwd": HOSTILE_CWD})
            assert not err and f"claude-code:{HOSTILE_SID}" in text and "[archived" not in text

    anyio.run(run)


@pytest.mark.parametrize("argv", [["--help"], ["mcp", "--help"], ["list", "--help"]])
def test_the_cli_does_not_import_the_sdk_until_mcp_runs(argv: list[str]) -> None:
    import subprocess

    probe = [sys.executable, "-X", "importtime", "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]
    proc = subprocess.run([*probe, *argv], capture_output=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    modules = {ln.rpartition("|")[2].strip() for ln in proc.stderr.decode().splitlines() if ln.startswith("import time:")}
    assert "agtaild.cli" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic", "starlette", "anyio"))
    assert loaded == []
    if argv[0] == "mcp":
        assert b"search_sessions" in proc.stdout
