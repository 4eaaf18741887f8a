"""The OpenAPI 3.1 document of the HTTP surface, generated from the code that serves it.

Parameters come from the method table (agtaild/api/params.py), the record schemas from the
msgspec model (agtaild/model.py), the paths from the route tables. docs/openapi.json is this
document committed; a test fails when the two differ or when a route is undocumented.
Regenerate with ``python -m agtaild.api.openapi > docs/openapi.json``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import msgspec

from agtaild import __version__
from agtaild.api import extensions, rest, sse
from agtaild.api.params import METHOD_TABLE, Method
from agtaild.model import Event, Session, Usage

REF = "#/components/schemas/{name}"
JSON = "application/json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(name=name)}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _ok(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"ok": {"const": True}, **properties},
        "required": ["ok", *required],
    }


def _edit_record(**more: Any) -> dict[str, Any]:
    """A recorded file change (agtaild.index.edits) as ``edits.recent`` and ``files.history``
    both give it, with the fields only one of them has."""
    return {
        "type": "object",
        "properties": {
            "edit_id": {"type": "integer"},
            "session": {"type": "object"},
            "seq": {"type": "integer"},
            "time": _nullable({"type": "string"}),
            "kind": {"type": "string", "enum": ["create", "edit", "patch", "delete", "command", "rename"]},
            "failed": {"type": "boolean"},
            "path": {"type": "string"},
            "from_path": _nullable({"type": "string"}),
            "tool": _nullable({"type": "string"}),
            "command": {"type": "string"},
            **more,
        },
    }


def _page(name: str, item: dict[str, Any]) -> dict[str, Any]:
    return _ok({name: {"type": "array", "items": item}, "next": _nullable({"type": "string"})}, [name, "next"])


def _with(schema: dict[str, Any], name: str, prop: dict[str, Any]) -> dict[str, Any]:
    """A response schema with one more (optional) property."""
    schema["properties"][name] = prop
    return schema


def schemas() -> dict[str, Any]:
    _, comps = msgspec.json.schema_components([Session, Event, Usage], ref_template=REF)
    from agtaild.api import organize  # the user's own state (docs/organize.md)

    comps["Session"]["properties"].update(organize.session_properties())
    comps["Session"]["properties"]["secrets"] = {
        "type": "integer",
        "minimum": 1,
        "description": "distinct secrets the index found in this session that the user did not allowlist;"
        " present only when there are any (agtail secrets --session AGENT:ID lists them, masked)",
    }
    comps.update(organize.components())
    usage_row = {
        "allOf": [
            _ref("Usage"),
            {"type": "object", "properties": {"key": _nullable({"type": "string"})}, "required": ["key"]},
        ]
    }
    comps.update(
        {
            "Error": {
                "type": "object",
                "description": "The one error shape of the API.",
                "properties": {
                    "ok": {"const": False},
                    "error": {
                        "type": "object",
                        "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                        "required": ["code", "message"],
                    },
                    "status": {"type": "integer"},
                },
                "required": ["ok", "error", "status"],
            },
            "Health": _ok(
                {
                    "status": {"type": "string"},
                    "version": {"type": "string"},
                    # Trusted callers only: the index file's state (docs/api.md, Health).
                    "storage": {
                        "type": "object",
                        "properties": {
                            "state": {"enum": ["ok", "rebuilding", "disk_full", "read_only"]},
                            "read_only": {"type": "boolean"},
                            "message": {"type": ["string", "null"]},
                            "path": {"type": "string"},
                            "repairs": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                    # Trusted callers only: the running index update, null when idle (docs/api.md).
                    "progress": {
                        "type": ["object", "null"],
                        "properties": {
                            "kind": {"enum": ["update", "rebuild", "paths"]},
                            "phase": {"enum": ["scanning", "reading", "finishing"]},
                            "files_done": {"type": "integer"},
                            "files_total": {"type": "integer"},
                            "bytes_done": {"type": "integer"},
                            "bytes_total": {"type": "integer"},
                            "rate_bytes_per_second": {"type": ["integer", "null"]},
                            "eta_seconds": {"type": ["number", "null"]},
                            "elapsed_seconds": {"type": "number"},
                            "started": {"type": "number"},
                        },
                        "required": [
                            "kind", "phase", "files_done", "files_total", "bytes_done", "bytes_total",
                            "rate_bytes_per_second", "eta_seconds", "elapsed_seconds", "started",
                        ],
                    },
                },
                ["status", "version"],
            ),
            "SessionList": _with(
                _page("sessions", _ref("Session")),
                "total",
                {"type": "integer", "minimum": 0, "description": "with total=true: matching sessions on all pages"},
            ),
            "SessionDoc": _ok({"session": _ref("Session")}, ["session"]),
            "EventList": _with(
                _page("events", _ref("Event")),
                "prev_seq",
                _nullable({"type": "integer", "description": "before_seq of the page before this one"}),
            ),
            "SearchHit": {
                "type": "object",
                "properties": {
                    "session": _ref("Session"),
                    "event": _ref("Event"),
                    "snippet": {"type": "string"},
                    "found_by": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["full-text", "semantic"]},
                        "description": "semantic / hybrid modes: the rankings that found this hit",
                    },
                },
                "required": ["session", "event", "snippet"],
            },
            "SearchResult": _with(
                _with(
                    _page("hits", _ref("SearchHit")),
                    "mode",
                    {"type": "string", "description": "semantic / hybrid: the mode the hits were ranked in"},
                ),
                "note",
                {"type": "string", "description": "one line: why the ranking is not the one asked or expected"},
            ),
            "EmbeddingsStatus": _ok(
                {
                    "enabled": {"type": "boolean"},
                    "backend": {"type": "string", "enum": ["off", "static", "openai"]},
                    "state": {"type": "string", "enum": ["off", "idle", "building", "error"]},
                    "error": _nullable({"type": "string"}),
                    "model": _nullable({"type": "string"}),
                    "dimension": _nullable({"type": "integer"}),
                    "events": {"type": "integer"},
                    "events_embedded": {"type": "integer"},
                    "coverage": {"type": "number", "minimum": 0, "maximum": 1},
                    "chunks": {"type": "integer"},
                    "rate": _nullable({"type": "number", "description": "texts per second of the last build"}),
                    "store_bytes": {"type": "integer"},
                    "healthy": {"type": "boolean"},
                    "ready": {"type": "boolean", "description": "healthy and every event embedded: hybrid is the default"},
                    "retry_in": {"type": "integer", "description": "seconds until the embedder tries again"},
                    "lists": {"type": "integer", "description": "the in-memory search's inverted-file lists; 0: every search is exact"},
                },
                ["enabled", "backend", "state", "healthy", "ready"],
            ),
            "Stats": _ok(
                {
                    "totals": _ref("Usage"),
                    "rows": {"type": "array", "items": usage_row},
                    "undated": {
                        "allOf": [_ref("Usage")],
                        "description": "usage with no time at all (neither its records nor its session say when), "
                        "left out by the date bounds (by=hour: in no hour); present only when there is some",
                    },
                },
                ["totals", "rows"],
            ),
            "ProjectList": _ok(
                {
                    "projects": {
                        "type": "array",
                        "items": {
                            "allOf": [
                                _ref("Usage"),
                                {
                                    "type": "object",
                                    "properties": {
                                        "project": {"type": "string"},
                                        "root": {"type": "string"},
                                        "sessions": {"type": "integer"},
                                        "agents": {"type": "array", "items": {"type": "string"}},
                                        "last_active": _nullable({"type": "string"}),
                                        "cwds": {"type": "array", "items": {"type": "string"}},
                                    },
                                    "required": ["project", "root", "sessions", "agents", "last_active"],
                                },
                            ]
                        },
                    }
                },
                ["projects"],
            ),
            "LiveUsage": _ok(
                {
                    "now": {"type": "string"},
                    "now_epoch": {"type": "number"},
                    "active_minutes": {"type": "integer"},
                    "sessions": {
                        "type": "array",
                        "description": "sessions active in the last active_minutes, the fastest burn first",
                        "items": {"type": "object", "required": ["agent", "id", "usage", "burn", "window"]},
                    },
                    "windows": {
                        "type": "array",
                        "description": "limit windows: `source` recorded (as the agent wrote them, with their"
                        " age; fields this version does not know under `unknown`) or computed (Claude's 5-hour"
                        " blocks as ccusage computes them, and the last 7 days); `projection` is one",
                        "items": {"type": "object", "required": ["agent", "kind", "source"]},
                    },
                    "today": {"type": "object", "required": ["day", "usage", "agents"]},
                    "session": _nullable({"type": "object", "description": "the session named by `session` (null: not indexed)"}),
                },
                ["now", "active_minutes", "sessions", "windows", "today"],
            ),
            "Report": _ok(
                {
                    "since": _nullable({"type": "string"}),
                    "until": _nullable({"type": "string"}),
                    "sessions": {"type": "integer"},
                    "usage": _ref("Usage"),
                    "projects": {
                        "type": "array",
                        "description": "per project (sorted by name): its sessions (prompts, files_edited,"
                        " failed_then_passed, usage), the files edited and the usage of them all",
                        "items": {"type": "object", "required": ["project", "sessions", "files_edited", "usage"]},
                    },
                },
                ["since", "until", "sessions", "usage", "projects"],
            ),
            "SessionOverview": _ok(
                {
                    "session": _ref("Session"),
                    "tools": {"type": "array", "description": "tool calls by tool, most used first (at most 50)",
                              "items": {"type": "object", "properties": {"tool": {"type": "string"}, "calls": {"type": "integer"},
                                                                         "errors": {"type": "integer"}}}},
                    "tool_calls": {"type": "integer"},
                    "tool_errors": {"type": "integer"},
                    "edits": {"type": "object", "properties": {"files": {"type": "integer"}, "changes": {"type": "integer"},
                                                               "failed": {"type": "integer"}}},
                    "children": {"type": "array", "description": "the first 20 child sessions, brief", "items": {"type": "object"}},
                    "children_total": {"type": "integer"},
                },
                ["session", "tools", "tool_calls", "tool_errors", "edits", "children", "children_total"],
            ),
            "SessionChildren": _with(
                _with(_page("sessions", _ref("Session")), "total", {"type": "integer"}),
                "parent",
                {"type": "object", "description": "the session asked about, brief"},
            ),
            "ToolCalls": _with(
                _with(
                    _page(
                        "calls",
                        {
                            "type": "object",
                            "properties": {
                                "seq": {"type": "integer"},
                                "ts": _nullable({"type": "string"}),
                                "tool": _nullable({"type": "string"}),
                                "status": {"enum": ["ok", "error", "no result recorded"]},
                                "duration_ms": _nullable({"type": "integer", "description": "where the agent recorded the result's time"}),
                                "input": _nullable({"type": "string", "description": "JSON of the input, its first 300 characters"}),
                                "input_cut": {"type": "integer", "description": "characters of the input left out"},
                                "subagent": {"type": "string"},
                            },
                            "required": ["seq", "ts", "tool", "status", "duration_ms", "input", "input_cut"],
                        },
                    ),
                    "tool",
                    _nullable({"type": "string"}),
                ),
                "scanned_through_seq",
                {"type": "integer", "description": "the last event seq this page looked at"},
            ),
            "RecentEdits": _page(
                "edits",
                _edit_record(
                    diff={"type": "array", "items": {"type": "string"}, "description": "the first diff_lines lines"},
                    diff_cut={"type": "integer"},
                ),
            ),
            "FileHistory": _ok(
                {
                    "path": {"type": "string", "description": "the path asked for, absolute"},
                    "real_path": _nullable({"type": "string", "description": "its symlinks resolved, when that differs"}),
                    "directory": {"type": "boolean"},
                    "exists": {"type": "boolean"},
                    "git": _nullable({"type": "object", "properties": {"root": {"type": "string"}, "rel": {"type": "string"}}}),
                    "records": {
                        "type": "array",
                        "description": "newest first",
                        "items": {
                            **_edit_record(
                                match={"type": "string", "enum": ["same", "symlink", "case", "renamed"]},
                                prompt=_nullable({"type": "object"}),
                                hunks={"type": "array", "items": {"type": "object"}},
                                numbered={"type": "boolean"},
                                cut={"type": "integer"},
                                ops={"type": "array", "description": "with replay=true: the replay operations"},
                            ),
                            "required": ["edit_id", "session", "seq", "time", "kind", "failed", "path", "match", "hunks"],
                        },
                    },
                    "total": {"type": "integer"},
                    "truncated": {"type": "boolean"},
                    "other_case": {"type": "array", "items": {"type": "string"}},
                },
                ["path", "directory", "exists", "records", "total", "truncated"],
            ),
            "AgentList": _ok({"agents": {"type": "array", "items": {"type": "object"}}}, ["agents"]),
            "MachineList": _ok({"machines": {"type": "array", "items": {"type": "object"}}}, ["machines"]),
            "ResumeCommand": _ok(
                {
                    "agent": {"type": "string"},
                    "cwd": _nullable({"type": "string"}),
                    "cwd_exists": {"type": "boolean"},
                    "argv": {"type": "array", "items": {"type": "string"}},
                },
                ["agent", "cwd", "cwd_exists", "argv"],
            ),
            "SecretList": _ok(
                {
                    "secrets": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "fingerprint": {"type": "string"},
                                "rule": {"type": "string"},
                                "confidence": {"type": "string"},
                                "masked": {"type": "string"},
                                "session_count": {"type": "integer"},
                                "place_count": {"type": "integer"},
                                "first_seen": _nullable({"type": "string"}),
                                "last_seen": _nullable({"type": "string"}),
                                "allowlisted": {"type": "boolean"},
                                "places": {"type": "array", "items": {"type": "object"}},
                            },
                            "required": ["fingerprint", "rule", "masked", "session_count", "place_count", "places"],
                        },
                    },
                    "total": {"type": "integer"},
                    "allowlisted_hidden": {"type": "integer"},
                    "pending": _nullable({"type": "integer"}),
                },
                ["secrets", "total", "pending"],
            ),
            "LoginLink": _ok({"path": {"type": "string"}, "expires_in": {"type": "integer"}}, ["path", "expires_in"]),
        }
    )
    return dict(sorted(comps.items()))


RESULT_SCHEMA = {
    "agents.list": "AgentList",
    "sessions.list": "SessionList",
    "sessions.get": "SessionDoc",
    "events.list": "EventList",
    "resume.command": "ResumeCommand",
    "search": "SearchResult",
    "stats": "Stats",
    "usage.live": "LiveUsage",
    "report": "Report",
    "machines.list": "MachineList",
    "projects.list": "ProjectList",
    "secrets.list": "SecretList",
    "files.history": "FileHistory",
    "sessions.overview": "SessionOverview",
    "sessions.children": "SessionChildren",
    "tools.calls": "ToolCalls",
    "edits.recent": "RecentEdits",
    "embeddings.status": "EmbeddingsStatus",
}


def _errors(*statuses: int) -> dict[str, Any]:
    why = {
        400: "bad parameter (the message names it)",
        401: "no or wrong token (TCP only)",
        403: "Host or Origin is not a loopback name",
        404: "no such session, or no such endpoint",
        409: "refused",
        413: "request too large",
    }
    return {
        str(s): {"description": why[s], "content": {JSON: {"schema": _ref("Error")}}} for s in statuses
    }


def _parameters(method: Method) -> list[dict[str, Any]]:
    out = []
    for p in method.params:
        out.append(
            {
                "name": p.name,
                "in": "path" if p.in_path else "query",
                "required": p.required or p.in_path,
                "description": p.description,
                "schema": p.schema(),
            }
        )
    return out


def _json_op(op_id: str, summary: str, schema: str, params: list[dict[str, Any]], errors: tuple[int, ...]) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "summary": summary,
        "parameters": params,
        "responses": {
            "200": {"description": "ok", "content": {JSON: {"schema": _ref(schema)}}},
            **_errors(*errors),
        },
    }


def _sse_op(op_id: str, method: Method, description: str) -> dict[str, Any]:
    has_path = any(p.in_path for p in method.params)
    return {
        "operationId": op_id,
        "summary": method.summary,
        "description": description,
        "parameters": [
            *_parameters(method),
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "resume after this event id",
                "schema": {"type": "string", "maxLength": 200},
            },
        ],
        "responses": {
            "200": {"description": "an event stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            **_errors(400, 401, 403, *((404,) if has_path else ())),
        },
    }


def paths() -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["/api/v1/health"] = {
        "get": {
            "operationId": "health",
            "summary": "Liveness (no token needed); details for trusted callers",
            "security": [],
            "responses": {
                "200": {"description": "ok", "content": {JSON: {"schema": _ref("Health")}}},
                **_errors(403),
            },
        }
    }
    out["/api/v1/openapi.json"] = {
        "get": {
            "operationId": "openapi",
            "summary": "This document",
            "responses": {"200": {"description": "ok", "content": {JSON: {"schema": {"type": "object"}}}}, **_errors(401, 403)},
        }
    }
    for route in rest.ROUTES:
        method = METHOD_TABLE[route.method]
        has_path = any(p.in_path for p in method.params)
        errors = (
            (400, 401, 403, 404)
            if has_path or route.method in ("resume.command", "machines.list")
            else (400, 401, 403)
        )
        if route.method in ("resume.command", "search"):  # search: semantic mode, no model (docs/semantic.md)
            errors = (*errors, 409)
        op = _json_op(route.operation_id, method.summary, RESULT_SCHEMA[route.method], _parameters(method), errors)
        op["description"] = f"JSON-RPC method `{route.method}`."
        if route.method == "stats":
            op["parameters"].append(
                {
                    "name": "Cache-Control",
                    "in": "header",
                    "required": False,
                    "description": "`no-cache`: an answer computed now, never one the daemon kept"
                    " (it keeps recent stats answers while the index is unchanged)",
                    "schema": {"type": "string"},
                }
            )
        out[route.path] = {"get": op}
    out[f"{rest.API}/sessions/{{agent}}/{{id}}/follow"] = {
        "get": _sse_op("followSession", sse.FOLLOW, "Events `event` (id = seq), `reset`, `removed`.")
    }
    out[f"{rest.API}/changes"] = {"get": _sse_op("changes", sse.CHANGES, "Events `change` (id = <boot>-<n>) and `reset`.")}
    out[f"{rest.API}/login-link"] = {
        "post": {
            "operationId": "newLoginLink",
            "summary": "A one-time login path for the viewer",
            "responses": {"200": {"description": "ok", "content": {JSON: {"schema": _ref("LoginLink")}}}, **_errors(400, 401, 403)},
        }
    }
    out["/rpc"] = {
        "post": {
            "operationId": "jsonRpc",
            "summary": "JSON-RPC 2.0 (single requests and batches)",
            "description": "Methods: " + ", ".join(sorted(METHOD_TABLE)) + ". Parameters as for REST.",
            "requestBody": {
                "required": True,
                "content": {JSON: {"schema": {"anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}]}}},
            },
            "responses": {
                "200": {"description": "response(s)", "content": {JSON: {"schema": {"anyOf": [{"type": "object"}, {"type": "array"}]}}}},
                "204": {"description": "only notifications were sent"},
                **_errors(401, 403, 413),
            },
        }
    }
    out["/login"] = {
        "get": {
            "operationId": "login",
            "summary": "The viewer's login link: sets an HttpOnly SameSite=Strict cookie and redirects to /",
            "security": [],
            "parameters": [
                {"name": "token", "in": "query", "required": False, "schema": {"type": "string"}},
                {"name": "code", "in": "query", "required": False, "schema": {"type": "string"}},
            ],
            "responses": {"303": {"description": "logged in; go to /"}, **_errors(400, 401, 403)},
        }
    }
    out["/"] = {
        "get": {
            "operationId": "viewer",
            "summary": "The web viewer (static files under /web/ too)",
            "responses": {"200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}}, **_errors(401, 403)},
        }
    }
    for name in extensions.ROUTE_MODULES:
        extra = getattr(importlib.import_module(name), "openapi_paths", None)
        if extra is not None:
            out.update(extra())
    return out


def build_openapi() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "agtail",
            "version": __version__,
            "description": (
                "Every AI coding agent session on this machine, in one index. Successes carry "
                '`"ok": true`; errors are `{"ok": false, "error": {"code", "message"}, "status"}`. '
                "Over TCP every endpoint but health needs the token; the unix socket needs none."
            ),
        },
        "servers": [{"url": "http://127.0.0.1:7717"}],
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": paths(),
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "the token in <data dir>/token"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "agtail_session"},
            },
        },
    }


def main() -> None:
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(build_openapi()), indent=2) + b"\n")


if __name__ == "__main__":
    main()
