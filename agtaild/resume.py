"""How to resume a session with its own agent, or the sentence that says why it can't be.

The adapter knows the command (``claude --resume=ID``, ``codex resume -- ID``, …) and the
directory to run it in (the session's first recorded cwd). Sessions read from the import
store came from another machine and sessions read from the archive were deleted by their
agent: the agent itself has no such session any more, so both are refused (exit 3, HTTP 409)
instead of starting an agent that would fail or, worse, start a fresh session. So is a
recorded directory that is not an absolute path (``relsub``, ``-rf``): it would be taken from
wherever agtail runs, and the agent would work there.

``resume_command`` is the service method ``resume.command`` (JSON-RPC and REST).
:func:`verified_resume` is what `agtail resume` and `pick` run: a command built by this
process's own adapter, never an argv a daemon or server answered (AGTAIL_SERVER may name any
machine, and whoever runs it would choose the program).
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from agtaild.errors import Refused, bad_param
from agtaild.model import Session


def _export_service(agent: str) -> str | None:
    """The service whose data export this agent's sessions come from (`agtail import`), else None."""
    from agtaild.adapters import all_adapters

    for adapter in all_adapters():
        if adapter.id == agent:
            return adapter.name if adapter.export_service else None
    return None


def refusal(session: Session) -> str | None:
    """Why this session cannot be resumed here, or None."""
    ref = f"{session.agent}:{session.id}"
    service = _export_service(session.agent)
    if service is not None:
        where = f" (collection {session.collection!r})" if session.collection else ""
        return (
            f"{ref} was imported from a {service} data export{where}: the conversation lives on the "
            "service, and nothing on this machine resumes it. Read it with `agtail show`"
        )
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
    cwd = command.cwd or None
    if cwd is not None and not os.path.isabs(cwd):
        import shlex

        raise Refused(
            f"{session.agent}:{session.id} recorded its directory as {cwd!r}, which is not an absolute path: "
            "it would be taken from wherever agtail runs, so agtail does not resume it. Go to the "
            f"session's project yourself and run: {shlex.join(command.argv)}"
        )
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


def verified_resume(backend: Any, ref: dict[str, Any]) -> dict[str, Any]:
    """The command to resume AGENT:ID, as THIS process's adapter builds it from the session's
    document, for `agtail resume` and `pick` to run.

    Whoever answers (the embedded index, the local daemon, a server named by AGTAIL_SERVER)
    is asked ``resume.command`` first, so that its refusals stand (imported, archived, another
    machine's session on a team server), then ``sessions.get``. The command is built here from
    that document, under the same rules as everywhere (the id's pattern, nothing from the
    session that looks like an option, an absolute directory); an answer whose argv or
    directory is not exactly that command is refused, and its argv never run."""
    asked = f"{ref.get('agent') or '?'}:{ref.get('id')}"
    answer = backend.call("resume.command", ref)
    if not isinstance(answer, dict) or not isinstance(answer.get("id"), str) or not isinstance(answer.get("agent"), str):
        raise Refused(f"the answer to resume.command for {asked} is not one agtail gives: refusing to resume")
    agent = answer["agent"]
    if ref.get("agent") and agent != ref["agent"]:
        raise Refused(f"the answer to resume.command for {asked} names another agent ({agent}): refusing to resume")
    doc = backend.call("sessions.get", {"agent": agent, "id": answer["id"]})
    session = doc.get("session") if isinstance(doc, dict) else None
    if not isinstance(session, dict) or session.get("agent") != agent or session.get("id") != answer["id"]:
        raise Refused(f"the session document for {agent}:{answer['id']} is not that session's: refusing to resume")
    try:
        local = resume_for_session(session)
    except (msgspec.ValidationError, TypeError) as err:
        raise Refused(f"the session document for {agent}:{answer['id']} is not one agtail understands ({err}): "
                      "refusing to resume") from None
    theirs = (answer.get("argv"), answer.get("cwd") or None)
    if theirs != (local["argv"], local["cwd"]):
        raise Refused(
            f"{agent}:{local['id']}: the daemon answered the command {theirs[0]!r} in {theirs[1]!r}, but this "
            f"agtail builds {local['argv']!r} in {local['cwd']!r} for that session; agtail runs only a command it "
            "built itself (is the daemon or server another version of agtail, or not agtail?)"
        )
    return local


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
