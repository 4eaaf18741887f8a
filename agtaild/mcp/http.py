"""MCP over streamable HTTP at ``/mcp`` in the daemon, answered by the daemon's own service.

The SDK's transport is an ASGI application; agtaild is aiohttp. So each request is handed to
the SDK's session manager as an ASGI call (the body already read, the response streamed back
through an aiohttp StreamResponse). The route sits behind the API's middlewares like every
other: over TCP the token is required and Host/Origin must be loopback (agtaild/api/security.py);
the unix socket needs no token.

The session manager runs stateless with JSON responses: every POST is answered on its own,
no server-held session to leak or expire, and nothing to stream (the tools only answer).
It is created on the first request, so a daemon nobody asks for MCP never imports the SDK;
its task group lives in a task of its own and is closed when the app shuts down.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from aiohttp import web

from agtaild.api.context import CTX, error_shape

log = logging.getLogger("agtaild.mcp")

PATH = "/mcp"


class McpEndpoint:
    """The SDK's session manager, started on first use and stopped with the app."""

    def __init__(self) -> None:
        self._manager: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    async def manager(self, app: web.Application) -> Any:
        async with self._lock:
            if self._manager is None:
                self._manager = await self._start(app)
        return self._manager

    async def _start(self, app: web.Application) -> Any:
        # Importing the SDK takes a second or more (pydantic, starlette, …): on a thread, so the
        # daemon's event loop keeps serving everything else meanwhile.
        await asyncio.to_thread(_import_sdk)
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from agtaild.mcp.server import build_server

        ctx = app[CTX]
        server = build_server(ctx.service.call, here=None, run_sync=ctx.run)
        manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
        ready = asyncio.Event()
        failed: list[BaseException] = []

        async def hold() -> None:
            try:
                async with manager.run():
                    ready.set()
                    await self._stop.wait()
            except BaseException as err:
                failed.append(err)
                ready.set()
                raise

        # A context of its own: the first request's (its caller, agtaild.api.caller) must not be
        # inherited by the tasks the SDK starts for later requests; each request's own is.
        self._task = asyncio.create_task(hold(), name="agtaild-mcp", context=contextvars.Context())
        await ready.wait()
        if failed:
            raise RuntimeError(f"the MCP endpoint did not start: {failed[0]!r}")
        return manager

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 10)
            except Exception:  # a timeout too
                log.warning("the MCP endpoint did not stop cleanly", exc_info=True)


_ENDPOINT = web.AppKey("agtail_mcp", McpEndpoint)


#: The SDK's transport logs "Terminating session: None" at INFO after every stateless request:
#: a line per POST that says nothing. Its warnings and errors still reach the daemon's log
#: (and everything, at ``--log-level debug``).
_CHATTY_LOGGERS = ("mcp.server.streamable_http",)


def _import_sdk() -> None:
    import mcp.server.streamable_http_manager  # noqa: F401

    import agtaild.mcp.server  # noqa: F401

    if not log.isEnabledFor(logging.DEBUG):
        for name in _CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)


def _scope(request: web.Request) -> dict[str, Any]:
    headers = [(k.lower(), v) for k, v in request.raw_headers]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1", "replace"),
        "query_string": request.query_string.encode("latin-1", "replace"),
        "root_path": "",
        "headers": headers,
        "client": None,
        "server": None,
        "state": {},
    }


async def no_stream(request: web.Request) -> web.Response:
    """GET (a server-to-client stream) and DELETE (end a session): neither exists when stateless.
    The specification lets a server answer 405 to both; clients then carry on with POST alone.
    (Left to the SDK, a GET would hold a silent stream open until the client gives up.)"""
    response = error_shape(405, "method_not_allowed", f"{request.method} {PATH}: this MCP endpoint is stateless; POST only")
    response.headers["Allow"] = "POST"
    return response


async def handle(request: web.Request) -> web.StreamResponse:
    manager = await request.app[_ENDPOINT].manager(request.app)
    body = await request.read()
    done = asyncio.Event()
    delivered = False
    response: web.StreamResponse | None = None

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal response
        if request.transport is None or request.transport.is_closing():
            return  # the client went away; the SDK finishes its side and stops
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for key, value in message.get("headers", []):
                response.headers.add(key.decode("latin-1"), value.decode("latin-1"))
        elif message["type"] == "http.response.body" and response is not None:
            if not response.prepared:
                await response.prepare(request)
            chunk = message.get("body", b"")
            if chunk:
                await response.write(chunk)
            if not message.get("more_body", False):
                await response.write_eof()

    try:
        await manager.handle_request(_scope(request), receive, send)
    finally:
        done.set()
    if response is None:
        raise RuntimeError("the MCP transport sent no response")
    return response


def register_routes(app: web.Application) -> None:
    """Mount ``/mcp`` (called by the API's app factory through ROUTE_MODULES)."""
    endpoint = McpEndpoint()
    app[_ENDPOINT] = endpoint

    async def stop(_app: web.Application) -> None:
        await endpoint.close()

    app.on_shutdown.append(stop)
    app.router.add_post(PATH, handle)
    app.router.add_get(PATH, no_stream, allow_head=False)
    app.router.add_delete(PATH, no_stream)


def openapi_paths() -> dict[str, Any]:
    """``/mcp`` in the API's OpenAPI document (details: docs/mcp.md). Bodies are the MCP SDK's
    JSON-RPC messages, not agtail's documents, so no response names a schema."""
    post_statuses = {
        "200": "a JSON-RPC answer (application/json)",
        "202": "a notification or response from the client, accepted",
        "400": "not a JSON-RPC message, or not one the server takes (a JSON-RPC error)",
        "401": "no or wrong token (TCP only)",
        "403": "Host or Origin is not a loopback name",
        "406": "the Accept header does not take application/json and text/event-stream",
        "413": "request too large",
        "415": "the body is not application/json",
    }
    not_offered = {"405": {"description": "POST only: this endpoint is stateless"}}
    return {
        PATH: {
            "post": {
                "summary": "Model Context Protocol, streamable HTTP (stateless, JSON answers)",
                "operationId": "mcpPost",
                "tags": ["mcp"],
                "requestBody": {"required": True, "content": {"application/json": {}}},
                "responses": {code: {"description": why} for code, why in post_statuses.items()},
            },
            "get": {"summary": "MCP server-to-client stream: not offered", "operationId": "mcpGet",
                    "tags": ["mcp"], "responses": not_offered},
            "delete": {"summary": "MCP session end: none to end", "operationId": "mcpDelete",
                       "tags": ["mcp"], "responses": not_offered},
        }
    }
