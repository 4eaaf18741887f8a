"""Claude Desktop's local sessions (the Code tab and Cowork): records plus Claude Code transcripts.

Claude Desktop keeps one ``local_<id>.json`` record per session under
``claude-code-sessions/`` (the Code tab) and ``local-agent-mode-sessions/`` (Cowork) in its
app-data folder. A session that keeps its transcript in its own folder
(``local_<id>/.claude/projects/…``) is read by the Claude Code reader under this agent's id,
with the record's title, folder and mode. Modules: adapter (roots, records, units), record
(the record's fields).
"""

from agtaild.adapters.claude_desktop.adapter import ClaudeDesktopAdapter

__all__ = ["ClaudeDesktopAdapter"]
