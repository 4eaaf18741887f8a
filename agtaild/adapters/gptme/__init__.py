"""gptme (PyPI ``gptme``): one folder per conversation under its logs dir.

``$GPTME_LOGS_HOME``, else ``$XDG_DATA_HOME/gptme/logs`` (``~/.local/share/gptme/logs``; macOS
``~/Library/Application Support/gptme/logs``) holds ``<conversation id>/conversation.jsonl``, one
message per line, beside ``config.toml`` (model, tool format, the title as ``name``) and, for a
subagent, ``subagent-meta.json`` (its parent's logdir). Modules: adapter (roots, units,
resume), parser (lines → events and usage), content (tool calls, thinking and edits written
into a message's text).
"""

from agtaild.adapters.gptme.adapter import GptmeAdapter

__all__ = ["GptmeAdapter"]
