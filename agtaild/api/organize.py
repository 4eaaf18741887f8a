"""``POST /api/v1/sessions/{agent}/{id}/state``: label, star, hide or title a session.

The REST face of the ``state.change`` method (agtaild.query.writes): a JSON object of the
method's parameters as the body (``{"label": "client=acme"}``, ``{"star": true}``,
``{"title": "…"}``, ``{"hide": true}``…), the session in the path. It writes, so it is a POST:
behind the token like every endpoint, and a cross-site page cannot send it (the cookie is
SameSite=Strict and a foreign Origin is refused: agtaild.api.security). Mounted through
api/extensions.py; a daemon without the method (a team server) answers 404.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from agtaild.api.context import CTX, json_object_body, json_response
from agtaild.api.params import METHOD_TABLE
from agtaild.api.rest import API
from agtaild.errors import UsageError

PATH = f"{API}/sessions/{{agent}}/{{id}}/state"
METHOD = "state.change"


async def change_state(request: web.Request) -> web.Response:
    body = await json_object_body(
        request, "a JSON object of parameters (label, unlabel, star, hide, title, clear_title, who)"
    )
    for name in ("agent", "id"):
        if name in body:
            raise UsageError(f"parameter {name!r} is the path's, not the body's")
    spec = METHOD_TABLE[METHOD]
    params = spec.parse_json({**body, "agent": request.match_info["agent"], "id": request.match_info["id"]})
    ctx = request.app[CTX]
    return json_response(await ctx.call_encoded(METHOD, params))


def register_routes(app: web.Application) -> None:
    app.router.add_post(PATH, change_state)


def openapi_paths() -> dict[str, Any]:
    spec = METHOD_TABLE[METHOD]
    body = {p.name: {**p.schema(), "description": p.description} for p in spec.params if not p.in_path}
    return {
        PATH: {
            "post": {
                "operationId": "changeSessionState",
                "summary": spec.summary,
                "description": "JSON-RPC method `state.change`. Each change comes back with whether it was"
                " accepted: a change by an agent never overwrites the user's.",
                "parameters": [
                    {"name": "agent", "in": "path", "required": True, "description": "agent id", "schema": {"type": "string"}},
                    {"name": "id", "in": "path", "required": True, "description": "session id (a unique prefix is enough)",
                     "schema": {"type": "string"}},
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"type": "object", "properties": body, "additionalProperties": False}}},
                },
                "responses": {
                    "200": {"description": "the session and the changes", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StateChange"}}}},
                    "400": {"description": "bad parameter (the message names it); nothing was written"},
                    "401": {"description": "no or wrong token (TCP only)"},
                    "403": {"description": "Host or Origin is not a loopback name"},
                    "404": {"description": "no such session"},
                },
            }
        }
    }


def session_properties() -> dict[str, Any]:
    """What the user's state adds to a Session document (agtaild.query.organize.annotate)."""
    return {
        "state": {
            "$ref": "#/components/schemas/SessionState",
            "description": "the user's own labels, star, hide and title; present only when the session has any",
        },
        "agent_title": {
            "type": ["string", "null"],
            "description": "the agent's own title, when the user's title replaced it as `title`",
        },
    }


def components() -> dict[str, Any]:
    return {
        "SessionState": {
            "type": "object",
            "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "key → value ('' for a bare key)"},
                "starred": {"type": "boolean"},
                "hidden": {"type": "boolean"},
                "title": {"type": ["string", "null"], "description": "the user's (or the agent's, over MCP) title"},
            },
            "required": ["labels", "starred", "hidden", "title"],
        },
        "StateChange": {
            "type": "object",
            "properties": {
                "ok": {"const": True},
                "session": {"$ref": "#/components/schemas/Session"},
                "changes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "what": {"enum": ["label", "star", "hide", "title"]},
                            "key": {"type": ["string", "null"]},
                            "value": {"type": ["string", "null"], "description": "null: removed"},
                            "who": {"enum": ["user", "agent", "rule"]},
                            "accepted": {"type": "boolean", "description": "false: a higher-ranked change holds it"},
                        },
                        "required": ["what", "key", "value", "who", "accepted"],
                    },
                },
            },
            "required": ["ok", "session", "changes"],
        },
    }
