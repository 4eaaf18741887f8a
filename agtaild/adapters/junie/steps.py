"""Junie's blocks (``SessionA2uxEvent.event.agentEvent`` kinds ending in ``BlockUpdatedEvent``,
and the ask/choice requests) → one event per ``stepId``.

Junie sends a block again each time it changes (``IN_PROGRESS`` → ``COMPLETED`` / ``FAILED``
…) and once more, unchanged, when the task completes; the first line of a step makes its
event and every later line with the same ``stepId`` updates that event in place (the parser
re-emits it under the same seq). A ``ToolBlockUpdatedEvent`` shares its ``stepId`` with the
``ViewFilesBlockUpdatedEvent`` it labels, so it only adds its label to that event.
"""

from __future__ import annotations

import json
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.model import Event

#: agentEvent kind → (event kind, tool name) for the blocks mapped as events.
BLOCKS: dict[str, tuple[str, str | None]] = {
    "AgentThoughtBlockUpdatedEvent": ("thinking", None),
    "ResultBlockUpdatedEvent": ("text", None),
    "MarkdownBlockUpdatedEvent": ("text", None),
    "TerminalBlockUpdatedEvent": ("tool_use", "terminal"),
    "FileChangesBlockUpdatedEvent": ("tool_use", "file_changes"),
    "ViewFilesBlockUpdatedEvent": ("tool_use", "view_files"),
    "ToolBlockUpdatedEvent": ("tool_use", "tool"),
    "McpBlockUpdatedEvent": ("tool_use", "mcp"),
    "TestRunBlockUpdatedEvent": ("tool_use", "test_run"),
    "CustomAgentBlockUpdatedEvent": ("tool_use", "custom_agent"),
    "AskRequestUpdatedEvent": ("tool_use", "ask_user"),
    "ChoiceRequestUpdatedEvent": ("tool_use", "ask_user"),
    "AskAsyncRequestUpdatedEvent": ("tool_use", "ask_user"),
}
#: Block states that end a step, and whether they mean it failed.
FINAL = {
    "COMPLETED": False,
    "FINISHED": False,
    "FAILED": True,
    "CANCELED": True,
    "CANCELLED": True,
    "REJECTED": True,
}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _json_text(value: Any) -> Any:
    """MCP arguments are pretty-printed JSON text: decoded where they decode."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _paths(items: Any, key: str) -> list[str]:
    if not isinstance(items, list):
        return []
    return [i[key] for i in items if isinstance(i, dict) and isinstance(i.get(key), str)]


def file_edit(changes: Any) -> dict[str, Any] | None:
    """A FileChanges block's ``changes`` (``beforeContent``/``afterContent`` texts and relative
    paths) as ``extra.edit``: no before → create, no after → delete."""
    if not isinstance(changes, list):
        return None
    files = []
    for change in changes:
        if not isinstance(change, dict):
            continue
        before = change.get("beforeContent") if isinstance(change.get("beforeContent"), dict) else None
        after = change.get("afterContent") if isinstance(change.get("afterContent"), dict) else None
        path = _str(change.get("afterRelativePath")) or _str(change.get("beforeRelativePath"))
        old = before.get("text") if before is not None else ""
        new = after.get("text") if after is not None else ""
        op = "create" if before is None else "delete" if after is None else "update"
        files.append(edits.from_texts(path, old, new, op=op))
    return edits.edit_doc(files)


def _input(kind: str, ae: dict[str, Any]) -> Any:
    if kind == "TerminalBlockUpdatedEvent":
        return {"command": ae.get("command")}
    if kind == "FileChangesBlockUpdatedEvent":
        changes = ae.get("changes")
        return {"files": _paths(changes, "afterRelativePath") or _paths(changes, "beforeRelativePath")}
    if kind == "ViewFilesBlockUpdatedEvent":
        return {"files": _paths(ae.get("files"), "relativePath")}
    if kind == "ToolBlockUpdatedEvent":
        return {k: ae[k] for k in ("text", "toolCall") if k in ae}
    if kind == "McpBlockUpdatedEvent":
        return _json_text(ae.get("input") if "input" in ae else ae.get("details"))
    if kind in ("TestRunBlockUpdatedEvent", "CustomAgentBlockUpdatedEvent"):
        return {"name": ae.get("name")}
    if kind == "AskRequestUpdatedEvent":
        return ae.get("askRequest")
    if kind == "ChoiceRequestUpdatedEvent":
        return {
            "title": ae.get("title"),
            **(ae["choiceRequest"] if isinstance(ae.get("choiceRequest"), dict) else {}),
        }
    if kind == "AskAsyncRequestUpdatedEvent":
        return {k: ae[k] for k in ("title", "question", "request") if k in ae}
    return None


def new_step(kind: str, ae: dict[str, Any], **fields: Any) -> Event:
    """The event of a step's first line."""
    event_kind, tool = BLOCKS[kind]
    if kind == "McpBlockUpdatedEvent":
        tool = _str(ae.get("toolName")) or tool
    ev = Event(
        seq=-1, kind=event_kind, role="assistant", tool=tool, tool_use_id=_str(ae.get("stepId")), **fields
    )
    if event_kind == "tool_use":
        ev.input = _input(kind, ae)
    update_step(ev, kind, ae)
    return ev


def update_step(ev: Event, kind: str, ae: dict[str, Any]) -> None:
    """Apply one line of a step to its event (the first line too)."""
    if kind == "ToolBlockUpdatedEvent" and ev.tool not in (None, "tool"):
        label = _str(ae.get("text"))
        if label:
            ev.extra["label"] = label
        return
    if kind == "ViewFilesBlockUpdatedEvent" and ev.tool == "tool":
        ev.extra["label"] = (ev.input or {}).get("text") if isinstance(ev.input, dict) else None
        ev.tool, ev.input = "view_files", _input(kind, ae)
    status = _str(ae.get("status"))
    if status:
        ev.extra["status"] = status
    details = _str(ae.get("details"))
    if kind == "AgentThoughtBlockUpdatedEvent" or kind == "MarkdownBlockUpdatedEvent":
        ev.text = _str(ae.get("text")) or ev.text
        return
    if kind == "ResultBlockUpdatedEvent":
        ev.text = _str(ae.get("result")) or ev.text
        for key in ("title", "errorCode"):
            if _str(ae.get(key)):
                ev.extra[key] = ae[key]
        if ae.get("cancelled") is True:
            ev.extra["cancelled"] = True
        changed = _paths(ae.get("changes"), "afterRelativePath") or _paths(
            ae.get("changes"), "beforeRelativePath"
        )
        if changed:
            ev.extra["changed_files"] = changed  # the task's changes restated: not edits of their own
        return
    if kind == "TerminalBlockUpdatedEvent":
        output = ae.get("output") if isinstance(ae.get("output"), str) else ae.get("presentableOutput")
        if isinstance(output, str):
            ev.result = output
        if details:
            ev.extra["details"] = details
    elif kind == "FileChangesBlockUpdatedEvent":
        edit = file_edit(ae.get("changes"))
        if edit is not None:
            ev.extra["edit"] = edit
        if details:
            ev.result = details
    elif kind == "McpBlockUpdatedEvent":
        if status in FINAL and details:
            ev.result = details
    elif details:
        ev.result = details
    if kind in ("AskRequestUpdatedEvent", "ChoiceRequestUpdatedEvent", "AskAsyncRequestUpdatedEvent"):
        answer = ae.get("answer") or ae.get("response")
        if answer is not None:
            ev.result = answer
    if kind == "CustomAgentBlockUpdatedEvent" and _str(ae.get("name")):
        ev.extra["subagent"] = ae["name"]
    if status in FINAL:
        ev.is_error = FINAL[status]
