"""Claude.ai (the web and desktop chat), read from its data export: ``agtail import claude-ai FILE.zip``.

Settings → Privacy → Export data mails a zip whose ``conversations.json`` is an array of
conversations ``{uuid, name, created_at, updated_at, account, chat_messages: [...]}``
(beside ``projects.json`` and ``users.json``, which are not read). The import store keeps one
conversation per file (agtaild.store.chat_import). Not Claude Code: its sessions are the
``claude-code`` agent's.
"""

from agtaild.adapters.claude_ai.adapter import ClaudeAiAdapter

__all__ = ["ClaudeAiAdapter"]
