"""Helpers for the Claude Code adapter tests: read a unit as the index would, and apply a
sequence of incremental reads the way the index stores them (events by seq, usage by key)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.claude_code import ClaudeCodeAdapter
from agtaild.model import Event, to_builtins

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


class Store:
    """What the index keeps for one unit after applying reads."""

    def __init__(self) -> None:
        self.events: dict[int, Any] = {}
        self.usage: dict[str, Any] = {}
        self.session: dict[str, Any] = {}
        self.state: bytes | None = None

    def apply(self, result: ReadResult) -> None:
        if result.reset:
            self.events.clear()
            self.usage.clear()
        for ev in result.events:
            self.events[ev.seq] = to_builtins(ev)
        for rec in result.usage:
            self.usage[rec.key] = to_builtins(rec)
        session = to_builtins(result.session)
        session.pop("mtime", None)
        self.session = session
        self.state = result.state

    def snapshot(self) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        return [self.events[k] for k in sorted(self.events)], dict(self.usage), dict(self.session)
