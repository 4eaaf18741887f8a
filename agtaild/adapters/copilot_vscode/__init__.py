"""VS Code Copilot Chat (``copilot-vscode``): ``workspaceStorage/<hash>/chatSessions/``.

Modules: adapter, ops. The adapter class is what the registry loads."""

from agtaild.adapters.copilot_vscode.adapter import CopilotVscodeAdapter

__all__ = ["CopilotVscodeAdapter"]
