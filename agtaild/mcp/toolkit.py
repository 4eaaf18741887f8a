"""What every MCP tool is made of: the Tool, its argument error, the schema pieces, and small
helpers the tool modules share (agtaild.mcp.tools, agtaild.mcp.insight_tools). No SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Any]


class ToolArgumentError(ValueError):
    """The caller's arguments do not fit the tool's schema."""


class Tool:
    """A tool: its name, title, description, JSON Schema and function. (A plain class, not a
    dataclass: `agtail mcp` answers the handshake before importing more than it must.)"""

    __slots__ = ("description", "name", "run", "schema", "title", "writes")

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        schema: dict[str, Any],
        run: Callable[[Call, dict[str, Any], str | None], str],
        *,
        writes: bool = False,
    ) -> None:
        #: Whether it changes something (the user's state of the caller's own session).
        self.writes = writes
        self.name = name
        self.title = title
        self.description = description
        self.schema = schema
        self.run = run


def _string(description: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **more}


def _integer(description: str, default: int, minimum: int, maximum: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "description": description,
        "default": default,
        "minimum": minimum,
        "maximum": maximum,
    }


_AGENT = _string("only this agent's sessions (an agent id: claude-code, codex, gemini, opencode, …)")
_PROJECT = _string("only sessions of this project (the last part of the session's cwd)")
_CWD = _string("only sessions whose working directory is this absolute path or below it")
_SINCE = _string(
    "only at or after this time: a date (2026-01-31), a time (2026-01-31T12:00) or an age (30m, 12h, 7d, 2w)"
)
_CURSOR = _string("continue after a previous page: the cursor that page printed")


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _pick(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {n: args[n] for n in names if args.get(n) not in (None, "")}


def _more(doc: dict[str, Any]) -> str | None:
    return f"cursor={doc['next']!r}" if doc.get("next") else None


def _split_id(value: str) -> dict[str, str]:
    """The ``agent``/``id`` of a session named as AGENT:ID, or by an id (prefix) alone."""
    agent, sep, ident = value.strip().partition(":")
    if not sep:
        agent, ident = "", value.strip()
    if not ident or (sep and not agent):
        raise ToolArgumentError(
            f"read_session: 'id' must be AGENT:ID as the other tools print it (or an id), got {value[:80]!r}"
        )
    return {"agent": agent, "id": ident} if agent else {"id": ident}
