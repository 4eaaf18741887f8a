"""iFlow CLI: one JSONL file per session under ``~/.iflow/projects``.

``$IFLOW_HOME`` (default ``~/.iflow``) holds ``projects/<cwd slug>/session-<uuid>.jsonl``, one
record per line in a Claude-Code-like envelope (``uuid``/``parentUuid``, ``type`` user or
assistant, Anthropic content blocks) whose tool results carry Gemini CLI's response parts.
Modules: adapter (roots, units, resume), parser (lines → events and usage).
"""

from agtaild.adapters.iflow.adapter import IflowAdapter

__all__ = ["IflowAdapter"]
