"""Helpers for the Claude Code adapter tests: read a unit as the index would, and apply a
sequence of incremental reads the way the index stores them (events by seq, usage by key)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.model import Event

#: A ``now`` far after every file's mtime: every file counts as settled (finished).
SETTLED = time.time() + 10 * 365 * 86400


def find_unit(adapter: ClaudeCodeAdapter, root: Path, path: Path) -> Unit:
    for unit in adapter.discover(root):
        if unit.path == str(path):
            return unit
    raise AssertionError(f"{path} was not discovered under {root}")


def read_path(root: Path, path: Path, adapter: ClaudeCodeAdapter | None = None) -> ReadResult:
    adapter = adapter or ClaudeCodeAdapter()
    return adapter.read(find_unit(adapter, root, path), None, now=SETTLED)


def by_tool_use_id(result: ReadResult, tool_use_id: str) -> Event:
    for ev in result.events:
        if ev.kind == "tool_use" and ev.tool_use_id == tool_use_id:
            return ev
    raise AssertionError(f"no tool_use {tool_use_id}")


def assistant_line(uuid: str, message_id: str | None, request_id: str | None, usage: dict[str, Any], *,
                   sidechain: bool = False, text: str = "x") -> dict[str, Any]:  # fmt: skip
    """A 2.1.x ``assistant`` line with one text block."""
    message: dict[str, Any] = {"role": "assistant", "type": "message", "model": "claude-opus-4-8",
                               "content": [{"type": "text", "text": text}], "usage": usage}  # fmt: skip
    if message_id is not None:
        message["id"] = message_id
    line: dict[str, Any] = {"type": "assistant", "uuid": uuid, "timestamp": "2026-03-01T10:00:00.000Z",
                            "sessionId": "s", "version": "2.1.100", "isSidechain": sidechain, "message": message}  # fmt: skip
    if request_id is not None:
        line["requestId"] = request_id
    return line


def usage_dict(inp: int, out: int, read: int = 0, write: int = 0, **more: Any) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write, **more}  # fmt: skip
