"""The MCP tool ``handoff_brief``: the brief `agtail handoff --print` prints, for an agent that
asks for it (to continue a session another agent left, in this one).

Kept apart from tools.py so that `agtail mcp` answers its handshake without loading the
brief's writer: agtaild.share is imported at the first call, not when the tools are listed.
The brief is masked as every exit masks (agtaild.share.redact).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agtaild.errors import UsageError

Call = Callable[[str, dict[str, Any]], Any]


def session_ref(value: str, tool: str) -> dict[str, str]:
    """``{"agent", "id"}`` of AGENT:ID, or ``{"id"}`` of an id (prefix) alone."""
    agent, sep, ident = value.strip().partition(":")
    if not sep:
        agent, ident = "", value.strip()
    if not ident or (sep and not agent):
        raise UsageError(f"{tool}: 'id' must be AGENT:ID as the other tools print it (or an id), got {value[:80]!r}")
    return {"agent": agent, "id": ident} if agent else {"id": ident}


def handoff_brief(call: Call, args: dict[str, Any], here: str | None) -> str:
    from agtaild.share.brief import build
    from agtaild.share.gather import open_session
    from agtaild.share.redact import Redactor

    ref = session_ref(args["id"], "handoff_brief")
    target: str | None = None
    if args.get("to"):
        from agtaild.adapters import get_adapter

        try:
            target = get_adapter(args["to"]).name
        except UsageError as err:
            raise UsageError(f"handoff_brief: argument 'to': {err.message}") from None
    shared = open_session(call, ref.get("agent", ""), ref["id"], collection=args.get("collection") or None)
    return build(shared, target=target, max_tokens=args["max_tokens"], redact=Redactor())
