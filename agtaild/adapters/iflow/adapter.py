"""The iFlow CLI adapter: ``<iFlow dir>/projects/<slug>/<session id>.jsonl``, read incrementally.

iFlow CLI 0.5.19 (a Gemini CLI fork) keeps its dir in ``$IFLOW_HOME``, else ``~/.iflow`` (both
OSes). Its history writer appends one line per record to ``projects/<slug>/<sessionId>.jsonl``,
where the session id is ``session-<uuid>`` and the slug is the project path with every
character outside ``[A-Za-z0-9_.-]`` turned into ``-`` (never decoded: cwd comes from the lines).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.iflow.parser import IflowParser
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session

#: A session that ends waiting on the model or a tool and has not changed for this long was cut off.
QUIET_SECONDS = 120.0


class IflowAdapter(JsonlAdapter):
    id: ClassVar[str] = "iflow"
    name: ClassVar[str] = "iFlow CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("IFLOW_HOME",)
    root_help: ClassVar[str] = "the projects folder of the iFlow dir (~/.iflow/projects)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "iflow 0.5.19 (hand-made samples of its history writer's records)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("iflow/handmade/projects",)
    Parser: ClassVar[type[LineParser[Any]]] = IflowParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "IFLOW_HOME") or home / ".iflow") / "projects"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for project in scan.entries(root):
            if not scan.is_dir(project):
                continue
            for entry in scan.entries(project.path):
                if entry.name.endswith(".jsonl") and scan.is_file(entry) and scan.size(entry) > 0:
                    yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        s = result.session
        waiting = s.extra.pop("waiting", False)
        quiet = s.mtime is not None and (time.time() if now is None else now) - s.mtime >= QUIET_SECONDS
        if waiting and s.ending is None and quiet:
            s.ending = "interrupted"
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``iflow --resume=<session id>`` in the session's cwd (0.5.19's options: "-r, --resume
        Resume conversation from a specific session file. If no session ID is provided, shows
        interactive session selector."; the id is looked up in the cwd's project folder)."""
        if not session.resumable:
            return None
        return ResumeCommand(argv=["iflow", f"--resume={session.id}"], cwd=session.cwd)
