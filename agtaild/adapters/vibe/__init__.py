"""Mistral Vibe (mistralai/mistral-vibe): one folder per session under ``logs/session``.

Modules: adapter. The adapter class is what the registry loads."""

from agtaild.adapters.vibe.adapter import VibeAdapter

__all__ = ["VibeAdapter"]
