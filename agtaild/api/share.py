"""``GET /api/v1/sessions/{agent}/{id}/export?format=md|html|json``: a session as a document.

What `agtail export --format` writes (agtaild.share), for the viewer's download button and for
scripts; a file download (``Content-Disposition: attachment``), masked as every exit masks.
Streamed: the session is opened first (an unknown id is a 404 before any byte), then the
document goes out a chunk at a time as it is written, so memory stays flat however big.
Mounted through api/extensions.py, so the team server offers it too.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
from typing import Any, TextIO, cast

from aiohttp import web

from agtaild.api.context import CTX
from agtaild.api.rest import API
from agtaild.errors import UsageError

log = logging.getLogger(__name__)

PATH = f"{API}/sessions/{{agent}}/{{id}}/export"
_PARAMS = ("format", "branches", "depth", "redact_paths", "collection")
_FLAGS = {"true": True, "1": True, "false": False, "0": False}
#: Whether the document's secrets are masked (false only where the scanner is not installed).
SECRETS_HEADER = "X-Agtail-Secrets-Masked"
#: Characters sent to the client at a time.
CHUNK = 256 << 10


def _flag(query: Any, name: str) -> bool:
    value = query.get(name, "false")
    if value not in _FLAGS:
        raise UsageError(f"parameter {name!r}: expected true or false, got {value!r}")
    return _FLAGS[value]


async def export_session(request: web.Request) -> web.StreamResponse:
    from agtaild.share.export import FORMATS, MEDIA_TYPES, open_export
    from agtaild.share.gather import reading

    query = request.query
    unknown = sorted(set(query) - set(_PARAMS))
    if unknown:
        raise UsageError(
            f"parameter {unknown[0]!r} is not a parameter of this endpoint (accepted: {', '.join(_PARAMS)})"
        )
    fmt = query.get("format", "md")
    if fmt not in FORMATS:
        raise UsageError(f"parameter 'format': expected one of {', '.join(FORMATS)}, got {fmt!r}")
    depth_text = query.get("depth", "1")
    if not depth_text.isdigit() or int(depth_text) > 5:
        raise UsageError(f"parameter 'depth': expected 0 to 5, got {depth_text!r}")
    agent, ident = request.match_info["agent"], request.match_info["id"]
    ctx = request.app[CTX]
    ctx._check_method("events.list")
    call = reading(ctx.service)
    branches, redact_paths = _flag(query, "branches"), _flag(query, "redact_paths")
    doc = await ctx.run(lambda: open_export(call, agent, ident, fmt, branches=branches, depth=int(depth_text),
                                            redact_paths=redact_paths, collection=query.get("collection") or None))  # fmt: skip
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{doc.report['agent']}-{doc.report['id']}")[:120]
    resp = web.StreamResponse(
        headers={
            "Content-Type": MEDIA_TYPES[fmt],
            "Content-Disposition": f'attachment; filename="{name}.{fmt}"',
            "X-Content-Type-Options": "nosniff",
            SECRETS_HEADER: "true" if doc.report["secrets_masked"] else "false",
        }
    )
    await resp.prepare(request)
    sink = _Sink(asyncio.get_running_loop(), resp)

    def run() -> None:
        doc.write(cast(TextIO, sink))
        sink.flush()

    try:
        await ctx.run(run)
    except ConnectionError:
        raise  # the client went away
    except Exception:
        # Too late for an error answer: the connection is closed before the end of the chunked
        # body, so the client sees a cut download, never a whole-looking file.
        log.exception("export of %s:%s failed while streaming", agent, ident)
        if request.transport is not None:
            request.transport.close()
        return resp
    await resp.write_eof()
    return resp


class _Sink(io.TextIOBase):
    """What the writer writes to, in the executor's thread: text gathered into chunks of
    :data:`CHUNK` characters, each sent by the event loop before the next is made (the
    writer waits for the client: memory stays one chunk whatever the session's size)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, resp: web.StreamResponse) -> None:
        self._loop, self._resp = loop, resp
        self._parts: list[str] = []
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= CHUNK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._parts:
            data = "".join(self._parts).encode("utf-8", "replace")
            self._parts, self._size = [], 0
            asyncio.run_coroutine_threadsafe(self._resp.write(data), self._loop).result()


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
                    param(
                        "format",
                        {"type": "string", "enum": ["md", "html", "json"], "default": "md"},
                        "the document",
                    ),
                    param(
                        "branches", {"type": "boolean"}, "every conversation branch, not only the active one"
                    ),
                    param(
                        "depth",
                        {"type": "integer", "minimum": 0, "maximum": 5, "default": 1},
                        "subagents inlined this deep",
                    ),
                    param(
                        "redact_paths", {"type": "boolean"}, "replace the home directory and the user name"
                    ),
                    param("collection", {"type": "string"}, "which copy: an imported collection"),
                ],
                "responses": {
                    "200": {
                        "description": "the document, streamed (chunked) as it is written",
                        "headers": {
                            SECRETS_HEADER: {
                                "description": "whether its secrets are masked (false only where the scanner is not installed)",
                                "schema": {"type": "string", "enum": ["true", "false"]},
                            }
                        },
                        "content": {
                            t: {"schema": {"type": "string"}}
                            for t in ("text/markdown", "text/html", "application/json")
                        },
                    },
                    "400": {"description": "bad parameter (the message names it)"},
                    "401": {"description": "no or wrong token (TCP only)"},
                    "404": {"description": "no such session"},
                },
            }
        }
    }
