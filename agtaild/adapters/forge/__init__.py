"""Forge (ForgeCode, ``antinomyhq/forge``): every conversation in ``<base>/.forge.db``.

The base directory is ``$FORGE_CONFIG``, else ``~/forge`` when it exists (the legacy place),
else ``~/.forge``. Its ``.forge.db`` has one ``conversations`` row per conversation: the whole
context (every message, tool call and result, per-message usage) as JSON in ``context``, file
metrics as JSON in ``metrics``. Modules: adapter (roots, rows, links, resume), context (the
context JSON → events and usage records).
"""

from agtaild.adapters.forge.adapter import ForgeAdapter

__all__ = ["ForgeAdapter"]
