"""Linking a Claude Code subagent transcript to the tool use that spawned it.

Where the link is written depends on the version (FORMATS.md §1.1, §1.6, Part 3):

* 2.1.197+: the sidecar ``agent-<id>.meta.json`` has ``toolUseId``;
* 2.1.x before that: the parent's ``tool_result`` line carries ``toolUseResult.agentId``
  (written when the subagent finishes), and 2.1.17–2.1.39 also stream ``progress`` lines with
  ``data.agentId`` and ``parentToolUseID`` while it runs;
* 2.0.x flat ``agent-<8hex>.jsonl``: the parent's ``toolUseResult.agentId`` again.

The child finds its parent's line by a byte search for ``"<agent id>"`` over a memory
map of the parent file, decoding only the lines that match, and remembers how far it searched
so that a later read only searches what the parent appended since.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

import msgspec

from agtaild.adapters.kit.files import open_regular


def read_meta(path: str) -> dict[str, Any] | None:
    """The subagent's ``.meta.json`` (None when absent or not a JSON object)."""
    try:
        with open_regular(path) as fh:
            data = msgspec.json.decode(fh.read(65536))
    except (OSError, msgspec.DecodeError):
        return None
    return data if isinstance(data, dict) else None


def _spawning_tool_use(line: bytes, agent_id: str) -> str | None:
    try:
        obj = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    result = obj.get("toolUseResult")
    if isinstance(result, dict) and result.get("agentId") == agent_id:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool_use_id = block.get("tool_use_id")
                    if isinstance(tool_use_id, str):
                        return tool_use_id
    data = obj.get("data")
    if obj.get("type") == "progress" and isinstance(data, dict) and data.get("agentId") == agent_id:
        parent_tool_use = obj.get("parentToolUseID")
        if isinstance(parent_tool_use, str):
            return parent_tool_use
    return None


def find_spawning_tool_use(parent_path: str, agent_id: str, start: int) -> tuple[str | None, int]:
    """Search the parent file from byte ``start``; returns (tool_use_id, where to resume).

    Only complete lines are searched: the resume offset is just past the last newline, so a
    line the parent is still writing is searched again next time.
    """
    try:
        size = os.path.getsize(parent_path)
    except OSError:
        return None, start
    if size < start:  # the parent was replaced or truncated: search it again
        start = 0
    if size == start:
        return None, start
    needle = b'"' + agent_id.encode() + b'"'  # the id as a JSON string, however it is spaced
    try:
        with open_regular(parent_path) as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            end = mm.rfind(b"\n", start, size)
            if end < 0:
                return None, start
            pos = mm.find(needle, start, end)
            while pos >= 0:
                line_start = mm.rfind(b"\n", 0, pos) + 1
                line_end = mm.find(b"\n", pos, end + 1)
                found = _spawning_tool_use(mm[line_start:line_end], agent_id)
                if found:
                    return found, end + 1
                pos = mm.find(needle, line_end, end)
            return None, end + 1
    except (OSError, ValueError):
        return None, start
