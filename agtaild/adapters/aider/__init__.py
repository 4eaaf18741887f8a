"""Aider (Aider-AI/aider): ``.aider.chat.history.md`` in each repository, many runs per file.

Modules: adapter, markdown. The adapter class is what the registry loads."""

from agtaild.adapters.aider.adapter import AiderAdapter

__all__ = ["AiderAdapter"]
