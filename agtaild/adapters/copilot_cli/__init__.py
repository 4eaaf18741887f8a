"""GitHub Copilot CLI (``copilot``): ``~/.copilot/session-state/<id>/events.jsonl``.

Modules: adapter, events, values. The adapter class is what the registry loads."""

from agtaild.adapters.copilot_cli.adapter import CopilotCliAdapter

__all__ = ["CopilotCliAdapter"]
