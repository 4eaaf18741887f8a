"""What agtail's MCP server answers, as plain JSON data: no SDK.

Two transports speak it: `agtail mcp` over stdio (agtaild/mcp/stdio.py, the standard library
only, so the handshake is answered before anything heavy is imported) and the daemon's ``/mcp``
over streamable HTTP (agtaild/mcp/server.py on the official SDK). Both take the server's
description, the tool list and the outcome of a tool call from here, so they cannot drift.
"""

from __future__ import annotations

from typing import Any

from agtaild import __version__
from agtaild.errors import AgtailError
from agtaild.mcp import render
from agtaild.mcp.tools import BY_NAME, TOOLS, Call, ToolArgumentError, check_arguments, error_text

NAME = "agtail"
TITLE = "agtail: the history of your coding agents"
INSTRUCTIONS = (
    "agtail indexes the session transcripts of every AI coding agent on this machine (Claude Code, "
    "Codex, Gemini CLI, opencode, …). Use search_sessions to find where something was discussed or "
    "done before, sessions_here for earlier work in this directory, read_session to read one "
    "(ids are AGENT:ID), usage_summary for tokens and cost; session_overview, session_tool_calls, "
    "child_sessions and search_session look into one session, recent_edits at file changes, "
    "compare_usage, activity_report, tool_usage and list_projects across sessions; set_title, add_label "
    "and remove_label name and label the session you are working in."
)

#: The reading tools only read this machine's index; the writing ones (set_title, add_label,
#: remove_label) change only the caller's own session's labels and title.
WRITE_ANNOTATIONS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
ANNOTATIONS: dict[str, bool] = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}

#: The protocol revisions of the ``initialize`` handshake, oldest first (the MCP
#: specification's dates). A client asking for another one is answered with the newest.
PROTOCOL_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def server_info() -> dict[str, str]:
    return {"name": NAME, "title": TITLE, "version": __version__}


def initialize_result(params: Any) -> dict[str, Any]:
    """The answer to ``initialize``: the client's protocol revision when it is one of ours
    (else our newest, and the client decides), our tools capability and who we are."""
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }


def tool_list() -> list[dict[str, Any]]:
    """``tools/list``'s tools, as the specification spells them."""
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "inputSchema": t.schema,
            "annotations": dict(WRITE_ANNOTATIONS if t.writes else ANNOTATIONS),
        }
        for t in TOOLS
    ]


def run_tool(call: Call, name: str, arguments: Any, here: str | None) -> tuple[str, bool]:
    """One tool call: (the text to return, whether it is an error). Blocking (the service is
    SQLite): the transports run it off their event loop or reading thread.

    A wrong argument, an unknown tool and the service's own refusals are tool errors with their
    message; anything else is a bug: its details go to the log (stderr for `agtail mcp`),
    never to the client, and the server lives on."""
    tool = BY_NAME.get(name)
    if tool is None:
        return render.clean(f"no tool {name!r}; tools: {', '.join(BY_NAME)}"), True
    try:
        args = check_arguments(tool, arguments)
        text = tool.run(call, args, here)
    except (ToolArgumentError, AgtailError) as err:
        return render.clean(error_text(err)), True
    except Exception:
        import logging  # only now: `agtail mcp` starts without it

        logging.getLogger("agtaild.mcp").exception("MCP tool %s failed", tool.name)
        return f"{tool.name}: internal error (the server's log has the details)", True
    return render.clean(text), False
