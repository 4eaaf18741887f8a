"""Claude Code hook records → HookInfo (FORMATS.md §1.7).

Hooks show up in four shapes: ``attachment`` lines (``hook_success``,
``hook_additional_context``, ``hook_blocking_error``, ``hook_non_blocking_error`` …),
``progress`` lines with ``data.type == "hook_progress"``, ``system/stop_hook_summary``, and on
1.0.x typeless ``system`` lines ("Running PreToolUse:Bash…", "PostToolUse:Edit [cmd] completed
successfully: …"). The triggering tool is resolved by the caller through ``toolUseID``; the
``hookName`` suffix ("PreToolUse:Bash") is the fallback for tool hooks.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.claude.text import strip_ansi
from agtaild.model import HookInfo

#: Hook events whose ``hookName`` suffix is a tool name (for others it is a matcher/source).
TOOL_HOOK_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})

_LEGACY_RUNNING = re.compile(r"Running (\w+)(?::(\S+?))?\.\.\.\s*$")
_LEGACY_DONE = re.compile(
    r"(\w+)(?::(\S+))? \[(.*?)\] (completed|failed|returned|blocked|timed out|was cancelled)(.*)",
    re.S,
)


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        joined = "\n".join(str(v) for v in value if v)
        return joined or None
    return None


def tool_from_hook_name(event: Any, hook_name: Any) -> str | None:
    if type(event) is str and event in TOOL_HOOK_EVENTS and isinstance(hook_name, str) and ":" in hook_name:
        return hook_name.split(":", 1)[1] or None
    return None


def from_attachment(att: dict[str, Any]) -> HookInfo:
    event = att.get("hookEvent")
    command = att.get("command")
    blocking = att.get("blockingError")
    text: str | None
    if isinstance(blocking, dict):
        text = _text(blocking.get("blockingError"))
        command = command or blocking.get("command")
    elif isinstance(blocking, str):
        text = blocking or None
    else:
        text = _text(att.get("content")) or _text(att.get("stdout")) or _text(att.get("stderr"))
    return HookInfo(
        event=event if isinstance(event, str) else None,
        tool=tool_from_hook_name(event, att.get("hookName")),
        command=command if isinstance(command, str) else None,
        text=text,
    )


def from_progress(data: dict[str, Any]) -> HookInfo:
    event = data.get("hookEvent")
    command = data.get("command")
    return HookInfo(
        event=event if isinstance(event, str) else None,
        tool=tool_from_hook_name(event, data.get("hookName")),
        command=command if isinstance(command, str) else None,
    )


def from_stop_summary(obj: dict[str, Any]) -> list[HookInfo]:
    """One HookInfo per hook that ran (``hookInfos``), or one for the summary itself."""
    errors = obj.get("hookErrors")
    text = _text(obj.get("stopReason")) or _text(errors if isinstance(errors, list) else None)
    infos = obj.get("hookInfos")
    hooks = [
        HookInfo(event="Stop", command=info.get("command"), text=text)
        for info in (infos if isinstance(infos, list) else [])
        if isinstance(info, dict) and isinstance(info.get("command"), str)
    ]
    return hooks or [HookInfo(event="Stop", text=text)]


def from_legacy_system(content: str) -> HookInfo | None:
    """A 1.0.x typeless system line about a hook, or None when it is about something else."""
    clean = strip_ansi(content).strip()
    match = _LEGACY_RUNNING.match(clean)
    if match:
        event, matcher = match.group(1), match.group(2)
        return HookInfo(event=event, tool=matcher if event in TOOL_HOOK_EVENTS else None, text=clean)
    match = _LEGACY_DONE.match(clean)
    if match:
        event, matcher, command = match.group(1), match.group(2), match.group(3)
        return HookInfo(
            event=event,
            tool=matcher if event in TOOL_HOOK_EVENTS else None,
            command=command or None,
            text=clean,
        )
    return None
