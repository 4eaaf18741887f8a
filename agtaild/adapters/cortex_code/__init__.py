"""Snowflake Cortex Code: one JSON document per conversation under ``~/.snowflake/cortex/conversations``
(its history in a ``.history.jsonl`` beside it once the conversation grows large).

Modules: adapter (roots, units, the history file, resume), messages (history messages → events).
"""

from agtaild.adapters.cortex_code.adapter import CortexCodeAdapter

__all__ = ["CortexCodeAdapter"]
