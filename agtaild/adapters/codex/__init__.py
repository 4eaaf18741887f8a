"""OpenAI Codex CLI: rollouts under ``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``).

Modules: adapter, emit, events, items, links, parser, state, text, usage. The adapter class is what the registry loads."""

from agtaild.adapters.codex.adapter import CodexAdapter

__all__ = ["CodexAdapter"]
