"""``GET /api/v1/sessions/{agent}/{id}/export?format=md|html|json``: a session as a document.

What `agtail export --format` writes (agtaild.share), for the viewer's download button and for
scripts; a file download (``Content-Disposition: attachment``), masked as every exit masks.
Mounted through api/extensions.py, so the team server offers it too.
"""

from __future__ import annotations

import io
import re
from typing import Any

from aiohttp import web

from agtaild.api.context import CTX
from agtaild.api.rest import API
from agtaild.errors import UsageError

PATH = f"{API}/sessions/{{agent}}/{{id}}/export"
_PARAMS = ("format", "branches", "depth", "redact_paths", "collection")
_FLAGS = {"true": True, "1": True, "false": False, "0": False}


def _flag(query: Any, name: str) -> bool:
    value = query.get(name, "false")
    if value not in _FLAGS:
        raise UsageError(f"parameter {name!r}: expected true or false, got {value!r}")
    return _FLAGS[value]


async def export_session(request: web.Request) -> web.StreamResponse:
    from agtaild.share.export import FORMATS, MEDIA_TYPES, export
    from agtaild.share.gather import reading

    query = request.query
    unknown = sorted(set(query) - set(_PARAMS))
    if unknown:
        raise UsageError(f"parameter {unknown[0]!r} is not a parameter of this endpoint (accepted: {', '.join(_PARAMS)})")
    fmt = query.get("format", "md")
    if fmt not in FORMATS:
        raise UsageError(f"parameter 'format': expected one of {', '.join(FORMATS)}, got {fmt!r}")
    depth_text = query.get("depth", "1")
    if not depth_text.isdigit() or int(depth_text) > 5:
        raise UsageError(f"parameter 'depth': expected 0 to 5, got {depth_text!r}")
    agent, ident = request.match_info["agent"], request.match_info["id"]
    ctx = request.app[CTX]
    ctx._check_method("events.list")

    def run() -> tuple[str, dict[str, Any]]:
        out = io.StringIO()
        report = export(reading(ctx.service), agent, ident, fmt, out, branches=_flag(query, "branches"),
                        depth=int(depth_text), redact_paths=_flag(query, "redact_paths"),
                        collection=query.get("collection") or None)  # fmt: skip
        return out.getvalue(), report

    text, report = await ctx.run(run)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{report['agent']}-{report['id']}")[:120]
    return web.Response(
        text=text,
        headers={
            "Content-Type": MEDIA_TYPES[fmt],
            "Content-Disposition": f'attachment; filename="{name}.{fmt}"',
            "X-Content-Type-Options": "nosniff",
        },
    )


def register_routes(app: web.Application) -> None:
    app.router.add_get(PATH, export_session)


def openapi_paths() -> dict[str, Any]:
    def param(name: str, schema: dict[str, Any], what: str, where: str = "query") -> dict[str, Any]:
        return {"name": name, "in": where, "required": where == "path", "description": what, "schema": schema}

    return {
        PATH: {
            "get": {
                "summary": "A session as Markdown, one self-contained HTML file, or JSON (a download; secrets masked)",
                "operationId": "exportSession",
                "tags": ["sessions"],
                "parameters": [
                    param("agent", {"type": "string"}, "agent id", "path"),
                    param("id", {"type": "string"}, "session id (a unique prefix is enough)", "path"),
                    param("format", {"type": "string", "enum": ["md", "html", "json"], "default": "md"}, "the document"),
                    param("branches", {"type": "boolean"}, "every conversation branch, not only the active one"),
                    param("depth", {"type": "integer", "minimum": 0, "maximum": 5, "default": 1}, "subagents inlined this deep"),
                    param("redact_paths", {"type": "boolean"}, "replace the home directory and the user name"),
                    param("collection", {"type": "string"}, "which copy: an imported collection"),
                ],
                "responses": {
                    "200": {
                        "description": "the document",
                        "content": {t: {"schema": {"type": "string"}} for t in ("text/markdown", "text/html", "application/json")},
                    },
                    "400": {"description": "bad parameter (the message names it)"},
                    "401": {"description": "no or wrong token (TCP only)"},
                    "404": {"description": "no such session"},
                },
            }
        }
    }
