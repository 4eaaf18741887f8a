"""Gemini CLI (google-gemini/gemini-cli): ``~/.gemini/tmp/<project>/chats/``.

Modules: adapter, messages, replay. The adapter class is what the registry loads."""

from agtaild.adapters.gemini.adapter import GeminiAdapter

__all__ = ["GeminiAdapter"]
