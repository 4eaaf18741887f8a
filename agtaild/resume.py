"""How to resume a session with its own agent, or the sentence that says why it can't be.

The adapter knows the command (``claude --resume ID``, ``codex resume ID``, …) and the
directory to run it in (the session's first recorded cwd). Sessions read from the import
store came from another machine and sessions read from the archive were deleted by their
agent: the agent itself has no such session any more, so both are refused (exit 3, HTTP 409)
instead of starting an agent that would fail or, worse, start a fresh session.

``resume_command`` is the service method ``resume.command`` (JSON-RPC and REST).
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from agtaild.errors import Refused, bad_param
from agtaild.model import Session


def refusal(session: Session) -> str | None:
    """Why this session cannot be resumed here, or None."""
    ref = f"{session.agent}:{session.id}"
    if session.imported:
        where = f"collection {session.collection!r}" if session.collection else "another machine"
        return (
            f"{ref} was imported from {where}: its agent on this machine has no such session. "
            "Resume it on the machine it came from, or read it with `agtail show`"
        )
    if session.archived:
        return (
            f"{ref} is kept only in agtail's archive: {session.agent} deleted its own copy, so it "
            "cannot resume it. Read it with `agtail show`"
        )
    return None


def resume_for_session(doc: dict[str, Any] | Session) -> dict[str, Any]:
    """``{agent, id, cwd, cwd_exists, argv}`` for a session, or Refused with the reason."""
    from agtaild.adapters import get_adapter

    session = doc if isinstance(doc, Session) else msgspec.convert(doc, Session)
    why = refusal(session)
    if why is not None:
        raise Refused(why)
    adapter = get_adapter(session.agent)
    command = adapter.resume(session) if session.resumable else None
    if command is None:
        name = adapter.name or session.agent
        detail = "a subagent's transcript" if session.parent is not None else "this session"
        raise Refused(f"{name} has no command to resume {detail} ({session.agent}:{session.id})")
    check_argv(adapter, session, command.argv)
    cwd = command.cwd
    return {
        "agent": session.agent,
        "id": session.id,
        "cwd": cwd,
        "cwd_exists": bool(cwd) and os.path.isdir(cwd or ""),
        "argv": list(command.argv),
    }


def check_argv(adapter: Any, session: Session, argv: list[str]) -> None:
    """Refuse a command in which the session's own data could act as an option.

    The id (often a file name, chosen by whoever wrote the file) must fully match the
    adapter's ``resume_id_pattern``; and no argument made from the session (its id or path)
    may start with ``-``, whatever the adapter put around it."""
    ref = f"{session.agent}:{session.id}"
    if re.fullmatch(adapter.resume_id_pattern, session.id) is None:
        raise Refused(
            f"{ref!r} is not an id {adapter.name or session.agent} ever writes (expected "
            f"{adapter.resume_id_pattern}); refusing to pass it to the agent's command line. "
            "Read the session with `agtail show`"
        )
    from_session = {session.id, session.path or ""}
    for arg in argv[1:]:
        value = arg.partition("=")[2] if arg.startswith("--") and "=" in arg else arg
        if value in from_session and value.startswith("-"):
            raise Refused(f"{ref!r}: {value!r} would be read as an option by the agent; refusing to resume")


def resume_command(service: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Service method ``resume.command`` {agent?, id} → {agent, id, cwd, cwd_exists, argv}
    (without ``agent``, ``id`` is AGENT:ID or an id prefix unique across agents)."""
    agent, sid = params.get("agent"), params.get("id")
    if agent is not None and (not isinstance(agent, str) or not agent):
        raise bad_param("agent", "must be an agent id")
    if not isinstance(sid, str) or not sid:
        raise bad_param("id", "is required")
    doc = service.call("sessions.get", {"id": sid, **({"agent": agent} if agent else {})})
    return resume_for_session(doc["session"])
