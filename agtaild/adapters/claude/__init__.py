"""The Claude Code adapter: ``~/.claude/projects/<encoded cwd>/<sessionId>.jsonl``.

Modules: adapter, branches, edits, frames, hooks, messages, parser, plugins, state, subagents, text, tree, usage. The adapter class is what the registry loads."""

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter

__all__ = ["ClaudeCodeAdapter"]
