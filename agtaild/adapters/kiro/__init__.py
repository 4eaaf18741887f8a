"""Kiro CLI (kirodotdev, successor of the Amazon Q Developer CLI): three stores, one agent.

Modules: adapter, sqlite, v2, v3. The adapter class is what the registry loads."""

from agtaild.adapters.kiro.adapter import KiroAdapter

__all__ = ["KiroAdapter"]
