"""Live streams on a fake service: `follow` delivers new events of one session, resumes with
Last-Event-ID, resets after a rewrite and ends on removal; `changes` replays what a
reconnecting client missed, or tells it to reset."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from agtaild.api.app import create_app
from agtaild.api.context import CTX
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "e" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class SseReader:
    """Reads `event:`/`data:`/`id:` frames from an aiohttp response."""

    def __init__(self, resp: Any) -> None:
        self.resp = resp

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        frame: dict[str, Any] = {}
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.resp.content.readline()
                if not raw:
                    return {"event": "<eof>"}
                line = raw.decode().rstrip("\n")
                if not line:
                    if "data" in frame:
                        return frame
                    continue
                if line.startswith(":") or line.startswith("retry:"):
                    continue
                name, _, value = line.partition(": ")
                frame[name] = json.loads(value) if name == "data" else value

    async def nothing(self, within: float = 0.3) -> None:
        with pytest.raises(TimeoutError):
            await self.next(timeout=within)


@pytest.fixture
def service() -> FakeService:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["one", "two"])
    svc.add("codex", "def456", ["other"])
    return svc


@pytest.fixture
def app(service: FakeService) -> web.Application:
    return create_app(service, methods=FAKE_METHODS, security=Security(TOKEN))


@pytest.fixture
async def client(aiohttp_client: Any, app: web.Application) -> Any:
    return await aiohttp_client(app, headers=AUTH)


async def publish(app: web.Application, *changes: dict[str, Any]) -> None:
    await app[CTX].hub.publish(changes)


CHANGED = {"agent": "claude-code", "id": "abc123", "path": "/x/abc123.jsonl", "action": "updated"}


async def test_follow_delivers_only_new_events_by_default(client: Any, app: web.Application, service: FakeService) -> None:
    resp = await client.get("/api/v1/sessions/claude-code/abc/follow")
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
    sse = SseReader(resp)
    await sse.nothing()
    service.add("claude-code", "abc123", ["three"])
    await publish(app, CHANGED)
    frame = await sse.next()
    assert frame["event"] == "event" and frame["id"] == "2" and frame["data"]["text"] == "three"
    # Another session's change does not wake us with anything.
    service.add("codex", "def456", ["more"])
    await publish(app, {**CHANGED, "agent": "codex", "id": "def456"})
    await sse.nothing()
    resp.close()


async def test_follow_from_after_seq_and_the_viewers_alias(client: Any) -> None:
    sse = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow", params={"after_seq": "-1"}))
    assert [(await sse.next())["data"]["text"] for _ in range(2)] == ["one", "two"]
    sse2 = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow", params={"after": "0"}))
    assert (await sse2.next())["data"]["text"] == "two"


async def test_follow_resumes_with_last_event_id(client: Any, app: web.Application, service: FakeService) -> None:
    service.add("claude-code", "abc123", ["three", "four"])
    sse = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow", headers={"Last-Event-ID": "1"}))
    frames = [await sse.next(), await sse.next()]
    assert [f["id"] for f in frames] == ["2", "3"]


async def test_follow_resets_when_the_file_is_rewritten(client: Any, app: web.Application, service: FakeService) -> None:
    sse = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow", params={"after_seq": "-1"}))
    await sse.next()
    await sse.next()
    service.truncate("claude-code", "abc123", ["fresh start"])
    await publish(app, CHANGED)
    assert (await sse.next())["event"] == "reset"
    frame = await sse.next()
    assert frame["id"] == "0" and frame["data"]["text"] == "fresh start"


async def test_follow_ends_when_the_session_is_removed(client: Any, app: web.Application) -> None:
    sse = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow"))
    await publish(app, {**CHANGED, "action": "removed"})
    assert (await sse.next())["event"] == "removed"
    assert (await sse.next())["event"] == "<eof>"


async def test_follow_errors_come_before_the_stream(client: Any) -> None:
    missing = await client.get("/api/v1/sessions/claude-code/nope/follow")
    assert missing.status == 404 and (await missing.json())["error"]["code"] == "not_found"
    bad = await client.get("/api/v1/sessions/claude-code/abc123/follow", params={"after_seq": "x"})
    assert bad.status == 400 and "after_seq" in (await bad.json())["error"]["message"]
    bad_id = await client.get("/api/v1/sessions/claude-code/abc123/follow", headers={"Last-Event-ID": "abc"})
    assert bad_id.status == 400


async def test_changes_stream_and_replay(client: Any, app: web.Application) -> None:
    sse = SseReader(await client.get("/api/v1/changes"))
    await sse.nothing(0.1)
    await publish(app, CHANGED, {**CHANGED, "agent": "codex", "id": "def456", "action": "added"})
    first, second = await sse.next(), await sse.next()
    assert first["event"] == "change" and first["data"] == CHANGED
    assert second["data"]["action"] == "added"
    boot = app[CTX].hub.boot
    assert first["id"] == f"{boot}-1" and second["id"] == f"{boot}-2"
    # Reconnect after missing two changes: they are replayed, in order.
    await publish(app, {**CHANGED, "id": "m1"}, {**CHANGED, "id": "m2"})
    again = SseReader(await client.get("/api/v1/changes", headers={"Last-Event-ID": second["id"]}))
    assert [(await again.next())["data"]["id"] for _ in range(2)] == ["m1", "m2"]


async def test_changes_filter_by_agent(client: Any, app: web.Application) -> None:
    sse = SseReader(await client.get("/api/v1/changes", params={"agent": "codex"}))
    await publish(app, CHANGED, {**CHANGED, "agent": "codex", "id": "def456"})
    assert (await sse.next())["data"]["agent"] == "codex"


async def test_changes_from_another_daemon_run_must_reset(client: Any, app: web.Application) -> None:
    sse = SseReader(await client.get("/api/v1/changes", headers={"Last-Event-ID": "deadbeef-12"}))
    frame = await sse.next()
    assert frame["event"] == "reset" and frame["id"] == f"{app[CTX].hub.boot}-0"


async def test_changes_lost_from_the_ring_must_reset(aiohttp_client: Any, service: FakeService) -> None:
    from agtaild.api.hub import ChangeHub

    hub = ChangeHub(ring_size=3)
    app = create_app(service, methods=FAKE_METHODS, security=Security(TOKEN), hub=hub)
    client = await aiohttp_client(app, headers=AUTH)
    await hub.publish([{**CHANGED, "id": f"s{i}"} for i in range(10)])
    sse = SseReader(await client.get("/api/v1/changes", headers={"Last-Event-ID": f"{hub.boot}-2"}))
    assert (await sse.next())["event"] == "reset"


async def test_hub_close_ends_every_stream(client: Any, app: web.Application) -> None:
    follow = SseReader(await client.get("/api/v1/sessions/claude-code/abc123/follow"))
    changes = SseReader(await client.get("/api/v1/changes"))
    await asyncio.sleep(0.05)
    assert app[CTX].hub.subscribers == 2
    await app[CTX].hub.close()
    assert (await follow.next())["event"] == "<eof>"
    assert (await changes.next())["event"] == "<eof>"
    assert app[CTX].hub.subscribers == 0
