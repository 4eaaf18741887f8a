"""Claude Code message text: what a person typed versus what the CLI injected.

A ``user`` line is often not human input (FORMATS.md §1.8): slash-command envelopes,
``!`` shell-mode echoes, system reminders, IDE notices, interruption markers. Claude's own
"first prompt" logic skips them, and so do agtail's titles and message counts: such text
becomes a ``system`` event whose subtype names what it is, and stays searchable.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

#: A text that starts with a lowercase XML-like tag (``<command-name>``, ``<system-reminder>``).
_LEADING_TAG = re.compile(r"\s*<([a-z][\w-]*)[\s>/]")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

INTERRUPT_PREFIX = "[Request interrupted"

#: Leading tags whose text is grouped under one subtype (others keep the tag name).
_TAG_SUBTYPES = {
    "command-name": "command",
    "command-message": "command",
    "command-args": "command",
    "local-command-stdout": "local_command",
    "local-command-stderr": "local_command",
    "local-command-caveat": "local_command",
    "bash-input": "bash",
    "bash-stdout": "bash",
    "bash-stderr": "bash",
    "system-reminder": "reminder",
    "task-notification": "task_notification",
}


def injected_subtype(text: str) -> str | None:
    """None for text a person typed; else the ``system`` subtype of injected text."""
    if text.startswith(INTERRUPT_PREFIX):
        return "interrupted"
    if text[:1] in ("<", " ", "\n", "\t"):
        match = _LEADING_TAG.match(text)
        if match:
            tag = match.group(1)
            return _TAG_SUBTYPES.get(tag, tag)
    return None


def command_text(text: str) -> str:
    """``<command-name>/x</command-name>…<command-args>a</command-args>`` → ``/x a``."""
    name = _COMMAND_NAME.search(text)
    if not name:
        return text
    args = _COMMAND_ARGS.search(text)
    command = name.group(1).strip()
    arg_text = args.group(1).strip() if args else ""
    return f"{command} {arg_text}" if arg_text else command


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def first_line(text: str, limit: int = 200) -> str:
    """The first non-blank line, whitespace collapsed, cut at ``limit`` characters."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def media_placeholder(block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An image or document block as placeholder text plus its metadata (never the base64)."""
    kind = str(block.get("type") or "media")
    source = block.get("source")
    meta: dict[str, Any] = {"type": kind}
    media_type = None
    if isinstance(source, dict):
        media_type = source.get("media_type")
        meta["source_type"] = source.get("type")
        if media_type:
            meta["media_type"] = media_type
        data = source.get("data")
        if isinstance(data, str):
            meta["base64_chars"] = len(data)
        elif source.get("url"):
            meta["url"] = source.get("url")
    label = f"[{kind}: {media_type}]" if media_type else f"[{kind}]"
    return label, meta


def flatten_content(content: Any) -> str:
    """A tool_result's ``content`` (a string or a list of blocks) as plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text") or ""))
            elif kind in ("image", "document"):
                parts.append(media_placeholder(block)[0])
            else:
                parts.append(f"[{kind}]")
    return "\n".join(parts)


def media_in(content: Any) -> list[dict[str, Any]]:
    """Metadata of the images and documents inside a tool_result's content list."""
    if not isinstance(content, list):
        return []
    return [
        media_placeholder(block)[1]
        for block in content
        if isinstance(block, dict) and block.get("type") in ("image", "document")
    ]


def norm_ts(value: Any) -> str | None:
    """ISO 8601 UTC with milliseconds and ``Z`` (what Claude writes; older lines had µs)."""
    if type(value) is not str:
        return None
    if len(value) == 24 and value[23] == "Z" and value[19] == "." and value[10] == "T":
        return value  # the shape Claude writes (JS toISOString): the fast path
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
