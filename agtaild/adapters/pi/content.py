"""Small pure helpers for Pi / Oh My Pi records: content blocks, titles, system-entry text.

Kept apart from the tree parser so each stays readable; nothing here knows about state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agtaild.model import Session


def content_text(content: Any) -> tuple[str | None, int]:
    """Text of a Pi ``content`` (a string or text/image blocks) and the number of images.

    Images are counted, never copied: their base64 payloads would bloat the index.
    """
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return None, 0
    parts: list[str] = []
    images = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            images += 1
    return ("\n".join(parts) if parts else None), images


def is_slash_command(text: str) -> bool:
    """``/mode``, ``/model x``: a command typed into the prompt, not a request worth a title."""
    stripped = text.strip()
    return stripped.startswith("/") and "\n" not in stripped and len(stripped.split()) <= 2


def _get(key: str) -> Callable[[dict[str, Any]], str | None]:
    def text(obj: dict[str, Any]) -> str | None:
        value = obj.get(key)
        return value if isinstance(value, str) else None

    return text


def _model_change(obj: dict[str, Any]) -> str | None:
    if isinstance(obj.get("model"), str):
        role = obj.get("role")
        return f"{obj['model']} ({role})" if isinstance(role, str) and role != "default" else obj["model"]
    provider, model = obj.get("provider"), obj.get("modelId")
    if isinstance(model, str):
        return f"{provider}/{model}" if isinstance(provider, str) else model
    return None


def _rules(obj: dict[str, Any]) -> str | None:
    rules = obj.get("injectedRules")
    return ", ".join(str(r) for r in rules) if isinstance(rules, list) else None


def _tier(obj: dict[str, Any]) -> str | None:
    tier = obj.get("serviceTier")
    return tier if isinstance(tier, str) else (json.dumps(tier, sort_keys=True) if tier else None)


def _custom_message(obj: dict[str, Any]) -> str | None:
    text, _ = content_text(obj.get("content"))
    return text


#: Every known non-message entry type → how to say it in one line of event text.
#: Pi: model_change … session_info, context_edit; Oh My Pi adds the rest.
SYSTEM_ENTRY_TEXT: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "model_change": _model_change,
    "thinking_level_change": _get("thinkingLevel"),
    "compaction": _get("summary"),
    "branch_summary": _get("summary"),
    "custom": _get("customType"),
    "custom_message": _custom_message,
    "label": _get("label"),
    "session_info": _get("name"),
    "context_edit": _get("kind"),
    "service_tier_change": _tier,
    "reset_boundary": lambda obj: "context reset",
    "title_change": _get("title"),
    "ttsr_injection": _rules,
    "credential_pin": _get("provider"),
    "session_init": _get("task"),
    "mode_change": _get("mode"),
}


class EntryContext:
    """Where an entry's events come from (line, time, tree position)."""

    __slots__ = ("line", "parent", "ts", "uuid")

    def __init__(self, *, line: int, ts: str | None, uuid: str | None, parent: str | None) -> None:
        self.line = line
        self.ts = ts
        self.uuid = uuid
        self.parent = parent


def session_id_from_ref(ref: str) -> str:
    """``parentSession`` is a path (``…/<ts>_<id>.jsonl``) or an id; return the id."""
    name = ref.replace("\\", "/").rsplit("/", 1)[-1]
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
        if "_" in name:
            name = name.rsplit("_", 1)[-1]
    return name


def new_session(agent: str, path: str) -> Session:
    stem = path.replace("\\", "/").rsplit("/", 1)[-1]
    return Session(agent=agent, id=session_id_from_ref(stem), path=path)


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def int_or_zero(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
