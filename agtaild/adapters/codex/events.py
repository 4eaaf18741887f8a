"""`event_msg` payloads: the UI event stream Codex persists next to the model history.

Most of it repeats the history (user_message, agent_message, agent_reasoning; in 0.17x the
typed `item_completed` items), so it merges into events already emitted. The rest marks
turns (task_started / task_complete / turn_aborted), usage (token_count), compaction, titles
and errors. Streaming deltas and `*_begin` events are skipped on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agtaild.adapters.codex.emit import CodexParserBase, Line
from agtaild.adapters.codex.items import compaction, emit_thinking, output_result, reasoning_parts
from agtaild.adapters.codex.text import (
    IMAGE_PLACEHOLDER,
    as_dict,
    as_str,
    content_text,
    is_injected,
    msgpack_safe,
)
from agtaild.adapters.codex.usage import token_count_rows
from agtaild.adapters.kit.jsonl import Category

Handler = Callable[[CodexParserBase, Line, dict[str, Any]], Category]

_SKIPPED = frozenset({"agent_reasoning_section_break", "item_started", "item_updated", "plan_update"})
_METADATA = frozenset({"session_configured", "mcp_startup_complete", "mcp_list_tools_response", "thread_goal_set"})
_SYSTEM = frozenset(
    {"undo_completed", "undo_started", "entered_review_mode", "exited_review_mode", "background_event", "warning"}
)
_LIMIT_WORDS = ("usage limit", "usage_limit", "rate limit", "rate_limit", "quota")


def handle_event_msg(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    kind = payload.get("type")
    if not isinstance(kind, str):
        return p.emit_unknown(line, payload)
    handler = _HANDLERS.get(kind)
    if handler is not None:
        return handler(p, line, payload)
    if kind.endswith(("_delta", "_begin")) or kind in _SKIPPED:
        return "skipped"
    if kind in _METADATA:
        return "metadata"
    if kind in _SYSTEM:
        text = as_str(payload.get("message")) or as_str(payload.get("text"))
        return p.emit_system(line, text, kind)
    if kind.endswith("_end") or kind in ("collab_tool_call", "view_image_tool_call", "dynamic_tool_call_response"):
        merged = _merge_companion(p, as_str(payload.get("call_id")), extra={kind: _small(payload)})
        if merged:
            return merged
    return p.emit_unknown(line, payload)


def _small(payload: dict[str, Any]) -> dict[str, Any]:
    """A companion's fields minus the bulky ones already present on the call."""
    drop = ("type", "call_id", "stdout", "stderr", "formatted_output", "aggregated_output", "output")
    return {k: v for k, v in payload.items() if k not in drop}


def _merge_companion(
    p: CodexParserBase,
    call_id: str | None,
    *,
    result: Any = None,
    exit_code: int | None = None,
    failed: bool | None = None,
    extra: dict[str, Any] | None = None,
) -> Category | None:
    """Fold a record about a tool call (end event, completed item) into the call's event."""
    call = p.find_call(call_id)
    if call is None:
        return None
    if result is not None and call.result is None:
        call.result = result
    if exit_code is not None:
        call.extra["exit_code"] = exit_code
        call.is_error = exit_code != 0
    elif failed is not None and call.is_error is None:
        call.is_error = failed
    if extra:
        call.extra.update(extra)
    p.update_call(call)
    return "merged"


def _orphan_tool(p: CodexParserBase, line: Line, tool: str, data: Any, result: Any, code: int | None) -> Category:
    """A tool record whose call is not in this file: still a complete tool_use."""
    event = p.new_event(line, "tool_use", role="assistant", tool=tool, input=data, result=result)
    event.is_error = None if code is None else code != 0
    p.emit(event)
    return "events"


# -- text ------------------------------------------------------------------------------
def _user_message(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    text = as_str(payload.get("message")) or ""
    images = len(payload.get("images") or []) + len(payload.get("local_images") or [])
    if not text.strip() and images:
        text = IMAGE_PLACEHOLDER
    if not text.strip():
        return "skipped"
    if payload.get("kind") not in (None, "plain") or is_injected(text):
        return p.emit_system(line, text, "context", role="user")
    return p.emit_text(line, "user", text, extra={"images": images} if images else None)


def _agent_message(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    text = as_str(payload.get("message")) or ""
    if not text.strip():
        return "skipped"
    phase = as_str(payload.get("phase"))
    return p.emit_text(line, "assistant", text, extra={"phase": phase} if phase else None)


def _agent_reasoning(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    raw = payload.get("type") == "agent_reasoning_raw_content"
    return emit_thinking(p, line, reasoning_parts([payload.get("text")]), None, "raw" if raw else None)


# -- turns -----------------------------------------------------------------------------
def _turn_started(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    p.start_turn()
    p.st.turn_open = True
    return "metadata"


def _turn_complete(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    st = p.st
    st.turn_open = False
    error = payload.get("error")
    if not error:
        st.last_turn = "completed"
        return "metadata"
    text = error if isinstance(error, str) else as_str(as_dict(error).get("message")) or str(error)
    st.last_turn = "limit" if any(w in text.lower() for w in _LIMIT_WORDS) else "failed"
    return p.emit_system(line, text, "error", is_error=True)


def _turn_aborted(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    p.st.turn_open = False
    p.st.last_turn = "aborted"
    reason = as_str(payload.get("reason")) or "aborted"
    return p.emit_system(line, f"turn aborted: {reason}", "turn_aborted")


def _error(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    text = as_str(payload.get("message")) or str(payload)
    if any(w in text.lower() for w in _LIMIT_WORDS):
        p.st.last_turn = "limit"
    return p.emit_system(line, text, str(payload.get("type")), is_error=True)


def _rolled_back(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    turns = payload.get("num_turns")
    return p.emit_system(line, f"rolled back {turns} turn(s)", "thread_rolled_back")


def _thread_name(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    name = as_str(payload.get("thread_name"))
    writer = as_str(payload.get("thread_id"))
    if name and not line.copied and (writer is None or writer == p.st.thread_id):
        p.st.thread_name = name
    return "metadata"


def _settings(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    model = as_str(as_dict(payload.get("thread_settings")).get("model"))
    if model and not line.copied:
        p.st.model = model
    return "metadata"


def _token_count(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    limits = payload.get("rate_limits")
    if type(limits) is dict and not line.copied:
        # The newest rate-limit snapshot, as recorded (every field kept, known or not: a later
        # CLI adds some), with the line's time: `agtail top` shows it with its age. A copied
        # line is the parent thread's snapshot under a new time, so it is not this one's.
        p.st.session.extra["rate_limits"] = {"recorded_at": line.ts, "snapshot": msgpack_safe(limits)}
    total, last, model = token_count_rows(payload)
    return p.count_usage(line, total, last, model)


def _context_compacted(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    return compaction(p, line, None, {})


# -- tool companions -------------------------------------------------------------------
def _exec_end(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    call_id = as_str(payload.get("call_id"))
    output = payload.get("aggregated_output") or payload.get("formatted_output")
    if not output:
        output = "".join(s for s in (payload.get("stdout"), payload.get("stderr")) if isinstance(s, str))
    code = payload.get("exit_code") if isinstance(payload.get("exit_code"), int) else None
    merged = _merge_companion(p, call_id, result=output or None, exit_code=code, extra={"exec": _small(payload)})
    return merged or _orphan_tool(p, line, "exec_command", {"command": payload.get("command")}, output, code)


def _patch_end(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    success = payload.get("success")
    output = "".join(s for s in (payload.get("stdout"), payload.get("stderr")) if isinstance(s, str))
    failed = None if not isinstance(success, bool) else not success
    merged = _merge_companion(p, as_str(payload.get("call_id")), result=output or None, failed=failed)
    code = None if failed is None else int(failed)
    return merged or _orphan_tool(p, line, "apply_patch", payload.get("changes"), output, code)


def _mcp_end(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    """`result` is Rust's ``Result``: ``{"Ok": {content, isError}}`` or ``{"Err": message}``."""
    outcome = as_dict(payload.get("result"))
    if "Ok" in outcome:
        ok = as_dict(outcome["Ok"])
        result: Any = content_text(ok.get("content"))
        code: int | None = 1 if ok.get("isError") is True else 0
    elif "Err" in outcome:
        result, code = outcome["Err"], 1
    else:
        result, code, _ = output_result(payload.get("result"))
    invocation = as_dict(payload.get("invocation"))
    failed = None if code is None else code != 0
    merged = _merge_companion(p, as_str(payload.get("call_id")), result=result, failed=failed, extra={"mcp": invocation})
    tool = f"mcp__{invocation.get('server')}__{invocation.get('tool')}"
    return merged or _orphan_tool(p, line, tool, invocation.get("arguments"), result, code)


def _image_end(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    merged = _merge_companion(p, as_str(payload.get("call_id")), extra={"image": _small(payload)})
    return merged or _orphan_tool(p, line, "image_generation", {"revised_prompt": payload.get("revised_prompt")}, None, None)


# -- 0.17x item_completed --------------------------------------------------------------
def _item_completed(p: CodexParserBase, line: Line, payload: dict[str, Any]) -> Category:
    item = as_dict(payload.get("item"))
    kind = item.get("type")
    item_id = as_str(item.get("id"))
    if kind == "UserMessage":
        text = content_text(item.get("content"))
        if not text.strip():
            return "skipped"
        if is_injected(text):
            return p.emit_system(line, text, "context", role="user")
        return p.emit_text(line, "user", text)
    if kind == "AgentMessage":
        text = content_text(item.get("content"))
        return p.emit_text(line, "assistant", text, uuid=item_id) if text.strip() else "skipped"
    if kind == "Reasoning":
        summary = emit_thinking(p, line, reasoning_parts(item.get("summary_text")), item_id, None)
        raw = reasoning_parts(item.get("raw_content"))
        return emit_thinking(p, line, raw, item_id, "raw") if raw and summary != "events" else summary
    if kind == "ContextCompaction":
        return compaction(p, line, None, {})
    if kind == "Plan":
        return p.emit_system(line, as_str(item.get("text")), "plan")
    return _tool_item(p, line, item, str(kind))


def _tool_item(p: CodexParserBase, line: Line, item: dict[str, Any], kind: str) -> Category:
    """CommandExecution, FileChange, CollabAgentToolCall, … carry the call_id as their id."""
    status = as_str(item.get("status"))
    failed = None if status is None else status in ("failed", "declined")
    details = {k: v for k, v in item.items() if k not in ("type", "id", "aggregated_output", "stdout", "stderr")}
    if kind == "CommandExecution":
        output = item.get("aggregated_output")
        code = item.get("exit_code") if isinstance(item.get("exit_code"), int) else None
        merged = _merge_companion(p, as_str(item.get("id")), result=output, exit_code=code, failed=failed,
                                  extra={"command_execution": details})
        return merged or _orphan_tool(p, line, "exec_command", {"command": item.get("command")}, output, code)
    if kind == "FileChange":
        output = item.get("stdout")
        merged = _merge_companion(p, as_str(item.get("id")), result=output, failed=failed,
                                  extra={"files": sorted(as_dict(item.get("changes")))})
        return merged or _orphan_tool(p, line, "apply_patch", item.get("changes"), output, int(bool(failed)))
    merged = _merge_companion(p, as_str(item.get("id")), failed=failed, extra={kind: details})
    return merged or p.emit_unknown(line, {"type": "item_completed", "item": item})


_HANDLERS: dict[str, Handler] = {
    "user_message": _user_message,
    "agent_message": _agent_message,
    "agent_reasoning": _agent_reasoning,
    "agent_reasoning_raw_content": _agent_reasoning,
    "task_started": _turn_started,
    "turn_started": _turn_started,
    "task_complete": _turn_complete,
    "turn_complete": _turn_complete,
    "turn_aborted": _turn_aborted,
    "error": _error,
    "stream_error": _error,
    "thread_rolled_back": _rolled_back,
    "thread_name_updated": _thread_name,
    "thread_settings_applied": _settings,
    "token_count": _token_count,
    "context_compacted": _context_compacted,
    "exec_command_end": _exec_end,
    "patch_apply_end": _patch_end,
    "mcp_tool_call_end": _mcp_end,
    "image_generation_end": _image_end,
    "item_completed": _item_completed,
}
