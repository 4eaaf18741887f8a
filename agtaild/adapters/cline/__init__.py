"""Cline (cline/cline): both store generations under one agent id.

Modules: adapter, common, history, sdk, tasks, ui, xml. The adapter class is what the registry loads."""

from agtaild.adapters.cline.adapter import ClineAdapter

__all__ = ["ClineAdapter"]
