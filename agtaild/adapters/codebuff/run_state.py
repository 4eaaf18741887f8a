"""What Codebuff's ``run-state.json`` (the SDK's RunState) adds to a chat.

``{sessionState: {fileContext: {projectRoot, cwd, …}, mainAgentState: {agentId, agentType,
messageHistory, creditsUsed, subagents, …}}, output: {type: structuredOutput|lastMessage|
allMessages|error, message?}}`` (``sdk/src/run-state.ts``, ``common/src/types/session-state.ts``).
Only its working directory, its last output's kind and the credits it used are read: the
transcript itself is the chat's messages.
"""

from __future__ import annotations

from typing import Any

import msgspec


class RunStateFacts(msgspec.Struct):
    project_root: str | None = None
    cwd: str | None = None
    #: The last run's output type (``error`` when it failed).
    output: str | None = None
    error: str | None = None
    credits_used: float | None = None
    agent_type: str | None = None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def facts_of(doc: Any) -> RunStateFacts | None:
    """The facts of a decoded run state, or None when it is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("sessionState"), dict):
        return None
    session = doc["sessionState"]
    context = _dict(session.get("fileContext"))
    main = _dict(session.get("mainAgentState"))
    output = _dict(doc.get("output"))
    credits = main.get("creditsUsed")
    return RunStateFacts(
        project_root=_str(context.get("projectRoot")),
        cwd=_str(context.get("cwd")),
        output=_str(output.get("type")),
        error=_str(output.get("message")) if output.get("type") == "error" else None,
        credits_used=float(credits)
        if isinstance(credits, int | float) and not isinstance(credits, bool)
        else None,
        agent_type=_str(main.get("agentType")),
    )
