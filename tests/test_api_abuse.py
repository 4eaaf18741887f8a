"""The API under hostile input (issue #9, items 14, 18, 19), in-process: deep JSON-RPC bodies,
arbitrary bodies, malformed requests and an announced body far over the limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.api.app import create_app
from agtaild.api.rpc import MAX_DEPTH, depth_over
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "r" * 43


@pytest.fixture
async def client(aiohttp_client: Any) -> Any:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["hello world"])
    app = create_app(svc, methods=FAKE_METHODS, security=Security(TOKEN))
    return await aiohttp_client(app, headers={"Authorization": f"Bearer {TOKEN}"})


async def _rpc(client: Any, body: bytes) -> tuple[int, Any]:
    resp = await client.post("/rpc", data=body, headers={"Content-Type": "application/json"})
    text = await resp.text()
    return resp.status, (json.loads(text) if text else None)


@pytest.mark.parametrize(
    ("body", "code"),
    [(b"[" * 100_000, -32700), (b"[" * 100_000 + b"]" * 100_000, -32700), (b"{\"a\":" * 50_000 + b"1" + b"}" * 50_000, -32700),
     (b"[" * (MAX_DEPTH + 5) + b"]" * (MAX_DEPTH + 5), -32600),
     (json.dumps({"jsonrpc": "2.0", "method": "stats", "params": {"by": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}, "id": 1}).encode(), -32600)],
)
async def test_deeply_nested_json_rpc_is_a_json_rpc_error(client: Any, body: bytes, code: int) -> None:
    status, doc = await _rpc(client, body)
    assert status == 200
    assert doc["error"]["code"] == code and doc["id"] is None


def test_depth_check_is_iterative_and_exact() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    assert depth_over(deep, 32)
    assert not depth_over([[[1]]], 3) and depth_over([[[[1]]]], 3)
    assert not depth_over({"a": [{"b": 1}]}, 3)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
_request = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": st.sampled_from([*sorted(FAKE_METHODS), "nope", 3]),
     "params": _json, "id": _json},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(_json.map(json.dumps), _request.map(json.dumps), st.lists(_request, max_size=3).map(json.dumps),
                      st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))  # fmt: skip
async def test_arbitrary_json_rpc_bodies_never_get_a_5xx(client: Any, body: str) -> None:
    resp = await client.post("/rpc", data=body.encode("utf-8", "surrogatepass"), headers={"Content-Type": "application/json"})
    assert resp.status < 500, await resp.text()
