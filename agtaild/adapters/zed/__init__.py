"""Zed's agent threads: ``threads.db`` in Zed's data dir (``crates/agent/src/db.rs``).

Modules: adapter, thread. The adapter class is what the registry loads."""

from agtaild.adapters.zed.adapter import ZedAdapter

__all__ = ["ZedAdapter"]
