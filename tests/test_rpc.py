"""JSON-RPC 2.0 at /rpc: the specification's answers, including its own examples of malformed
batches, plus agtail's application errors and validation paths."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agtaild.api.app import create_app
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "r" * 43


@pytest.fixture
def service() -> FakeService:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["hello world", "second"])
    return svc


@pytest.fixture
async def client(aiohttp_client: Any, service: FakeService) -> Any:
    app = create_app(service, methods=FAKE_METHODS, security=Security(TOKEN))
    return await aiohttp_client(app, headers={"Authorization": f"Bearer {TOKEN}"})


async def post(client: Any, payload: Any) -> tuple[int, Any]:
    data = payload if isinstance(payload, bytes | str) else json.dumps(payload)
    resp = await client.post("/rpc", data=data, headers={"Content-Type": "application/json"})
    text = await resp.text()
    return resp.status, (json.loads(text) if text else None)


def req(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    if id_ is not None:
        out["id"] = id_
    return out


async def test_a_call_returns_the_same_document_as_rest(client: Any) -> None:
    status, body = await post(client, req("sessions.get", {"agent": "claude-code", "id": "abc"}, "x"))
    assert status == 200
    assert body["jsonrpc"] == "2.0" and body["id"] == "x"
    rest = await (await client.get("/api/v1/sessions/claude-code/abc")).json()
    assert body["result"] == {k: v for k, v in rest.items() if k != "ok"}


async def test_notification_runs_and_gets_no_answer(client: Any, service: FakeService) -> None:
    calls = []
    original = service.call

    def spy(method: str, params: dict[str, Any]) -> dict[str, Any]:
        calls.append(method)
        return original(method, params)

    service.call = spy  # type: ignore[method-assign]
    status, body = await post(client, req("agents.list", {}, None))
    assert status == 204 and body is None
    assert calls == ["agents.list"]


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', -32700),
        (b"", -32700),
        ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, -32600),
        ({"method": "agents.list", "id": 1}, -32600),
        ({"jsonrpc": "1.0", "method": "agents.list", "id": 1}, -32600),
        ({"jsonrpc": "2.0", "method": "agents.list", "params": 5, "id": 1}, -32600),
        ({"jsonrpc": "2.0", "method": "agents.list", "id": {"no": 1}}, -32600),
        ([], -32600),
        ("no", -32600),
        ({"jsonrpc": "2.0", "method": "foobar", "id": "1"}, -32601),
        ({"jsonrpc": "2.0", "method": "index.update", "id": "1"}, -32601),  # not offered by this service
    ],
)
async def test_spec_errors(client: Any, payload: Any, code: int) -> None:
    status, body = await post(client, payload if not isinstance(payload, str) else json.dumps(payload))
    assert status == 200
    assert isinstance(body, dict) and body["jsonrpc"] == "2.0"
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str)
    if code in (-32700,) or (code == -32600 and not isinstance(payload, dict)):
        assert body["id"] is None


async def test_spec_example_invalid_batch_of_numbers(client: Any) -> None:
    status, body = await post(client, [1, 2, 3])
    assert status == 200
    assert [(a["error"]["code"], a["id"]) for a in body] == [(-32600, None)] * 3


async def test_spec_example_invalid_json_inside_a_batch(client: Any) -> None:
    raw = b'[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"]'
    status, body = await post(client, raw)
    assert status == 200 and isinstance(body, dict)
    assert body["error"]["code"] == -32700 and body["id"] is None


async def test_mixed_batch_answers_in_order_without_notifications(client: Any) -> None:
    batch = [
        req("agents.list", {}, 1),
        req("agents.list", {}, None),  # notification
        {"foo": "boo"},
        req("nope.method", {}, "5"),
        req("sessions.get", {"agent": "claude-code", "id": "zzz"}, 9),
        req("events.list", {"agent": "claude-code", "id": "abc123", "limit": 1}, 10),
    ]
    status, body = await post(client, batch)
    assert status == 200
    assert [a["id"] for a in body] == [1, None, "5", 9, 10]
    assert "result" in body[0]
    assert body[1]["error"]["code"] == -32600
    assert body[2]["error"]["code"] == -32601
    assert body[3]["error"]["code"] == -32004 and body[3]["error"]["data"]["code"] == "not_found"
    assert [e["seq"] for e in body[4]["result"]["events"]] == [0]


async def test_a_batch_of_only_notifications_gets_nothing(client: Any) -> None:
    status, body = await post(client, [req("agents.list", {}, None), req("stats", {}, None)])
    assert status == 204 and body is None


async def test_batch_size_limit(client: Any) -> None:
    status, body = await post(client, [req("agents.list", {}, i) for i in range(101)])
    assert status == 200 and body["error"]["code"] == -32600 and "limit" in body["error"]["message"]


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"agent": "claude-code", "id": "abc123", "limit": "two"}, ["params", "limit"]),
        ({"agent": "claude-code", "id": "abc123", "limit": [2]}, ["params", "limit"]),
        ({"agent": "claude-code", "id": "abc123", "limit": 0}, ["params", "limit"]),
        ({"agent": "claude-code", "id": "abc123", "limit": True}, ["params", "limit"]),
        ({"agent": "claude-code", "id": "abc123", "after_seq": 1.5}, ["params", "after_seq"]),
        ({"agent": "claude-code"}, ["params", "id"]),
        ({"agent": "claude-code", "id": "abc123", "bogus": 1}, ["params", "bogus"]),
        (["claude-code", "abc123"], ["params", "params"]),
    ],
)
async def test_invalid_params_name_the_validation_path(client: Any, params: Any, path: list[str]) -> None:
    status, body = await post(client, req("events.list", params, 7))
    assert status == 200 and body["id"] == 7
    assert body["error"]["code"] == -32602
    assert body["error"]["data"]["path"] == path
    assert body["error"]["data"]["code"] == "bad_request"


async def test_service_usage_error_is_invalid_params(client: Any) -> None:
    _, body = await post(client, req("search", {"q": "boom"}, 3))
    assert body["error"]["code"] == -32602 and body["error"]["data"]["path"] == ["params", "q"]


async def test_numbers_and_flags_may_be_strings_as_the_service_allows(client: Any) -> None:
    _, body = await post(client, req("events.list", {"agent": "claude-code", "id": "abc123", "limit": "1"}, 3))
    assert [e["seq"] for e in body["result"]["events"]] == [0]
    _, body = await post(client, req("sessions.list", {"imported": 0, "_cachebuster": 1}, 4))
    assert "result" in body


async def test_null_params_mean_not_given(client: Any) -> None:
    _, body = await post(client, req("sessions.list", {"agent": None, "limit": None}, 3))
    assert len(body["result"]["sessions"]) == 1


async def test_internal_error_is_32603(client: Any, service: FakeService) -> None:
    service.fail_with = RuntimeError("boom inside")
    _, body = await post(client, req("agents.list", {}, 4))
    assert body["error"]["code"] == -32603 and "boom inside" not in body["error"]["message"]


async def test_oversized_body_is_413_in_the_error_shape(client: Any) -> None:
    status, body = await post(client, b"[" + b" " * (2 << 20) + b"]")
    assert status == 413
    assert body["ok"] is False and body["error"]["code"] == "too_large" and body["status"] == 413


async def test_index_update_goes_through_the_writer(aiohttp_client: Any, service: FakeService) -> None:
    asked = []

    async def update(full: bool) -> dict[str, Any]:
        asked.append(full)
        return {"sessions": 1, "events": 2, "files": 1, "bad_lines": 0, "seconds": 0.1, "changed": []}

    app = create_app(service, methods=(*FAKE_METHODS, "index.update"), security=Security(TOKEN), update=update)
    client = await aiohttp_client(app, headers={"Authorization": f"Bearer {TOKEN}"})
    _, body = await post(client, req("index.update", {"full": True}, 1))
    assert body["result"]["events"] == 2 and asked == [True]
    assert not service.updates  # never on a reader thread
