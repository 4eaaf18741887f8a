"""The MCP server of the daemon's ``/mcp``, on the official `mcp` SDK's low-level server.

The low-level server (not the decorator-based one) because the tools are data: what it says
comes from agtaild/mcp/handlers.py (shared with `agtail mcp` over stdio, which speaks the
protocol without the SDK), so a bad argument becomes a tool error with a clear message, and
the SDK configures no logging of its own in the daemon.

A tool runs synchronously (the service is SQLite) on a worker thread; whatever it raises
becomes a tool result with ``isError`` set, never a broken connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from agtaild import __version__
from agtaild.mcp import handlers
from agtaild.mcp.tools import TOOLS, Call

#: Runs a blocking function off the event loop (the daemon hands its reader pool).
RunSync = Callable[[Callable[[], tuple[str, bool]]], Awaitable[tuple[str, bool]]]

INSTRUCTIONS = handlers.INSTRUCTIONS


async def _default_run_sync(fn: Callable[[], tuple[str, bool]]) -> tuple[str, bool]:
    return await anyio.to_thread.run_sync(fn)


def build_server(call: Call, *, here: str | None, run_sync: RunSync | None = None) -> Server[Any]:
    """The MCP server answering from ``call`` (the Backend protocol's ``call(method, params)``).

    ``here``: the directory sessions_here defaults to (None: the caller must name one)."""
    runner = run_sync or _default_run_sync
    annotations = types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    writing = types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, title=t.title, description=t.description, input_schema=t.schema,
                           annotations=writing if t.writes else annotations)
                for t in TOOLS
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await runner(lambda: handlers.run_tool(call, params.name, params.arguments, here))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    return Server(
        handlers.NAME,
        version=__version__,
        title=handlers.TITLE,
        instructions=handlers.INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
