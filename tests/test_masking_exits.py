"""A secret in a transcript leaves the query layer masked, at every exit that goes through it:
the CLI in-process, the daemon's REST and JSON-RPC, exports; only an in-process caller that
asks (``reveal=True``) sees it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from agtaild.share.export import export
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"
PLANTED = (GITHUB, AWS)


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    lines = [
        toy_line(t="meta", id="leaky", cwd=str(tmp_path), title=f"deploy with {AWS}"),
        toy_line(t="msg", role="user", text=f"use the token {GITHUB} to push", ts="2026-01-01T10:00:00Z"),
        toy_line(t="tool", id="c1", name="Bash", input={"command": f"export AWS_ACCESS_KEY_ID={AWS}"}, ts="2026-01-01T10:00:01Z"),
        toy_line(t="result", id="c1", output=f"git push https://x:{GITHUB}@github.com/o/r", ts="2026-01-01T10:00:02Z"),
    ]
    write_session(tmp_path / "root" / "leaky.jsonl", lines)
    service = Service(Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(tmp_path / "root"))], archive=False))
    service.update_index()
    yield service
    service.close()


def leaks(doc: Any) -> list[str]:
    text = json.dumps(doc, ensure_ascii=False) if not isinstance(doc, str) else doc
    return [s for s in PLANTED if s in text]


def test_every_text_answer_is_masked(svc: Service) -> None:
    answers = [
        svc.call("sessions.list", {}),
        svc.call("sessions.get", {"agent": "toy", "id": "leaky"}),
        svc.call("events.list", {"agent": "toy", "id": "leaky"}),
        svc.call("search", {"q": "token"}),
        svc.call("search", {"q": "push"}),
    ]
    assert all(leaks(a) == [] for a in answers)
    events = answers[2]["events"]
    assert "«secret:github-pat …q7R8»" in events[0]["text"]
    assert svc.call("sessions.get", {"agent": "toy", "id": "leaky"})["session"]["title"].startswith("deploy with «secret:")


def test_reveal_is_only_for_an_in_process_caller(svc: Service) -> None:
    revealed = svc.call("events.list", {"agent": "toy", "id": "leaky"}, reveal=True)
    assert leaks(revealed) == list(PLANTED)
    from agtaild.errors import UsageError

    with pytest.raises(UsageError):  # no parameter of any method reveals
        svc.call("events.list", {"agent": "toy", "id": "leaky", "reveal": True})


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_exports_are_masked(svc: Service, fmt: str) -> None:
    out = io.StringIO()
    report = export(svc.call, "toy", "leaky", fmt, out)
    assert leaks(out.getvalue()) == [] and report["secrets_masked"] is True


async def test_rest_and_json_rpc_are_masked(svc: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(svc, methods=METHODS, security=Security("t" * 32)))
    auth = {"Authorization": "Bearer " + "t" * 32}
    for path in ("/api/v1/sessions/toy/leaky/events", "/api/v1/sessions", "/api/v1/search?q=token"):
        assert leaks(await (await client.get(path, headers=auth)).text()) == []
    rpc = await client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "events.list", "params": {"agent": "toy", "id": "leaky"}}, headers=auth)
    body = await rpc.text()
    assert "q7R8" in body and leaks(body) == []


def test_a_file_s_history_is_masked_in_every_exit(tmp_path: Path) -> None:
    """files.history (and the MCP file_history tool) carry edits' text: masked like the rest,
    because every method's answer is, not a list of the ones that hold text."""
    project = tmp_path / "proj"
    target = str(project / "deploy.sh")
    sid = "5f0c6c5e-1111-4222-8333-944445555666"
    base = {"sessionId": sid, "cwd": str(project), "version": "2.1.197", "isSidechain": False, "userType": "external"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "write the deploy script"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T10:00:01Z",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write",
                                  "input": {"file_path": target, "content": f"export GH_TOKEN={GITHUB}\n"}}],
                     "usage": {"input_tokens": 10, "output_tokens": 5}}},
        {**base, "type": "user", "uuid": "r1", "parentUuid": "a1", "timestamp": "2026-01-01T10:00:02Z",
         "message": {"role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "ok"}]},
         "toolUseResult": {"type": "create", "filePath": target, "content": f"export GH_TOKEN={GITHUB}\n"}},
    ]
    root = tmp_path / "claude" / "projects" / "-proj"
    root.mkdir(parents=True)
    (root / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    service = Service(Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("claude-code", str(tmp_path / "claude" / "projects"))], archive=False))
    try:
        service.update_index()
        revealed = service.call("files.history", {"path": target}, reveal=True)
        assert leaks(revealed) == [GITHUB]  # the edit is there, with its text
        masked = service.call("files.history", {"path": target})
        assert leaks(masked) == [] and "«secret:github-pat" in json.dumps(masked, ensure_ascii=False)
        from mcp import Client

        from agtaild.mcp.server import build_server

        async def tool() -> str:
            async with Client(build_server(service.call, here=str(project))) as client:
                result = await client.call_tool("file_history", {"path": target})
                assert not result.is_error, result
                return "".join(getattr(c, "text", "") for c in result.content)

        import anyio

        text = anyio.run(tool)
        assert target in text and leaks(text) == []
    finally:
        service.close()
