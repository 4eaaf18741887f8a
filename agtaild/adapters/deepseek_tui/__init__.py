"""DeepSeek TUI (renamed CodeWhale): one JSON document per session under ``~/.deepseek/sessions``
(``~/.codewhale/sessions`` after the rename).

Modules: adapter (roots, units, session summary, usage, resume), blocks (messages → events).
"""

from agtaild.adapters.deepseek_tui.adapter import DeepSeekTuiAdapter

__all__ = ["DeepSeekTuiAdapter"]
