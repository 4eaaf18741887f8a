"""``reveal=true``: honoured over the unix socket for the daemon's own user, refused over TCP
whatever the token (403), logged (never the secret); `agtail show --reveal` and
`agtail secrets show --reveal` in-process, logged the same way."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from agtaild.api.reveal import entries, revealer_of
from agtaild.cli import main
from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"
TOKEN = "t" * 32


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    lines = [
        toy_line(t="meta", id="leaky", cwd=str(tmp_path), title=f"deploy with {AWS}"),
        toy_line(t="msg", role="user", text=f"use the token {GITHUB} to push", ts="2026-01-01T10:00:00Z"),
    ]
    write_session(tmp_path / "root" / "leaky.jsonl", lines)
    service = Service(
        Config(
            data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(tmp_path / "root"))], archive=False
        )
    )
    service.update_index()
    yield service
    service.close()


def _app(svc: Service) -> web.Application:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    return create_app(svc, methods=METHODS, security=Security(TOKEN))


def test_the_socket_owner_is_known_by_the_kernel() -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert revealer_of(a) == f"uid {os.getuid()} pid {os.getpid()} (unix socket)"
    finally:
        a.close()
        b.close()
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        assert revealer_of(tcp) is None and revealer_of(None) is None
    finally:
        tcp.close()


async def test_tcp_with_the_token_is_refused_403(svc: Service, aiohttp_client: Any) -> None:
    client = await aiohttp_client(_app(svc))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    resp = await client.get("/api/v1/sessions/toy/leaky/events", params={"reveal": "true"}, headers=auth)
    body = await resp.text()
    assert resp.status == 403, body
    doc = json.loads(body)
    assert (
        doc["error"]["code"] == "forbidden"
        and "unix socket" in doc["error"]["message"]
        and GITHUB not in body
    )
    resp = await client.get("/api/v1/sessions/toy/leaky", params={"reveal": "1"}, headers=auth)
    assert resp.status == 403 and AWS not in await resp.text()
    rpc = await client.post(
        "/rpc",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "events.list",
            "params": {"agent": "toy", "id": "leaky", "reveal": True},
        },
        headers=auth,
    )
    err = (await rpc.json())["error"]
    assert err["data"]["status"] == 403 and "unix socket" in err["message"]
    # reveal=false is the default, masked.
    resp = await client.get("/api/v1/sessions/toy/leaky/events", params={"reveal": "false"}, headers=auth)
    assert resp.status == 200 and GITHUB not in await resp.text()
    assert entries(svc.config.data_dir) == []


async def test_the_unix_socket_owner_may_reveal_and_it_is_logged(svc: Service, tmp_path: Path) -> None:
    runner = web.AppRunner(_app(svc))
    await runner.setup()
    path = str(tmp_path / "s.sock")
    site = web.UnixSite(runner, path)
    await site.start()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=path)) as http:
            url = "http://localhost/api/v1/sessions/toy/leaky/events"
            async with http.get(url) as resp:
                assert resp.status == 200 and GITHUB not in await resp.text()
            async with http.get(url, params={"reveal": "true"}) as resp:
                body = await resp.text()
                assert resp.status == 200 and GITHUB in body
            # The next caller without reveal gets the masked answer (a revealed one is never kept).
            async with http.get(url) as resp:
                assert GITHUB not in await resp.text()
            rpc = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "sessions.get",
                "params": {"agent": "toy", "id": "leaky", "reveal": True},
            }
            async with http.post("http://localhost/rpc", json=rpc) as resp:
                assert AWS in json.dumps((await resp.json())["result"])
    finally:
        await runner.cleanup()
    log = entries(svc.config.data_dir)
    assert [(e["method"], e["session"]) for e in log] == [
        ("events.list", "toy:leaky"),
        ("sessions.get", "toy:leaky"),
    ]
    assert all(e["who"].startswith(f"uid {os.getuid()} ") and e["at"] for e in log)
    raw = (Path(svc.config.data_dir) / "reveal.log").read_text()
    assert GITHUB not in raw and AWS not in raw
    assert os.stat(Path(svc.config.data_dir) / "reveal.log").st_mode & 0o777 == 0o600


def claude_line(sid: str, n: int, text: str) -> str:
    return json.dumps({"type": "user", "sessionId": sid, "uuid": f"{sid}-{n}", "timestamp": f"2026-01-0{n + 1}T10:00:00Z",
                       "cwd": "/w", "message": {"role": "user", "content": text}})  # fmt: skip


def test_cli_show_and_secrets_show_reveal_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "projects" / "-w"
    d.mkdir(parents=True)
    (d / "leaky.jsonl").write_text(claude_line("leaky", 0, f"deploy with the token {GITHUB} please") + "\n")
    base = [
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"claude-code={tmp_path / 'projects'}",
        "--no-daemon",
    ]

    def run(*args: str) -> tuple[int, str]:
        code = main([*base, *args])
        out, _err = capsys.readouterr()
        return code, out

    code, out = run("show", "claude-code:leaky")
    assert code == 0 and GITHUB not in out and "«secret:github-pat …q7R8»" in out
    assert entries(str(tmp_path / "data")) == []
    code, out = run("show", "claude-code:leaky", "--reveal")
    assert code == 0 and GITHUB in out
    code, out = run("secrets", "show", "claude-code:leaky")
    assert code == 0 and GITHUB not in out and "«secret:github-pat …q7R8»" in out
    code, out = run("--json", "secrets", "show", "claude-code:leaky", "--reveal")
    doc = json.loads(out)
    places = {p["field"]: p["secret"] for s in doc["secrets"] for p in s["places"]}
    assert code == 0
    # the event's text and the session's own fields (its title and first prompt) hold it
    assert set(places.values()) == {GITHUB} and "/text" in places and "/session/title" in places, places
    log = entries(str(tmp_path / "data"))
    assert {e["method"] for e in log} == {"sessions.get", "events.list"} and all(
        e["session"] == "claude-code:leaky" for e in log
    )
    assert all("(in-process CLI)" in e["who"] for e in log) and GITHUB not in json.dumps(log)


def test_a_real_daemon_reveals_over_its_socket_and_refuses_over_tcp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end: agtaild as a process, its unix socket (the CLI's `show --reveal` goes there)
    and its TCP port with the right token."""
    from agtail_client import ApiError
    from tests.daemon_proc import DaemonProc

    root = tmp_path / "projects"
    (root / "-w").mkdir(parents=True)
    (root / "-w" / "leaky.jsonl").write_text(
        claude_line("leaky", 0, f"deploy with the token {GITHUB} please") + "\n"
    )
    d = DaemonProc(tmp_path, {"claude-code": root})
    try:
        d.start()
        ref = {"agent": "claude-code", "id": "leaky"}
        unix, tcp = d.unix(), d.tcp()
        try:
            assert GITHUB not in json.dumps(unix.call("events.list", ref))
            assert GITHUB in json.dumps(unix.call("events.list", {**ref, "reveal": True}))
            with pytest.raises(ApiError) as refused:
                tcp.call("events.list", {**ref, "reveal": True})
            assert "unix socket" in refused.value.message
        finally:
            unix.close()
            tcp.close()
        # The CLI finds the daemon's socket by itself.
        code = main(
            [
                "--data-dir",
                str(d.data_dir),
                "--only-roots",
                "--root",
                f"claude-code={root}",
                "show",
                "claude-code:leaky",
                "--reveal",
            ]
        )
        out, _ = capsys.readouterr()
        assert code == 0 and GITHUB in out
        log = entries(str(d.data_dir))
        assert [e["method"] for e in log] == ["events.list", "sessions.get", "events.list"]
        assert all(e["who"].endswith("(unix socket)") and e["session"] == "claude-code:leaky" for e in log)
        assert "reveal: uid" in d.log() and GITHUB not in d.log()
    finally:
        d.cleanup()
