"""The OpenAPI document: the committed copy is what the code generates, it documents every
route the app serves (and nothing it does not), it is served, and it is a valid 3.1 document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.app import create_app
from agtaild.api.openapi import build_openapi
from agtaild.api.params import METHOD_TABLE
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

DOC = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
TOKEN = "o" * 43
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def test_the_committed_document_is_current() -> None:
    committed = json.loads(DOC.read_text())
    assert committed == build_openapi(), "docs/openapi.json is stale: python -m agtaild.api.openapi > docs/openapi.json"


def served_routes() -> set[tuple[str, str]]:
    app = create_app(FakeService(), methods=FAKE_METHODS, security=Security(TOKEN))
    routes = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter")
        if route.method in ("HEAD", "*") or path is None or path.startswith("/web/"):
            continue  # HEAD mirrors GET; /web/* are the viewer's static files (documented at "/")
        routes.add((route.method.lower(), path))
    return routes


def test_every_route_is_documented_and_every_documented_route_exists() -> None:
    doc = build_openapi()
    documented = {(m, p) for p, item in doc["paths"].items() for m in item if m in HTTP_METHODS}
    served = served_routes()
    assert served - documented == set(), "routes missing from the OpenAPI document"
    assert documented - served == set(), "documented routes the app does not serve"


def test_parameters_match_the_method_table() -> None:
    doc = build_openapi()
    for path, item in doc["paths"].items():
        op = item.get("get", {})
        desc = op.get("description", "")
        if desc.startswith("JSON-RPC method `"):
            method = desc.split("`")[1]
            names = {p["name"] for p in op["parameters"] if p["in"] != "header"}
            assert names == {p.name for p in METHOD_TABLE[method].params}, path


def test_every_error_response_uses_the_error_shape() -> None:
    doc = build_openapi()
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            for status, resp in op["responses"].items():
                if status.startswith(("4", "5")) and "content" in resp:
                    assert resp["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (path, status)


async def test_the_document_is_served(aiohttp_client: Any) -> None:
    client = await aiohttp_client(create_app(FakeService(), methods=FAKE_METHODS, security=Security(TOKEN)))
    resp = await client.get("/api/v1/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status == 200 and (await resp.json()) == json.loads(DOC.read_text())


def test_it_is_a_valid_openapi_31_document() -> None:
    schemathesis = pytest.importorskip("schemathesis")
    schema = schemathesis.openapi.from_dict(build_openapi())
    labels = [op.ok().label for op in schema.get_all_operations()]
    assert "GET /api/v1/sessions" in labels and "POST /rpc" in labels
    assert build_openapi()["openapi"].startswith("3.1")
