"""Qwen Code record fields → agtail values (pure functions, no state): token counts,
subagent names, tool-result details. Used by :mod:`agtaild.adapters.qwen.parser`."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.kit.jsonl import ParserState
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.model import Event, Usage

_NORMAL_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

#: Text parts Qwen adds to a prompt from a UserPromptSubmit hook (not typed by the person).
HOOK_PREFIX = "<qwen:"


def stamp(value: Any) -> str | None:
    """A record's timestamp in the index's form. Qwen already writes that form (JavaScript's
    ``toISOString``), so it is taken as is when it matches; anything else is normalised."""
    if isinstance(value, str) and len(value) == 24 and _NORMAL_ISO.fullmatch(value):
        return value
    return norm_iso(value)


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def usage_from_counts(prompt: int, candidates: int, thoughts: int, cached: int, total: int) -> Usage | None:
    """Qwen's counts (OpenAI-style: the prompt includes cached tokens) in the Anthropic
    convention. Reasoning is inside ``candidates`` when prompt + candidates == total (what
    the OpenAI-compatible path writes); otherwise it is added to the output."""
    output = candidates if total and prompt + candidates == total else candidates + thoughts
    usage = Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    ).fix_total()
    return None if usage.is_zero() else usage


def usage_metadata(meta: Any) -> Usage | None:
    if not isinstance(meta, dict):
        return None
    return usage_from_counts(
        as_count(meta.get("promptTokenCount")),
        as_count(meta.get("candidatesTokenCount")),
        as_count(meta.get("thoughtsTokenCount")),
        as_count(meta.get("cachedContentTokenCount")),
        as_count(meta.get("totalTokenCount")),
    )


def telemetry_usage(ev: dict[str, Any]) -> Usage | None:
    return usage_from_counts(
        as_count(ev.get("input_token_count")),
        as_count(ev.get("output_token_count")),
        as_count(ev.get("thoughts_token_count")),
        as_count(ev.get("cached_content_token_count")),
        as_count(ev.get("total_token_count")),
    )


def subagent_of(prompt_id: Any) -> str | None:
    """``<sessionId>#<subagent>-<rand>#<n>`` → ``<subagent>`` (main prompts have no ``#``)."""
    if not isinstance(prompt_id, str) or prompt_id.count("#") < 2:
        return None
    name = prompt_id.split("#")[1]
    return name.rsplit("-", 1)[0] if "-" in name else name or None


def is_hook_part(part: Any) -> bool:
    return (
        isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].startswith(HOOK_PREFIX)
    )


def result_extra(call_result: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for key in ("status", "errorType"):
        if isinstance(call_result.get(key), str):
            extra[key] = call_result[key]
    display = call_result.get("resultDisplay")
    if isinstance(display, dict) and display.get("type") == "task_execution":
        extra["subagent"] = {
            k: display[k]
            for k in ("subagentName", "status", "terminateReason", "executionSummary")
            if k in display
        }
    return extra


def compressed_summary(history: Any) -> str | None:
    """The text Qwen put in place of a compressed history (its first Content's text parts)."""
    if not isinstance(history, list) or not history or not isinstance(history[0], dict):
        return None
    parts = history[0].get("parts")
    texts = (
        [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if isinstance(parts, list)
        else []
    )
    return "\n".join(texts) or None


def payload_text(payload: Any) -> str | None:
    if isinstance(payload, str):
        return payload
    if not isinstance(payload, dict):
        return None
    for key in ("summary", "text", "displayText", "rawCommand", "command"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    info = payload.get("info")
    if isinstance(info, dict):
        return ", ".join(f"{k}: {v}" for k, v in info.items() if isinstance(v, int | str))
    return None


class QwenState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    models: list[str] = msgspec.field(default_factory=list)
    usage_keys: set[str] = msgspec.field(default_factory=set)
    usage_total: Usage = msgspec.field(default_factory=Usage)
    prompts: int = 0
    replies: int = 0
    #: "prompt", "reply", "calls", "result", "error": what the session stopped at so far.
    last: str | None = None
    subagent_calls: int = 0
    custom_title: str | None = None
