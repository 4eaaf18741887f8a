"""Qoder CLI: Claude Code's transcript format under ``~/.qoder/projects``.

Qoder CLI 1.1.52's transcript writer writes the JSONL of Claude Code 2.1
(``projects/<cwd slug>/<session id>.jsonl``, subagents in ``<session id>/subagents/``), plus a few
record types of its own, so the Claude Code reader reads it under this agent's id. Modules:
adapter (roots, resume), parser (Qoder's own records, credits).
"""

from agtaild.adapters.qoder.adapter import QoderAdapter

__all__ = ["QoderAdapter"]
