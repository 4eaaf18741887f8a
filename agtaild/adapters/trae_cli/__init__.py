"""TRAE CLI (ByteDance's terminal agent, "TraeX"): Codex-format rollouts under ``~/.trae/cli``.

TRAE CLI writes Codex CLI's rollout JSONL in Codex's layout (``sessions/YYYY/MM/DD/
rollout-<time>-<uuid>.jsonl`` and a flat ``archived_sessions/`` beside it), so its sessions are
read by the Codex reader under their own agent id. Module: adapter (roots, ids, resume).
"""

from agtaild.adapters.trae_cli.adapter import TraeCliAdapter

__all__ = ["TraeCliAdapter"]
