"""MCP's writing tools: an agent titles and labels its own session, never another, and never
over the user's (a user's change wins over an agent's, an agent's over a rule's)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agtaild.config import Config, RootSpec
from agtaild.mcp import handlers, own
from agtaild.query.service import Service
from agtaild.userstate.store import Change

REPO = Path(__file__).resolve().parent.parent
CLAUDE = REPO / "tests" / "corpus" / "real" / "claude-2.1.197" / "projects"
HERE = "/tmp/rt/claude/home/src/demo-app"  # where the corpus's demo-app sessions ran
CD61 = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
C174 = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"
HOOKED = "d257ca0a-dc0a-4e79-b042-64c0b55eefcd"  # ran in .../hooked-app


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    s = Service(Config(data_dir=str(tmp_path / "d"), roots=[RootSpec("claude-code", str(CLAUDE))], archive=False))
    s.update_index()
    try:
        yield s
    finally:
        s.close()


def tool(svc: Service, name: str, args: dict[str, Any], here: str | None = HERE, env: dict[str, str] | None = None,
         monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[str, bool]:  # fmt: skip
    if monkeypatch is not None:
        monkeypatch.setattr(os, "environ", env or {})
    return handlers.run_tool(svc.call, name, args, here)


def state(svc: Service, sid: str) -> dict[str, Any]:
    return svc.call("sessions.get", {"agent": "claude-code", "id": sid})["session"].get("state") or {}


def test_the_agent_titles_and_labels_the_session_its_environment_names(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": CD61}
    text, err = tool(svc, "set_title", {"title": "Greeting script"}, env=env, monkeypatch=monkeypatch)
    assert not err, text
    assert text.startswith(f"claude-code:{CD61} (found by the environment (CLAUDE_CODE_SESSION_ID)): title done")
    text, err = tool(svc, "add_label", {"key": "topic", "value": "greeting"}, env=env, monkeypatch=monkeypatch)
    assert not err and "labels: topic=greeting" in text
    assert state(svc, CD61)["title"] == "Greeting script" and state(svc, CD61)["labels"] == {"topic": "greeting"}
    assert {c["who"] for c in svc.state.history(("", "claude-code", CD61))} == {"agent"}
    text, err = tool(svc, "remove_label", {"key": "topic"}, env=env, monkeypatch=monkeypatch)
    assert not err and state(svc, CD61)["labels"] == {}
    # AGTAIL_SESSION (AGENT:ID) comes first
    text, err = tool(svc, "add_label", {"key": "wip"}, env={"AGTAIL_SESSION": f"claude-code:{C174}", **env}, monkeypatch=monkeypatch)
    assert not err and text.startswith(f"claude-code:{C174} (found by the environment (AGTAIL_SESSION))")


def test_another_session_is_refused(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": CD61}
    text, err = tool(svc, "set_title", {"title": "x", "session": f"claude-code:{C174}"}, env=env, monkeypatch=monkeypatch)
    assert err and "is not this agent's session: CLAUDE_CODE_SESSION_ID names claude-code:" + CD61 in text
    # no environment: a session of another directory, or one not running, is not the caller's
    monkeypatch.setattr(own, "LIVE_SECONDS", 10**10)
    text, err = tool(svc, "add_label", {"key": "k", "session": f"claude-code:{HOOKED}"}, env={}, monkeypatch=monkeypatch)
    assert err and "not in this server's directory" in text
    monkeypatch.setattr(own, "LIVE_SECONDS", 60)
    text, err = tool(svc, "add_label", {"key": "k", "session": f"claude-code:{C174}"}, env={}, monkeypatch=monkeypatch)
    assert err and "has not been active in the last 1 minutes" in text
    text, err = tool(svc, "add_label", {"key": "k"}, here=None, env={}, monkeypatch=monkeypatch)
    assert err and "argument 'session'" in text
    text, err = tool(svc, "add_label", {"key": "bad key"}, env=env, monkeypatch=monkeypatch)
    assert err and "label key" in text
    for sid in (CD61, C174, HOOKED):
        assert state(svc, sid) == {}
    # a live session in the server's directory, named by argument, is accepted
    monkeypatch.setattr(own, "LIVE_SECONDS", 10**10)
    text, err = tool(svc, "add_label", {"key": "k", "session": f"claude-code:{C174}"}, env={}, monkeypatch=monkeypatch)
    assert not err and "(found by the argument)" in text
    # neither: the newest session in the directory
    newest = svc.call("sessions.list", {"cwd": HERE, "limit": 1})["sessions"][0]["id"]
    text, err = tool(svc, "add_label", {"key": "n"}, env={}, monkeypatch=monkeypatch)
    assert not err and text.startswith(f"claude-code:{newest} (found by the newest session in {HERE})")


def test_a_users_change_wins_over_an_agents_and_an_agents_over_a_rules(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": CD61}
    ref = ("", "claude-code", CD61)
    svc.state.apply([Change(ref, "title", "Mine", who="user"), Change(ref, "label", "acme", key="client", who="user"),
                     Change(ref, "label", "rule-set", key="area", who="rule")])  # fmt: skip
    text, err = tool(svc, "set_title", {"title": "The agent's"}, env=env, monkeypatch=monkeypatch)
    assert not err and "title left as it is: the user set it" in text
    text, err = tool(svc, "add_label", {"key": "client", "value": "other"}, env=env, monkeypatch=monkeypatch)
    assert not err and "left as it is" in text
    text, err = tool(svc, "remove_label", {"key": "client"}, env=env, monkeypatch=monkeypatch)
    assert not err and "left as it is" in text
    text, err = tool(svc, "add_label", {"key": "area", "value": "by-agent"}, env=env, monkeypatch=monkeypatch)
    assert not err and "label area done" in text
    assert state(svc, CD61) == {"labels": {"client": "acme", "area": "by-agent"}, "starred": False, "hidden": False, "title": "Mine"}
    # and a rule does not take back what the agent set
    assert svc.state.apply([Change(ref, "label", "again", key="area", who="rule")])[0][1] is False
    # the user's change goes over the agent's
    svc.call("state.change", {"agent": "claude-code", "id": CD61, "label": "area=user"})
    assert state(svc, CD61)["labels"]["area"] == "user"


def test_state_change_is_refused_whole_on_bad_input(svc: Service) -> None:
    from agtaild.errors import NotFound, UsageError

    # each with a good change beside the bad one: nothing is half applied
    for params in ({"label": "k=a\x1bb"}, {"label": "k=" + "v" * 10_000}, {"title": " "}, {"who": "rule"},
                   {"title": "a", "clear_title": True}, {"unlabel": "bad key"}):  # fmt: skip
        with pytest.raises(UsageError):
            svc.call("state.change", {"agent": "claude-code", "id": CD61, "star": True, **params})
    with pytest.raises(UsageError, match="nothing to change"):
        svc.call("state.change", {"agent": "claude-code", "id": CD61})
    with pytest.raises(NotFound):
        svc.call("state.change", {"agent": "claude-code", "id": "ffffffff", "star": True})
    assert state(svc, CD61) == {}
    doc = svc.call("state.change", {"id": "claude-code:cd61", "star": True, "label": "a=b"})
    assert [c["accepted"] for c in doc["changes"]] == [True, True] and doc["session"]["state"]["starred"]


def test_the_sdk_client_labels_its_own_session_over_stdio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d"
    args = ["-c", "import sys; from agtaild.cli import main; sys.exit(main())", "mcp", "--data-dir", str(data),
            "--only-roots", "--root", f"claude-code={CLAUDE}"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("AGTAIL_SESSION", "CLAUDE_CODE_SESSION_ID")}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path), CLAUDE_CODE_SESSION_ID=CD61)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))

    async def run() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["add_label"].annotations.read_only_hint is False  # type: ignore[union-attr]
            assert listed["search_sessions"].annotations.read_only_hint is True  # type: ignore[union-attr]
            result = await client.call_tool("add_label", {"key": "found-by", "value": "mcp"})
            assert not result.is_error, result.content
            result = await client.call_tool("set_title", {"title": "Named over MCP", "session": f"claude-code:{C174}"})
            assert result.is_error and "is not this agent's session" in result.content[0].text  # type: ignore[union-attr]

    anyio.run(run)
    from agtaild.cli import main

    capsys.readouterr()
    code = main(["--no-daemon", "--data-dir", str(data), "--only-roots", "--root", f"claude-code={CLAUDE}",
                 "list", "--label", "found-by=mcp", "--json"])  # fmt: skip
    assert code == 0
    assert [x["id"] for x in json.loads(capsys.readouterr().out)["sessions"]] == [CD61]


async def test_rest_and_json_rpc_write_the_users_state(svc: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(svc, methods=METHODS, security=Security("t" * 32)))
    auth = {"Authorization": "Bearer " + "t" * 32}
    url = f"/api/v1/sessions/claude-code/{CD61[:8]}/state"
    resp = await client.post(url, json={"label": "client=acme", "star": True}, headers=auth)
    doc = await resp.json()
    assert resp.status == 200 and doc["ok"] and doc["session"]["state"]["labels"] == {"client": "acme"}
    assert [c["who"] for c in doc["changes"]] == ["user", "user"]
    listed = await (await client.get("/api/v1/sessions?starred=true", headers=auth)).json()
    assert [s["id"] for s in listed["sessions"]] == [CD61]
    for body, status in (({"label": "bad key"}, 400), ({"id": "x", "star": True}, 400), ([1], 400), ({"colour": 1}, 400)):
        assert (await client.post(url, json=body, headers=auth)).status == status, body
    assert (await client.post("/api/v1/sessions/claude-code/ffffffff/state", json={"star": True}, headers=auth)).status == 404
    assert (await client.post(url, json={"hide": True})).status == 401
    foreign = {**auth, "Origin": "https://evil.example"}
    assert (await client.post(url, json={"hide": True}, headers=foreign)).status == 403
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "state.change",
           "params": {"agent": "claude-code", "id": CD61, "who": "agent", "title": "By an agent"}}  # fmt: skip
    answer = await (await client.post("/rpc", json=rpc, headers=auth)).json()
    assert answer["result"]["session"]["title"] == "By an agent" and answer["result"]["changes"][0]["who"] == "agent"
    assert state(svc, CD61)["hidden"] is False


def test_a_session_newer_than_the_index_is_found_after_one_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's own session is often a few moments old: not indexed yet, it is looked for
    again after one index update; a session that does not exist at all is still an error."""
    import shutil

    root = tmp_path / "projects"
    shutil.copytree(CLAUDE, root)
    s = Service(Config(data_dir=str(tmp_path / "d"), roots=[RootSpec("claude-code", str(root))], archive=False))
    try:
        s.update_index()
        sid = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
        line = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid, "cwd": HERE, "version": "2.1.197",
                "timestamp": "2026-11-30T12:00:00.000Z", "message": {"role": "user", "content": "a new session"}}  # fmt: skip
        (root / "-tmp-rt-claude-home-src-demo-app" / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
        text, err = tool(s, "add_label", {"key": "fresh"}, env={"CLAUDE_CODE_SESSION_ID": sid}, monkeypatch=monkeypatch)
        assert not err and text.startswith(f"claude-code:{sid} (found by the environment"), text
        text, err = tool(s, "add_label", {"key": "x"}, env={"CLAUDE_CODE_SESSION_ID": "nonexistent-id"}, monkeypatch=monkeypatch)
        assert err and "no claude-code session 'nonexistent-id'" in text
    finally:
        s.close()
