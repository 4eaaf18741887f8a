"""Goose (block/goose): ``sessions.db`` in its data dir, and the older JSONL session files.

Modules: adapter, content. The adapter class is what the registry loads."""

from agtaild.adapters.goose.adapter import GooseAdapter

__all__ = ["GooseAdapter"]
