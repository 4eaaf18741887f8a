"""GET /api/v1/usage/live and its SSE stream, over a real index."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.app import create_app
from agtaild.api.hub import ChangeHub
from agtaild.api.security import Security
from agtaild.query.methods import METHODS
from agtaild.query.service import Service
from tests.live_helpers import NOW, claude_session, live_config

TOKEN = "t" * 43
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a made-up token of the GitHub PAT shape
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    config, claude, _ = live_config(tmp_path)
    claude_session(claude, "sk-live-aaaa", "/w/app", [NOW - 60], prompt=f"deploy with {GITHUB}")
    service = Service(config)
    service.update_index()
    yield service
    service.close()


async def _client(aiohttp_client: Any, svc: Service, hub: ChangeHub) -> Any:
    app = create_app(svc, methods=tuple(METHODS), security=Security(TOKEN), hub=hub)
    return await aiohttp_client(app, headers=AUTH)


async def test_rest_answers_and_checks_parameters(aiohttp_client: Any, svc: Service) -> None:
    client = await _client(aiohttp_client, svc, ChangeHub())
    resp = await client.get("/api/v1/usage/live", params={"active": "1440", "session": "claude-code:sk-live"})
    body = await resp.json()
    assert resp.status == 200 and body["ok"] is True
    assert set(body) >= {"now", "sessions", "windows", "today", "session"}
    assert body["session"]["usage"]["total_tokens"] == 1100
    bad = await client.get("/api/v1/usage/live", params={"active": "0"})
    assert bad.status == 400 and "active" in (await bad.json())["error"]["message"]


async def test_answers_are_masked_like_every_text_answer(aiohttp_client: Any, svc: Service, tmp_path: Path) -> None:
    client = await _client(aiohttp_client, svc, ChangeHub())
    body = await (await client.get("/api/v1/usage/live", params={"session": "sk-live"})).text()
    assert GITHUB not in body and "«secret:github-pat …q7R8»" in body  # the title (the prompt) holds it
    assert "sk-live-aaaa" in body


async def _next_event(resp: Any) -> tuple[str, dict[str, Any]]:
    event, data = "", ""
    while True:
        line = (await asyncio.wait_for(resp.content.readline(), 10)).decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and event:
            return event, json.loads(data)


async def test_stream_sends_an_answer_now_and_on_every_change(aiohttp_client: Any, svc: Service) -> None:
    hub = ChangeHub()
    client = await _client(aiohttp_client, svc, hub)
    resp = await client.get("/api/v1/usage/live/stream", params={"interval": "300", "active": "1440"})
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
    event, doc = await _next_event(resp)
    assert event == "usage" and "windows" in doc
    await hub.publish([{"action": "updated", "agent": "claude-code", "id": "sk-live-aaaa"}])
    event, again = await _next_event(resp)  # woken by the change, long before the interval
    assert event == "usage" and again["now_epoch"] >= doc["now_epoch"]
    resp.close()


async def test_stream_refuses_bad_parameters(aiohttp_client: Any, svc: Service) -> None:
    client = await _client(aiohttp_client, svc, ChangeHub())
    resp = await client.get("/api/v1/usage/live/stream", params={"interval": "0"})
    assert resp.status == 400
    resp = await client.get("/api/v1/usage/live/stream", params={"session": "x"})
    assert resp.status == 400  # one session is the REST answer's, not the stream's
