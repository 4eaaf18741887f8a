"""Grok Build (xai-org/grok-build): one directory per session.

Modules: adapter, updates. The adapter class is what the registry loads."""

from agtaild.adapters.grok.adapter import GrokAdapter

__all__ = ["GrokAdapter"]
