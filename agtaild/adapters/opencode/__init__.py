"""OpenCode (sst/opencode, now anomalyco/opencode): ``opencode.db`` and the older ``storage/``.

Modules: adapter, db, parts, storage. The adapter class is what the registry loads."""

from agtaild.adapters.opencode.adapter import OpenCodeAdapter

__all__ = ["OpenCodeAdapter"]
