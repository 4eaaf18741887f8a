"""REST under /api/v1 on a fake service: successes carry "ok": true, every failure takes the
one error shape with the right status, and bad input is never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from agtaild.api.app import create_app
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "t" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def service() -> FakeService:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["hello world", "second line", "third"])
    svc.add("codex", "def456", ["codex says hi"])
    return svc


@pytest.fixture
async def client(aiohttp_client: Any, service: FakeService) -> Any:
    app = create_app(service, methods=FAKE_METHODS, security=Security(TOKEN))
    return await aiohttp_client(app, headers=AUTH)


def assert_error_shape(body: Any, status: int, code: str | None = None) -> None:
    """The one error shape, exactly: nothing more, nothing less."""
    assert set(body) == {"ok", "error", "status"}
    assert body["ok"] is False
    assert body["status"] == status
    assert set(body["error"]) == {"code", "message"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    if code is not None:
        assert body["error"]["code"] == code


async def test_health_is_ok(client: Any) -> None:
    resp = await client.get("/api/v1/health")
    assert resp.status == 200
    body = await resp.json()
    assert body["ok"] is True and body["status"] == "ok" and body["version"]
    assert "uptime_seconds" in body  # trusted (token given): details


async def test_sessions_list_and_cursor(client: Any) -> None:
    resp = await client.get("/api/v1/sessions", params={"limit": "1"})
    assert resp.status == 200
    body = await resp.json()
    assert body["ok"] is True
    assert [s["id"] for s in body["sessions"]] == ["abc123"]
    assert body["next"]
    page2 = await (await client.get("/api/v1/sessions", params={"limit": "1", "cursor": body["next"]})).json()
    assert [s["id"] for s in page2["sessions"]] == ["def456"]
    assert page2["next"] is None


async def test_filters_are_parsed_into_service_params(client: Any) -> None:
    body = await (await client.get("/api/v1/sessions", params={"agent": "codex", "imported": "false"})).json()
    assert [s["id"] for s in body["sessions"]] == ["def456"]


async def test_one_session_by_prefix_and_its_events(client: Any) -> None:
    body = await (await client.get("/api/v1/sessions/claude-code/abc")).json()
    assert body["ok"] is True and body["session"]["id"] == "abc123"
    events = await (await client.get("/api/v1/sessions/claude-code/abc123/events", params={"limit": "2"})).json()
    assert [e["seq"] for e in events["events"]] == [0, 1]
    rest = await (await client.get("/api/v1/sessions/claude-code/abc123/events", params={"cursor": events["next"]})).json()
    assert [e["seq"] for e in rest["events"]] == [2]
    after = await (await client.get("/api/v1/sessions/claude-code/abc123/events", params={"after_seq": "1"})).json()
    assert [e["seq"] for e in after["events"]] == [2]


async def test_search_and_stats_and_agents(client: Any) -> None:
    hits = await (await client.get("/api/v1/search", params={"q": "hello"})).json()
    assert hits["ok"] is True and hits["hits"][0]["snippet"] == "hello world"
    stats = await (await client.get("/api/v1/stats", params={"by": "day"})).json()
    assert stats["ok"] is True and "totals" in stats
    agents = await (await client.get("/api/v1/agents")).json()
    assert agents["agents"][0]["id"] == "claude-code"


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "names"),
    [
        ("/api/v1/sessions", {"limit": "abc"}, 400, "bad_request", "limit"),
        ("/api/v1/sessions", {"limit": "0"}, 400, "bad_request", "limit"),
        ("/api/v1/sessions", {"limit": "100000"}, 400, "bad_request", "limit"),
        ("/api/v1/sessions", {"since": "yesterday"}, 400, "bad_request", "since"),
        ("/api/v1/sessions", {"since": "2026-02-30"}, 400, "bad_request", "since"),
        ("/api/v1/sessions", {"imported": "maybe"}, 400, "bad_request", "imported"),
        ("/api/v1/sessions", {"bogus": "1"}, 400, "bad_request", "bogus"),
        ("/api/v1/sessions", {"agent": "Not An Agent"}, 400, "bad_request", "agent"),
        ("/api/v1/sessions", {"q": "a\x00b"}, 400, "bad_request", "q"),
        ("/api/v1/search", {}, 400, "bad_request", "q"),
        ("/api/v1/search", {"q": "x", "kind": "nope"}, 400, "bad_request", "kind"),
        ("/api/v1/search", {"q": "boom"}, 400, "bad_request", "q"),
        ("/api/v1/stats", {"by": "week"}, 400, "bad_request", "by"),
        ("/api/v1/sessions/claude-code/abc123/events", {"after_seq": "-5"}, 400, "bad_request", "after_seq"),
        ("/api/v1/sessions/claude-code/nope", {}, 404, "not_found", None),
        ("/api/v1/sessions/claude-code/nope/events", {}, 404, "not_found", None),
        ("/api/v1/no/such/thing", {}, 404, "not_found", None),
        ("/api/v1/sessions/claude-code/abc123/resume", {}, 404, "not_found", "resume.command"),
    ],
)
async def test_bad_input_gets_the_error_shape(
    client: Any, path: str, params: dict[str, str], status: int, code: str, names: str | None
) -> None:
    resp = await client.get(path, params=params)
    body = await resp.json()
    assert resp.status == status, body
    assert_error_shape(body, status, code)
    if names:
        assert names in body["error"]["message"]


async def test_repeated_parameter_is_refused(client: Any) -> None:
    resp = await client.get("/api/v1/sessions?agent=codex&agent=claude-code")
    assert_error_shape(await resp.json(), 400, "bad_request")


async def test_wrong_method_is_405_in_the_shape(client: Any) -> None:
    resp = await client.post("/api/v1/sessions")
    assert resp.status == 405
    assert_error_shape(await resp.json(), 405, "method_not_allowed")
    resp = await client.get("/rpc")
    assert_error_shape(await resp.json(), 405, "method_not_allowed")


async def test_a_bug_in_the_service_is_a_500_in_the_shape(client: Any, service: FakeService) -> None:
    service.fail_with = RuntimeError("disk on fire")
    resp = await client.get("/api/v1/sessions")
    body = await resp.json()
    assert resp.status == 500
    assert_error_shape(body, 500, "internal")
    assert "disk on fire" not in body["error"]["message"]  # internals stay in the log


async def test_responses_carry_protective_headers(client: Any) -> None:
    resp = await client.get("/api/v1/sessions")
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["Content-Type"].startswith("application/json")


async def test_extra_route_modules_sit_behind_the_middlewares(aiohttp_client: Any, monkeypatch: Any, service: FakeService) -> None:
    import sys
    import types

    from agtaild.api import extensions

    mod = types.ModuleType("agtail_test_extra_routes")

    def register_routes(app: web.Application) -> None:
        async def handler(request: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        app.router.add_post("/api/v1/imports/test", handler)

    mod.register_routes = register_routes  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setattr(extensions, "ROUTE_MODULES", [mod.__name__])
    client = await aiohttp_client(create_app(service, methods=FAKE_METHODS, security=Security(TOKEN)))
    no_token = await client.post("/api/v1/imports/test")
    assert_error_shape(await no_token.json(), 401, "unauthorized")
    ok = await client.post("/api/v1/imports/test", headers=AUTH)
    assert (await ok.json()) == {"ok": True}
