"""The live exits send no secret either: the SSE follow stream, MCP's tools (in-process, as
stdio and /mcp serve them), and the findings list itself (REST and JSON-RPC)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"
SLACK = "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
PLANTED = (GITHUB, AWS, SLACK)
TOKEN = "t" * 32


def leaks(text: str) -> list[str]:
    return [s for s in PLANTED if s in text]


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    lines = [
        toy_line(t="meta", id="leaky", cwd=str(tmp_path), title=f"deploy with {AWS}"),
        toy_line(t="msg", role="user", text=f"use the token {GITHUB} to push", ts="2026-01-01T10:00:00Z"),
        toy_line(t="tool", id="c1", name="Bash", input={"command": f"export SLACK_TOKEN={SLACK}"}, ts="2026-01-01T10:00:01Z"),
        toy_line(t="result", id="c1", output={"stdout": f"AWS_ACCESS_KEY_ID={AWS}"}, ts="2026-01-01T10:00:02Z"),
    ]
    write_session(tmp_path / "root" / "leaky.jsonl", lines)
    service = Service(Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(tmp_path / "root"))], archive=False))
    service.update_index()
    yield service
    service.close()


async def test_the_sse_follow_stream_is_masked(svc: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(svc, methods=METHODS, security=Security(TOKEN)))
    resp = await client.get(
        "/api/v1/sessions/toy/leaky/follow", params={"after_seq": "-1"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert resp.status == 200
    wanted = len(svc.call("events.list", {"agent": "toy", "id": "leaky"})["events"])
    body = b""
    async with asyncio.timeout(10):
        while body.count(b"event: event") < wanted:
            chunk = await resp.content.readany()
            assert chunk, "the stream ended early"
            body += chunk
    resp.close()
    text = body.decode()
    assert leaks(text) == [] and "«secret:github-pat …q7R8»" in text


async def test_the_findings_list_over_rest_and_json_rpc_is_masked(svc: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(svc, methods=METHODS, security=Security(TOKEN)))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    rest = await client.get("/api/v1/secrets", headers=auth)
    body = await rest.text()
    assert rest.status == 200 and leaks(body) == []
    rules = {s["rule"] for s in json.loads(body)["secrets"]}
    assert {"github-pat", "aws-access-token", "slack-bot-token"} <= rules
    listed = await client.get("/api/v1/sessions", params={"has_secret": "true"}, headers=auth)
    assert [s["id"] for s in json.loads(await listed.text())["sessions"]] == ["leaky"]
    rpc = await client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "secrets.list", "params": {"session": "toy:leaky"}}, headers=auth)
    assert leaks(await rpc.text()) == [] and (await rpc.json())["result"]["secrets"]
    bad = await client.post("/rpc", json={"jsonrpc": "2.0", "id": 2, "method": "secrets.allow", "params": {}}, headers=auth)
    assert (await bad.json())["error"]["code"] == -32602  # the fingerprint is required


def test_every_mcp_tool_answers_masked(svc: Service) -> None:
    from mcp import Client

    from agtaild.mcp.server import build_server

    async def run() -> list[str]:
        out = []
        async with Client(build_server(svc.call, here=str(Path(svc.config.roots[0].path).parent))) as client:
            for name, args in (
                ("search_sessions", {"query": "token"}),
                ("search_sessions", {"query": "export"}),
                ("list_sessions", {}),
                ("sessions_here", {}),
                ("read_session", {"id": "toy:leaky"}),
            ):
                result = await client.call_tool(name, args)
                assert not result.is_error, (name, result)
                out.append("".join(getattr(c, "text", "") for c in result.content))
        return out

    texts = anyio.run(run)
    assert all(leaks(t) == [] for t in texts)
    assert any("«secret:" in t for t in texts)  # the read session shows the masks


def test_sync_push_redact_and_native_export_redact_send_no_secret(svc: Service, tmp_path: Path) -> None:
    """The native exits with --redact (every rule of the planted corpus: tests/test_sync_redact.py)."""
    from agtaild.sync.export import export_sessions
    from agtaild.sync.remote import push

    def tree_leaks(root: Path) -> list[str]:
        blob = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
        return [s for s in PLANTED if s.encode() in blob]

    remote = tmp_path / "remote"
    remote.mkdir()
    rep = push(svc.config, str(remote), "c", redact=True)
    assert not rep["errors"] and rep["files"] >= 1 and rep["redacted"]["files"] == 1
    assert tree_leaks(remote) == [] and b"\xc2\xabsecret:github-pat" in b"".join(p.read_bytes() for p in remote.rglob("*.jsonl"))
    session = svc.call("sessions.get", {"agent": "toy", "id": "leaky"})["session"]
    out = tmp_path / "export"
    rep = export_sessions(svc.config, [session], out, redact=True)
    assert not rep["errors"] and tree_leaks(out) == []
    for line in next(out.rglob("*.jsonl")).read_text().splitlines():
        json.loads(line)
    plain = push(svc.config, str(remote), "plain")  # the default: the native bytes, secrets and all
    assert not plain["errors"] and tree_leaks(remote / "plain") == list(PLANTED)
