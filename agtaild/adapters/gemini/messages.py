"""Gemini CLI message records → agtail events (pure functions, no state).

A ``MessageRecord`` (``packages/core/src/services/chatRecordingTypes.ts``) is
``{id, timestamp, type, content, displayContent?}``; ``gemini`` records add ``thoughts``,
``tokens``, ``model`` and ``toolCalls`` (each call carries its own result). ``content`` is a
string or a list of Gemini API parts (``text`` — with ``thought: true`` for thought
summaries —, ``functionCall``, ``functionResponse``, ``inlineData``, ``fileData``).

Since 0.44 every tool result is *also* written as a ``user`` record that holds only
``functionResponse`` parts. Those are not things the person typed: the replay drops them
when the call already carries the result, and otherwise they become ``tool_result`` events.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.tool_edits import gemini_edit
from agtaild.model import Event, Usage, UsageRecord

#: The environment context Gemini CLI injects as the first "user" message of a session.
CONTEXT_PREFIX = "<session_context>"
#: The ``type`` of a model message: Gemini CLI writes "gemini", its fork Qwen Code's older
#: JSON checkpoints "qwen" (read by the Qwen adapter through the same replay), its fork
#: Tabnine CLI "tabnine" (read by the Tabnine adapter through the same replay). A tuple: `in`
#: compares, so an unhashable type is no error.
MODEL_RECORD_TYPES = ("gemini", "qwen", "tabnine")
#: Tool call states after which the call is over (the scheduler's terminal states).
FINAL_STATUSES = frozenset({"success", "error", "cancelled"})
_WORKSPACE_RE = re.compile(r"Workspace Directories:\**\s*\n\s*-\s+(\S[^\n]*)")
_OLD_CWD_RE = re.compile(r"I'm currently working in the directory:\s*(\S[^\n]*)")


def parts_of(content: Any) -> list[Any]:
    """``content`` as a list of parts: a bare string is one text part."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return content
    if isinstance(content, dict):
        return [content]
    return []


def plain_text(content: Any, *, thoughts: bool = False) -> str:
    """The joined text parts (thought parts only when ``thoughts``)."""
    out = []
    for part in parts_of(content):
        is_text = isinstance(part, dict) and isinstance(part.get("text"), str)
        if is_text and bool(part.get("thought")) == thoughts:
            out.append(part["text"])
    return "\n".join(t for t in out if t)


def function_responses(content: Any) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for p in parts_of(content)
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def is_tool_response_record(rec: dict[str, Any]) -> bool:
    """A ``user`` record that only carries function responses (never typed by a person)."""
    parts = parts_of(rec.get("content"))
    return bool(parts) and all(isinstance(p, dict) and "functionResponse" in p for p in parts)


def is_context_record(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "user" and plain_text(rec.get("content")).lstrip().startswith(CONTEXT_PREFIX)


def context_cwd(rec: dict[str, Any]) -> str | None:
    """The first workspace directory named in an injected ``<session_context>`` message."""
    text = plain_text(rec.get("content"))
    m = _WORKSPACE_RE.search(text) or _OLD_CWD_RE.search(text)
    return m.group(1).strip() if m else None


def response_result(resp: dict[str, Any]) -> tuple[Any, bool]:
    """(result, is_error) of one ``functionResponse``: ``response.output`` or ``.error``."""
    body = resp.get("response")
    if isinstance(body, dict):
        if "error" in body and body["error"] not in (None, ""):
            return body["error"], True
        if "output" in body:
            return body["output"], False
        return body, False
    return body, False


def call_result(call: dict[str, Any]) -> tuple[Any, bool | None]:
    """(result, is_error) of a ``ToolCallRecord``; (None, None) while it has no result."""
    result = call.get("result")
    status = call.get("status")
    values: list[Any] = []
    is_error = status == "error"
    for resp in function_responses(result):
        value, err = response_result(resp)
        values.append(value)
        is_error = is_error or err
    if not values:
        if isinstance(result, str | int | float) and result != "":
            return result, is_error
        if status in FINAL_STATUSES and status != "success":
            return call.get("resultDisplay") or status, True
        return None, None
    return (values[0] if len(values) == 1 else values), is_error


def call_has_result(call: dict[str, Any]) -> bool:
    return call_result(call)[1] is not None


def tool_calls(rec: dict[str, Any]) -> list[dict[str, Any]]:
    calls = rec.get("toolCalls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def usage_of(tokens: Any) -> Usage | None:
    """Gemini's per-message ``tokens`` in the Anthropic convention.

    Gemini's ``input`` (promptTokenCount) includes the cached tokens, so input = input −
    cached (+ ``tool``, the tool-use prompt, which Gemini counts beside the prompt); cached →
    cache read; ``thoughts`` are reasoning and part of output.
    """
    if not isinstance(tokens, dict):
        return None

    def n(key: str) -> int:
        v = tokens.get(key)
        return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else 0

    cached = n("cached")
    thoughts = n("thoughts")
    usage = Usage(
        input_tokens=max(n("input") - cached, 0) + n("tool"),
        output_tokens=n("output") + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    ).fix_total()
    return None if usage.is_zero() else usage


def usage_record(rec: dict[str, Any]) -> UsageRecord | None:
    usage = usage_of(rec.get("tokens"))
    if usage is None or not isinstance(rec.get("id"), str):
        return None
    model = rec.get("model") if isinstance(rec.get("model"), str) else None
    return UsageRecord(key=rec["id"], ts=norm_iso(rec.get("timestamp")), model=model, usage=usage)


def _thinking_text(rec: dict[str, Any]) -> str:
    thoughts = rec.get("thoughts")
    if isinstance(thoughts, list) and thoughts:
        out = []
        for t in thoughts:
            if not isinstance(t, dict):
                continue
            subject = str(t["subject"]) if isinstance(t.get("subject"), str) else ""
            desc = str(t["description"]) if isinstance(t.get("description"), str) else ""
            line = (f"**{subject}** " if subject else "") + desc
            if line.strip():
                out.append(line.strip())
        return "\n\n".join(out)
    return plain_text(rec.get("content"), thoughts=True).strip()


class _EventMaker:
    """Events of one record share its timestamp, id and source position."""

    def __init__(self, rec: dict[str, Any], line: int) -> None:
        self.ts = norm_iso(rec.get("timestamp"))
        self.uuid = rec.get("id") if isinstance(rec.get("id"), str) else None
        self.line = line

    def __call__(self, kind: str, **kw: Any) -> Event:
        ts = kw.pop("ts", self.ts)
        return Event(seq=-1, kind=kind, ts=ts, uuid=self.uuid, source={"line": self.line}, **kw)


def record_events(rec: dict[str, Any], line: int, *, drop_calls: frozenset[str] = frozenset()) -> list[Event]:
    """The events of one message record, in order (seqs left at -1 for the caller).

    ``drop_calls`` are function-response call ids already merged into their tool call;
    ``line`` is the source position (JSONL line, or message index for a JSON document).
    """
    kind = rec.get("type")
    ev = _EventMaker(rec, line)
    if kind == "user":
        return _user_events(rec, ev, drop_calls)
    if kind in MODEL_RECORD_TYPES:
        return _gemini_events(rec, ev)
    if kind in ("info", "warning", "error"):
        content = rec.get("content")
        text = plain_text(content) or (content if isinstance(content, str) else "")
        is_error: bool | None = True if kind == "error" else None
        return [ev("system", role="system", subtype=kind, text=text, is_error=is_error)]
    return [ev("unknown", raw=rec)]


def _user_events(rec: dict[str, Any], ev: _EventMaker, drop_calls: frozenset[str]) -> list[Event]:
    content = rec.get("content")
    if is_context_record(rec):
        return [ev("system", role="user", subtype="context", text=plain_text(content))]
    out: list[Event] = []
    text = plain_text(content)
    if text:
        out.append(ev("text", role="user", text=text))
    out.extend(_call_events(content, ev))
    for resp in function_responses(content):
        call_id = resp.get("id") if isinstance(resp.get("id"), str) else None
        if call_id is not None and call_id in drop_calls:
            continue
        result, is_error = response_result(resp)
        name = resp.get("name") if isinstance(resp.get("name"), str) else None
        out.append(
            ev("tool_result", role="user", tool=name, result=result, is_error=is_error, tool_use_id=call_id)
        )
    return out


def _gemini_events(rec: dict[str, Any], ev: _EventMaker) -> list[Event]:
    out: list[Event] = []
    model = rec.get("model") if isinstance(rec.get("model"), str) else None
    thinking = _thinking_text(rec)
    if thinking:
        out.append(ev("thinking", role="assistant", text=thinking, model=model))
    text = plain_text(rec.get("content"))
    if text:
        out.append(ev("text", role="assistant", text=text, model=model))
    calls = tool_calls(rec)
    for call in calls:
        result, is_error = call_result(call)
        extra: dict[str, Any] = {}
        if isinstance(call.get("status"), str):
            extra["status"] = call["status"]
        if isinstance(call.get("agentId"), str):
            extra["subagent_id"] = call["agentId"]
        edit = gemini_edit(call.get("name"), call.get("args"), call)
        if edit is not None:
            extra["edit"] = edit
        out.append(
            ev(
                "tool_use",
                ts=norm_iso(call.get("timestamp")) or ev.ts,
                role="assistant",
                tool=call.get("name") if isinstance(call.get("name"), str) else None,
                input=call.get("args"),
                result=result,
                is_error=is_error,
                model=model,
                tool_use_id=call.get("id") if isinstance(call.get("id"), str) else None,
                extra=extra,
            )
        )
    if not calls:
        out.extend(_call_events(rec.get("content"), ev, model=model))
    usage = usage_of(rec.get("tokens"))
    if usage is not None and out:
        primary = next((e for e in out if e.kind == "text"), out[0])
        primary.usage = usage
    return out


def _call_events(content: Any, ev: _EventMaker, *, model: str | None = None) -> list[Event]:
    """``functionCall`` parts (history rebuilt from the model's context has no toolCalls)."""
    out = []
    for part in parts_of(content):
        if isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
            fc = part["functionCall"]
            out.append(
                ev(
                    "tool_use",
                    role="assistant",
                    tool=fc.get("name") if isinstance(fc.get("name"), str) else None,
                    input=fc.get("args"),
                    model=model,
                    tool_use_id=fc.get("id") if isinstance(fc.get("id"), str) else None,
                )
            )
    return out


def message_role(rec: dict[str, Any]) -> str:
    """How a record counts for the session: "prompt", "reply", "tool", "context" or "other"."""
    kind = rec.get("type")
    if kind in MODEL_RECORD_TYPES:
        return "reply"
    if kind == "user":
        if is_context_record(rec):
            return "context"
        if is_tool_response_record(rec):
            return "tool"
        return "prompt" if plain_text(rec.get("content")) else "other"
    return "other"


def open_ending(rec: dict[str, Any]) -> bool:
    """True when a session that stops at this record stopped mid-turn: a prompt or a tool
    result the model never answered, or tool calls whose results the model never saw (a
    turn ends with a reply without tool calls — or, in a subagent, with ``complete_task``)."""
    role = message_role(rec)
    if role in ("prompt", "tool"):
        return True
    if role == "reply":
        calls = tool_calls(rec)
        if calls:
            last = calls[-1]
            return not (last.get("name") == "complete_task" and last.get("status") == "success")
        # An empty reply is the first write of a response whose tool calls never got written
        # (they are recorded on completion: a kill during the tool leaves exactly this).
        return not plain_text(rec.get("content"))
    return False
