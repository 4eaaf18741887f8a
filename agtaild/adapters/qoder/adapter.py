"""The Qoder CLI adapter: ``<global dir>/projects/<slug>/<session id>.jsonl`` (1.1.52).

The global dir is ``--config-dir``, else ``$QODER_CONFIG_DIR``, else ``<home>/<name>``: home is
``$QODER_CLI_HOME`` or ``$GEMINI_CLI_HOME`` (the bundle still honours Gemini CLI's) or the
user's home, name is ``$QODER_CONFIG_DIR_NAME`` or ``.qoder``; both OSes. Discovery, units and
line parsing are the Claude Code reader's (the same layout and records); Claude's plugin
attribution does not apply.

QoderWork (the desktop app) keeps the same layout in ``~/.qoderwork/projects`` by peer readers'
accounts (not seen in the CLI's code): read as a second default root, its sessions marked
``extra.app = "QoderWork"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.kit.jsonl import LineParser
from agtaild.adapters.qoder.parser import QoderParser
from agtaild.model import Session

#: QoderWork's dir in the home folder.
QODERWORK = ".qoderwork"


class QoderAdapter(ClaudeCodeAdapter):
    id: ClassVar[str] = "qoder"
    name: ClassVar[str] = "Qoder CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("QODER_CONFIG_DIR", "QODER_CLI_HOME", "QODER_CONFIG_DIR_NAME")
    root_help: ClassVar[str] = "the projects folder of Qoder's global dir (~/.qoder/projects)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "qodercli 1.1.52 (hand-made samples of its transcript writer's records)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("qoder/handmade/projects",)
    Parser: ClassVar[type[LineParser[Any]]] = QoderParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        configured = env_path(env, "QODER_CONFIG_DIR")
        if configured is not None:
            return [configured / "projects"]
        base = env_path(env, "QODER_CLI_HOME") or env_path(env, "GEMINI_CLI_HOME") or home
        name = (env.get("QODER_CONFIG_DIR_NAME") or "").strip() or ".qoder"
        return [base / name / "projects", home / QODERWORK / "projects"]

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        if Path(unit.root).parent.name == QODERWORK:
            result.session.extra["app"] = "QoderWork"
        return result

    def plugins_dir_for(self, root: Path) -> Path | None:
        return None

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """``qodercli -- <prompt>`` starts an interactive session with the prompt ("Usage: qodercli
        [options] [command] [query...]"). 1.1.52 still reads options after ``--`` (``qodercli
        --print -- --x``: "error: unknown option '--x'"), so a prompt that starts with ``-`` is
        refused (None) rather than passed where it could be taken as an option."""
        if prompt.startswith("-"):
            return None
        return ResumeCommand(argv=["qodercli", "--", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        """``qodercli --resume=<id>`` in the session's cwd (1.1.52 ``--help``: "-r, --resume [id]
        Resume a previous session by identifier"; run here, it looks the id up in the cwd's
        project folder); subagents are not resumable."""
        if session.parent is not None or not session.resumable:
            return None
        return ResumeCommand(argv=["qodercli", f"--resume={session.id}"], cwd=session.cwd)
