"""Auggie, Augment Code's CLI: one JSON document per session under ``~/.augment/sessions``.

Modules: adapter (roots, units and subagent runs, resume), exchanges (chatHistory items →
events and usage).
"""

from agtaild.adapters.auggie.adapter import AuggieAdapter

__all__ = ["AuggieAdapter"]
