"""``POST /api/v1/secrets/allow`` and ``/unallow``: the viewer's allowlist action.

The REST face of ``secrets.allow`` / ``secrets.unallow`` (agtaild.query.secrets): a JSON body
``{"fingerprint": "…", "reason": "…"}``. It writes the user's state, so it is a POST: behind the
token like every endpoint, and a cross-site page cannot send it (the cookie is SameSite=Strict
and a foreign Origin is refused: agtaild.api.security). An allowlisted secret leaves the lists
and the badge; it is still masked everywhere. Mounted through api/extensions.py.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from agtaild.api.context import CTX, json_object_body, json_response
from agtaild.api.params import METHOD_TABLE
from agtaild.api.rest import API

PATHS = {f"{API}/secrets/allow": "secrets.allow", f"{API}/secrets/unallow": "secrets.unallow"}


def _handler(method: str) -> Any:
    async def handler(request: web.Request) -> web.Response:
        body = await json_object_body(request, 'a JSON object: {"fingerprint": "…"}')
        params = METHOD_TABLE[method].parse_json(body)
        return json_response(await request.app[CTX].call_encoded(method, params))

    return handler


def register_routes(app: web.Application) -> None:
    for path, method in PATHS.items():
        app.router.add_post(path, _handler(method))


def openapi_paths() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, method in PATHS.items():
        spec = METHOD_TABLE[method]
        body = {p.name: {**p.schema(), "description": p.description} for p in spec.params}
        out[path] = {
            "post": {
                "operationId": "allowSecret" if method == "secrets.allow" else "unallowSecret",
                "summary": spec.summary,
                "description": f"JSON-RPC method `{method}`. The allowlist is the user's (state.sqlite3): a reindex keeps it.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": body,
                                "required": ["fingerprint"],
                                "additionalProperties": False,
                            }
                        }
                    },
                },
                "responses": {
                    "200": {"description": "`{fingerprint, allowlisted, changed}`"},
                    "400": {"description": "bad parameter (the message names it); nothing was written"},
                    "401": {"description": "no or wrong token (TCP only)"},
                    "403": {"description": "Host or Origin is not a loopback name"},
                },
            }
        }
    return out
