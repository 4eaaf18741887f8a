"""Qwen Code (QwenLM/qwen-code, a Gemini CLI fork): ``~/.qwen``.

Modules: adapter, parser, records, telemetry. The adapter class is what the registry loads."""

from agtaild.adapters.qwen.adapter import QwenAdapter

__all__ = ["QwenAdapter"]
