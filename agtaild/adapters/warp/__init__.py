"""Warp's agent mode (``warpdotdev/warp``): conversations in the terminal's ``warp.sqlite``.

Warp keeps its state in ``warp.sqlite`` (``$XDG_STATE_HOME/warp-terminal*/`` on Linux, the
``dev.warp`` app-group container on macOS). An agent conversation is an
``agent_conversations`` row (metadata JSON, a summary JSON), its ``agent_tasks`` (protobuf
bodies of Warp's multi-agent API, not decoded here), the user's queries in ``ai_queries`` and
the commands the agent ran as terminal ``blocks`` whose ``ai_metadata`` names the
conversation. Modules: adapter (roots, listing, session), rows (rows → events).
"""

from agtaild.adapters.warp.adapter import WarpAdapter

__all__ = ["WarpAdapter"]
