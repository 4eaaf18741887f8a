"""The MCP read tools of a closer look (session_overview, session_tool_calls, recent_edits,
child_sessions, compare_usage, activity_report, tool_usage, list_projects, search_session),
driven by the official SDK's client over stdio on the corpus plus a session holding a secret;
and the service methods behind them (sessions.overview, sessions.children, tools.calls,
edits.recent): bounded, paginated, masked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from agtaild.config import Config, RootSpec
from agtaild.errors import UsageError
from agtaild.query.service import Service
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL
from tests.test_mcp import call, stdio_params

#: Format-valid fake token, assembled so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
LEAKY = "5e1c7a2b-0c44-4a3e-9d0f-7b6a5c4d3e21"
PARENT = "claude-code:77734736-bfec-415b-bcc2-49975539e98b"
CHILD = "claude-code:agent-abeadf394adf045da"
WRITER = "claude-code:2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"
NEW_TOOLS = (
    "session_overview",
    "session_tool_calls",
    "recent_edits",
    "child_sessions",
    "compare_usage",
    "activity_report",
    "tool_usage",
    "list_projects",
    "search_session",
)


def write_leaky_session(projects: Path) -> None:
    """A Claude Code session that writes a token into a file with Write, then runs Bash."""
    folder = projects / "-work-leaky"
    folder.mkdir(parents=True)
    base = {"sessionId": LEAKY, "cwd": "/work/leaky", "version": "2.1.197", "isSidechain": False}
    content = f"TOKEN={GITHUB}\n" + "".join(f"line {i}\n" for i in range(100))

    def line(**doc: Any) -> str:
        return json.dumps({**doc, **base}) + "\n"

    lines = [
        line(
            type="user",
            uuid="u1",
            parentUuid=None,
            timestamp="2026-11-30T11:00:00.000Z",
            message={"role": "user", "content": "Write the env file, then list it."},
        ),
        line(
            type="assistant",
            uuid="a1",
            parentUuid="u1",
            timestamp="2026-11-30T11:00:01.000Z",
            message={
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "usage": {"input_tokens": 10, "output_tokens": 5},
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Write",
                        "input": {"file_path": "/work/leaky/.env", "content": content},
                    }
                ],
            },
        ),
        line(
            type="user",
            uuid="u2",
            parentUuid="a1",
            timestamp="2026-11-30T11:00:01.250Z",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "File created"}],
            },
            toolUseResult={
                "type": "create",
                "filePath": "/work/leaky/.env",
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            },
        ),
        line(
            type="assistant",
            uuid="a2",
            parentUuid="u2",
            timestamp="2026-11-30T11:00:02.000Z",
            message={
                "id": "m2",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "usage": {"input_tokens": 12, "output_tokens": 6},
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Bash",
                        "input": {"command": "ls -la /work/leaky"},
                    }
                ],
            },
        ),
        line(
            type="user",
            uuid="u3",
            parentUuid="a2",
            timestamp="2026-11-30T11:00:04.500Z",
            message={
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t2", "content": "ls: denied", "is_error": True}
                ],
            },
        ),
    ]
    (folder / f"{LEAKY}.jsonl").write_text("".join(lines), encoding="utf-8")


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    claude = tmp_path / "claude-projects"
    shutil.copytree(CLAUDE_REAL, claude)
    write_leaky_session(claude)
    return {"claude-code": claude, "codex": CODEX_REAL}


@pytest.fixture
def svc(tmp_path: Path, roots: dict[str, Path]) -> Service:
    service = Service(
        Config(
            data_dir=str(tmp_path / "svc"),
            roots=[RootSpec(a, str(p)) for a, p in roots.items()],
            archive=False,
        )
    )
    service.update_index()
    yield service
    service.close()


def test_the_sdk_client_reads_every_new_tool(tmp_path: Path, roots: dict[str, Path]) -> None:
    here = tmp_path / "work"
    here.mkdir()

    async def run() -> None:
        async with Client(stdio_params(tmp_path / "data", roots, here), read_timeout_seconds=60) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(NEW_TOOLS) <= set(listed) and len(listed) >= 17  # beyond AgentsView's 16
            for name in NEW_TOOLS:
                schema = listed[name].input_schema
                assert schema["additionalProperties"] is False and listed[name].annotations.read_only_hint
                assert all(p.get("description") for p in schema["properties"].values())
                assert schema["properties"]["max_chars"]["maximum"] == 200_000

            err, text = await call(client, "session_overview", {"id": PARENT})
            assert not err, text
            assert "tool calls: 1 (0 failed): Agent 1" in text and "child sessions (subagents): 1" in text
            assert f"  - {CHILD} | 2 msgs" in text and "compactions: 0" in text and "4,180 tokens" in text

            err, text = await call(client, "child_sessions", {"id": PARENT})
            assert not err and f"- {CHILD} |" in text and "1 in all" in text, text

            err, text = await call(client, "session_tool_calls", {"id": f"claude-code:{LEAKY}"})
            assert not err, text
            assert "- seq 1 | 2026-11-30 11:00 | Write | ok | 250 ms" in text
            assert "| Bash | error | 2500 ms" in text and "ls -la /work/leaky" in text
            assert GITHUB not in text and "«secret:github-pat" in text  # the input is masked
            err, text = await call(
                client, "session_tool_calls", {"id": f"claude-code:{LEAKY}", "tool": "Bash"}
            )
            assert "Write" not in text.split("\n", 1)[1] and "Bash" in text

            err, text = await call(client, "recent_edits", {"id": f"claude-code:{LEAKY}", "diff_lines": 3})
            assert not err, text
            assert "create /work/leaky/.env" in text and "… 98 more diff lines" in text
            assert GITHUB not in text and "«secret:github-pat" in text
            err, text = await call(
                client, "recent_edits", {"cwd": "/tmp/rt/claude/home/src/demo-app", "limit": 1}
            )
            assert not err and "(more: call again with cursor=" in text, text
            cursor = text.rsplit("cursor=", 1)[1].split("'")[1]
            err, second = await call(
                client,
                "recent_edits",
                {"cwd": "/tmp/rt/claude/home/src/demo-app", "limit": 1, "cursor": cursor},
            )
            assert not err and second.splitlines()[1] != text.splitlines()[1], second
            err, text = await call(client, "recent_edits", {})
            assert not err and text == f"No recorded file change under {here}.", text

            err, text = await call(client, "compare_usage", {"sessions": f"{WRITER},claude-code:{LEAKY}"})
            assert not err and "10,450 tokens" in text and "33 tokens" in text, text
            err, text = await call(
                client,
                "compare_usage",
                {"a_since": "2026-11-29", "a_until": "2026-11-29", "b_since": "2026-11-30"},
            )
            assert not err and "- A 2026-11-29 → 2026-11-29: 0 tokens" in text, text
            err, text = await call(client, "compare_usage", {"sessions": WRITER})
            assert err and "2 to 10 sessions" in text

            err, text = await call(client, "activity_report", {"since": "2026-11-01", "max_chars": 1000})
            assert not err and text.startswith("Activity since 2026-11-01") and "[truncated:" in text, text
            assert len(text) < 1200

            err, text = await call(client, "tool_usage", {"since": "2026-01-01", "limit": 2})
            assert not err and text.count("\n- ") == 2 and "- Bash [shell]: 8 calls, 2 failed" in text, text

            err, text = await call(client, "list_projects", {"limit": 2})
            assert not err and "(… 2 more" in text and "demo-app" in text, text

            err, text = await call(client, "search_session", {"id": WRITER, "query": "README", "limit": 3})
            assert not err and text.startswith("3 matches for 'README'"), text
            assert {line.split(" seq ")[0] for line in text.splitlines() if line.startswith("- ")} == {
                f"- {WRITER}"
            }
            err, text = await call(client, "search_session", {"id": CHILD, "query": "README"})
            assert not err and text == "No matches for 'README'.", text

            err, text = await call(client, "session_overview", {"id": "claude-code:nonexistent"})
            assert err and "nonexistent" in text

    anyio.run(run)


def test_tool_calls_page_on_and_are_filtered_in_sql_order(svc: Service) -> None:
    ref = {"agent": "codex", "id": "01a229d7-c676"}
    every = svc.call("tools.calls", {**ref, "limit": 500})["calls"]
    assert [c["seq"] for c in every] == sorted(c["seq"] for c in every) and len(every) >= 3
    seen: list[int] = []
    params: dict[str, Any] = {**ref, "limit": 1}
    while True:
        page = svc.call("tools.calls", params)
        seen += [c["seq"] for c in page["calls"]]
        if not page["next"]:
            break
        params = {**ref, "limit": 1, "cursor": page["next"]}
    assert seen == [c["seq"] for c in every]
    only = svc.call("tools.calls", {**ref, "tool": "exec_command"})["calls"]
    assert (
        only and {c["tool"] for c in only} == {"exec_command"} and [c["status"] for c in only][-1] == "error"
    )
    for bad in ({"limit": 0}, {"limit": 501}, {"cursor": "nonsense"}, {"after_seq": -2}):
        with pytest.raises(UsageError):
            svc.call("tools.calls", {**ref, **bad})


def test_edits_need_a_session_or_an_absolute_directory(svc: Service) -> None:
    for bad in ({}, {"cwd": "relative/dir"}, {"limit": 201}, {"diff_lines": -1}):
        with pytest.raises(UsageError):
            svc.call("edits.recent", bad)
    doc = svc.call("edits.recent", {"cwd": "/work/leaky"})
    assert [e["path"] for e in doc["edits"]] == ["/work/leaky/.env"]
    assert GITHUB not in json.dumps(doc)  # masked on the way out
    assert GITHUB in json.dumps(svc.call("edits.recent", {"cwd": "/work/leaky"}, reveal=True))


def test_the_overview_counts_children_and_carries_the_users_state(svc: Service) -> None:
    svc.call("state.change", {"agent": "claude-code", "id": "77734736", "label": "topic=lines"})
    doc = svc.call("sessions.overview", {"agent": "claude-code", "id": "77734736"})
    assert doc["session"]["state"]["labels"] == {"topic": "lines"}
    assert doc["children_total"] == 1 and doc["children"][0]["id"] == "agent-abeadf394adf045da"
    kids = svc.call("sessions.children", {"agent": "claude-code", "id": "77734736", "limit": 1})
    assert (
        kids["total"] == 1
        and kids["next"] is None
        and kids["sessions"][0]["parent"]["id"].startswith("77734736")
    )
    none = svc.call("sessions.children", {"agent": "claude-code", "id": "agent-abeadf394adf045da"})
    assert none["total"] == 0 and none["sessions"] == []
