"""ChatGPT (chatgpt.com), read from its data export: ``agtail import chatgpt FILE.zip``.

Settings → Data controls → Export data mails a zip whose ``conversations.json`` is an array
of conversations, each a tree of messages (``mapping``: node id → {message, parent,
children}; ``current_node`` the leaf shown). The import store keeps one conversation per
file (agtaild.store.chat_import); there is no native root on this machine. Modules: adapter
(units, the export split, the read), messages (a message's content → text).
"""

from agtaild.adapters.chatgpt.adapter import ChatGptAdapter

__all__ = ["ChatGptAdapter"]
