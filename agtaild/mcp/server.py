"""The tools of agtaild.mcp.tools on the official `mcp` SDK's low-level server.

The low-level server (not the decorator-based one) because the tools are data: their schemas
are written out in tools.py and checked there, so a bad argument becomes a tool error with a
clear message, and the SDK configures no logging of its own in the daemon.

A tool runs synchronously (the service is SQLite) on a worker thread; whatever it raises
becomes a tool result with ``isError`` set, never a broken connection.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from agtaild import __version__
from agtaild.errors import AgtailError
from agtaild.mcp import render
from agtaild.mcp.tools import BY_NAME, TOOLS, Call, ToolArgumentError, check_arguments, error_text

log = logging.getLogger("agtaild.mcp")

#: Runs a blocking function off the event loop (the daemon hands its reader pool).
RunSync = Callable[[Callable[[], str]], Awaitable[str]]

INSTRUCTIONS = (
    "agtail indexes the session transcripts of every AI coding agent on this machine (Claude Code, "
    "Codex, Gemini CLI, opencode, …). Use search_sessions to find where something was discussed or "
    "done before, sessions_here for earlier work in this directory, read_session to read one "
    "(ids are AGENT:ID), usage_summary for tokens and cost."
)


async def _default_run_sync(fn: Callable[[], str]) -> str:
    return await anyio.to_thread.run_sync(fn)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=render.clean(message))], is_error=True)


def build_server(call: Call, *, here: str | None, run_sync: RunSync | None = None) -> Server[Any]:
    """The MCP server answering from ``call`` (the Backend protocol's ``call(method, params)``).

    ``here``: the directory sessions_here defaults to (None: the caller must name one)."""
    runner = run_sync or _default_run_sync

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    title=t.title,
                    description=t.description,
                    input_schema=t.schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
                    ),
                )
                for t in TOOLS
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            return _error(f"no tool {params.name!r}; tools: {', '.join(BY_NAME)}")
        try:
            args = check_arguments(tool, params.arguments)
            text = await runner(lambda: tool.run(call, args, here))
        except (ToolArgumentError, AgtailError) as err:
            return _error(error_text(err))
        except Exception:
            # A bug: the details go to the log (stderr for `agtail mcp`), never to the client.
            log.exception("MCP tool %s failed", tool.name)
            return _error(f"{tool.name}: internal error (the server's log has the details)")
        return types.CallToolResult(content=[types.TextContent(type="text", text=render.clean(text))])

    return Server(
        "agtail",
        version=__version__,
        title="agtail: the history of your coding agents",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(call: Call, *, here: str | None) -> None:
    """Serve MCP on this process's stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(call, here=here)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(call: Call, *, here: str | None) -> None:
    try:
        anyio.run(lambda: serve_stdio(call, here=here))
    except KeyboardInterrupt:
        print("agtail mcp: interrupted", file=sys.stderr)
