"""Qwen Code's ``ui_telemetry`` records → events and usage (see agtaild.adapters.qwen.parser).

The main agent's ``qwen-code.api_response`` / ``qwen-code.tool_call`` telemetry repeats what
its assistant and tool_result records say: bookkeeping. A subagent's (``subagent_name``, or a
``prompt_id`` of ``<sessionId>#<name>-<rand>#<n>``) is the only record of its work: its
answers become ``sidechain`` text, its tool calls ``sidechain`` tool uses, and its token counts
usage records. ``qwen-code.api_error`` is an error event (and, in the main agent, the ending).
"""

from __future__ import annotations

from typing import Any, Protocol

from agtaild.adapters.kit.jsonl import Category
from agtaild.adapters.qwen.records import QwenState, as_str, stamp, subagent_of, telemetry_usage
from agtaild.model import Event, Usage


class TelemetryParser(Protocol):
    """What a telemetry record needs of the parser (agtaild.adapters.qwen.parser.QwenParser)."""

    ts: str | None
    st: QwenState

    def emit(self, event: Event) -> Event: ...

    def event(self, obj: dict[str, Any], line: int, kind: str, **fields: Any) -> Event: ...

    def count_usage(self, key: str, ts: str | None, model: str | None, usage: Usage) -> None: ...


def telemetry(parser: TelemetryParser, obj: dict[str, Any], line: int, payload: Any) -> Category:
    ui = payload.get("uiEvent") if isinstance(payload, dict) else None
    if not isinstance(ui, dict):
        return "metadata"  # an empty telemetry record: nothing to show
    name = ui.get("event.name")
    sub = as_str(ui.get("subagent_name")) or subagent_of(ui.get("prompt_id"))
    ts = stamp(ui.get("event.timestamp")) or parser.ts
    if name == "qwen-code.api_error":
        text = as_str(ui.get("error_message")) or as_str(ui.get("error")) or "API error"
        extra: dict[str, Any] = {k: ui[k] for k in ("error_type", "status_code", "model") if k in ui}
        if sub:
            extra["subagent"] = sub
        parser.emit(
            parser.event(
                obj,
                line,
                "system",
                role="system",
                subtype="api_error",
                text=text,
                is_error=True,
                sidechain=bool(sub),
                extra=extra,
            )
        )
        if not sub:
            parser.st.last = "error"
        return "events"
    if not sub:
        if name in ("qwen-code.api_response", "qwen-code.tool_call"):
            return "metadata"
        parser.emit(parser.event(obj, line, "unknown", subtype=as_str(name), raw=obj))
        return "events"
    extra = {"subagent": sub, "prompt_id": ui.get("prompt_id")}
    spawner = _spawning_call(parser)
    if spawner is not None:
        extra["parent_tool_use_id"] = spawner
    if name == "qwen-code.api_response":
        model = as_str(ui.get("model"))
        usage = telemetry_usage(ui)
        key = as_str(ui.get("response_id")) or as_str(obj.get("uuid"))
        if usage is not None and key:
            parser.count_usage(key, ts, model, usage)
        reply = as_str(ui.get("response_text"))
        if not reply:
            return "metadata"
        parser.emit(
            parser.event(
                obj,
                line,
                "text",
                ts=ts,
                role="assistant",
                text=reply,
                model=model,
                usage=usage,
                sidechain=True,
                extra=extra,
            )
        )
        return "events"
    if name == "qwen-code.tool_call":
        status = as_str(ui.get("status"))
        is_error = status is not None and status != "success"
        parser.st.subagent_calls += 1
        parser.emit(
            parser.event(
                obj,
                line,
                "tool_use",
                ts=ts,
                role="assistant",
                tool=as_str(ui.get("function_name")),
                input=ui.get("function_args"),
                result=ui.get("error") if is_error else status,
                is_error=is_error,
                tool_use_id=as_str(ui.get("call_id")),
                sidechain=True,
                extra=extra,
            )
        )
        return "events"
    parser.emit(parser.event(obj, line, "unknown", subtype=as_str(name), raw=obj, sidechain=True))
    return "events"


#: The tools that run a subagent (Qwen's ``agent``; ``task`` in older versions).
SUBAGENT_TOOLS = frozenset({"agent", "task"})


def _spawning_call(parser: TelemetryParser) -> str | None:
    """The subagent tool call still waiting for its result (the subagent runs inside it)."""
    for call_id, ev in reversed(parser.st.pending.items()):
        if ev.tool in SUBAGENT_TOOLS:
            return call_id
    return None
