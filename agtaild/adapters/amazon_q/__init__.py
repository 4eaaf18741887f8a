"""Amazon Q Developer CLI (``aws/amazon-q-developer-cli``, ``q chat``): one conversation per
directory in ``data.sqlite3``.

Its ``conversations`` table maps a working directory (``key``) to the whole
``ConversationState`` of the last conversation run there (``value``, JSON), rewritten after
every answer. Modules: adapter (roots, rows, resume), history (the ConversationState JSON →
events).
"""

from agtaild.adapters.amazon_q.adapter import AmazonQAdapter

__all__ = ["AmazonQAdapter"]
