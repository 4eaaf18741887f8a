"""Text helpers for Codex records: flattening content arrays, spotting injected context.

Codex stores what the model saw, so `role: user` messages also carry text no person typed:
`<environment_context>`, `<user_instructions>`, "# AGENTS.md instructions for …",
`<turn_aborted>`, `<subagent_notification>`, skills lists, and the image open/close tags
around pasted images. Such text must never become a session's title or first prompt.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

#: A whole message wrapped in one XML-ish tag (`<environment_context>…</environment_context>`).
_WRAPPED = re.compile(r"^<([A-Za-z_][\w\-]*)(?:\s[^>]*)?>.*</\1>$", re.DOTALL)
_IMAGE_TAG = re.compile(r"^</?image(?:\s[^>]*)?>$")
_INJECTED_PREFIXES = (
    "# AGENTS.md instructions for",
    "<environment_context>",
    "<user_instructions>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<skills_instructions>",
    "<permissions instructions>",
    "<collaboration_mode>",
)
IMAGE_PLACEHOLDER = "[image]"


def as_dict(value: Any) -> dict[str, Any]:
    """The value if it is a JSON object, else an empty dict (records are untrusted)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int:
    """A token count: ints (and integral floats) only; anything else counts as 0."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


_MSGPACK_INT_MIN, _MSGPACK_INT_MAX = -(2**63), 2**64 - 1
_msgpack_encode = msgspec.msgpack.Encoder().encode


def msgpack_safe(value: Any) -> Any:
    """JSON data made storable in the msgpack parser state: integers beyond 64 bits (which
    only hostile or broken files contain) become their decimal strings."""
    if type(value) in (dict, list):
        try:
            _msgpack_encode(value)
            return value
        except OverflowError:
            pass
    try:
        return _int64_safe(value)
    except RecursionError:  # big integers inside absurdly deep nesting: say so, keep going
        return "[value not kept: nested too deeply]"


def _int64_safe(value: Any) -> Any:
    kind = type(value)
    if kind is int:
        return value if _MSGPACK_INT_MIN <= value <= _MSGPACK_INT_MAX else str(value)
    if kind is dict:
        return {k: _int64_safe(v) for k, v in value.items()}
    if kind is list:
        return [_int64_safe(v) for v in value]
    return value


def content_text(content: Any) -> str:
    """Flatten a Responses-API content array (or a plain string) into display text.

    Images become a placeholder, the `<image …>`/`</image>` wrapper tags are dropped.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    if len(content) == 1:  # the common case: one text part
        only = content[0]
        if type(only) is dict and type(only.get("text")) is str and only["text"][:1] not in ("<", " ", "\n"):
            return str(only["text"])
    parts: list[str] = []
    for item in content:
        if isinstance(item, str):
            parts.append(item)
            continue
        item = as_dict(item)
        kind = item.get("type")
        if kind in ("input_image", "image", "localImage", "image_url"):
            parts.append(IMAGE_PLACEHOLDER)
            continue
        text = item.get("text")
        if type(text) is not str:
            continue
        if text[:1] in ("<", " ", "\n") and _IMAGE_TAG.match(text.strip()):
            continue
        parts.append(text)
    return "\n".join(p for p in parts if p)


def is_injected(text: str) -> bool:
    """True for context Codex injected into a `user` message (no person typed it)."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "<#":
        return False
    stripped = stripped.rstrip()
    if stripped.startswith(_INJECTED_PREFIXES):
        return True
    return bool(_WRAPPED.match(stripped))


def dedupe_key(kind: str, text: str) -> str:
    """A short, process-independent key for "the same text written twice".

    The two copies of a message with images differ in placeholders and whitespace, so user
    text is normalized. Length plus both ends identify a text within one turn; hashing every
    message would cost more than the rest of its parsing (and Python's hash() is salted per
    process, while parser state outlives processes).
    """
    if kind == "user" and IMAGE_PLACEHOLDER in text:
        text = " ".join(text.replace(IMAGE_PLACEHOLDER, " ").split())
    else:
        text = text.strip()
    if len(text) <= 64:
        return f"{kind}:{text}"
    return f"{kind}:{len(text)}:{text[:24]}|{text[-24:]}"


def title_of(text: str, limit: int = 200) -> str:
    """A one-line title from a prompt: whitespace collapsed, cut at ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def epoch_of(ts: str | None) -> float | None:
    """Seconds since the epoch of an ISO-8601 timestamp (naive ones are taken as UTC)."""
    if not ts:
        return None
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def thread_id_from_filename(path: str) -> str:
    """Codex's rule: the trailing UUID of ``rollout-<ts>-<uuid>.jsonl``; else the file stem."""
    name = Path(path).name
    for suffix in (".jsonl.zst", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    tail = name[-36:]
    if len(tail) == 36 and tail.count("-") == 4 and all(c in "0123456789abcdefABCDEF-" for c in tail):
        return tail.lower()
    return name.removeprefix("rollout-") or name
