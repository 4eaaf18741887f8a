"""Tabnine CLI: chat recordings under ``~/.tabnine/agent/tmp/<project>/chats/``.

Tabnine's agent CLI is a fork of Gemini CLI and writes Gemini CLI's chat recording (0.39+
JSONL) with ``tabnine`` as the model's record type, so its sessions are read by the Gemini CLI
replay. Module: adapter (roots, resume).
"""

from agtaild.adapters.tabnine.adapter import TabnineAdapter

__all__ = ["TabnineAdapter"]
