"""Cline (cline/cline): both store generations under one agent id.

1. Task folders (:mod:`agtaild.adapters.cline.tasks`): the VS Code extension's
   ``globalStorage/saoudrizwan.claude-dev/tasks/<id>/`` in every VS Code-family editor, and
   Cline CLI 2.x's ``~/.cline/data/tasks/<id>/`` (the same format).
2. SDK sessions (:mod:`sdk`): Cline CLI 3.x's ``~/.cline/data/sessions/<sid>/``.

Where (``sdk/packages/shared/src/storage/paths.ts``): ``CLINE_DIR`` moves ``~/.cline``;
``CLINE_DATA_DIR`` moves ``<CLINE_DIR>/data``; ``CLINE_SESSION_DATA_DIR`` moves the sessions
folder alone. ``--root cline=PATH`` takes ``~/.cline``, its ``data`` folder, a ``tasks`` or
``sessions`` folder, or an editor's ``saoudrizwan.claude-dev`` globalStorage folder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.cline import sdk
from agtaild.adapters.cline.tasks import TaskDirAdapter
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.resume_ids import ALNUM, safe_id
from agtaild.model import Session


class ClineAdapter(TaskDirAdapter):
    id: ClassVar[str] = "cline"
    name: ClassVar[str] = "Cline"
    env_vars: ClassVar[tuple[str, ...]] = ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")
    root_help: ClassVar[str] = (
        "~/.cline (or its data/ folder, or a tasks/ or sessions/ folder), or an editor's "
        "globalStorage/saoudrizwan.claude-dev folder"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "task folders from Cline CLI 2.18.0 (extension core 3.82.0)",
        "SDK sessions from Cline CLI 3.0.65",
        "extension task folders (synthetic)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/cline-2.18.0",
        "real/cline-3.0.65",
        "cline/synthetic-agtail/.config/Code/User/globalStorage/saoudrizwan.claude-dev",
    )
    extension_ids: ClassVar[tuple[str, ...]] = ("saoudrizwan.claude-dev",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = env_path(env, "CLINE_DIR") or home / ".cline"
        data = env_path(env, "CLINE_DATA_DIR") or base / "data"
        roots = [data]
        sessions = env_path(env, "CLINE_SESSION_DATA_DIR")
        if sessions is not None:
            roots.append(sessions)
        return list(dict.fromkeys(roots + self.extension_roots(env, home)))

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from self.discover_tasks(root)
        yield from sdk.discover(self.id, root)

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if not unit.hints.get("sdk") and not self._looks_sdk(unit):
            return super().read(unit, state, now=now)
        book, newest = sdk.read(self.id, unit, time.time() if now is None else now)
        s = book.session
        s.path = unit.path
        s.mtime = newest
        s.resumable = self.resume(s) is not None  # subagents cannot be resumed on their own
        if unit.archived:
            s.archived = True
        return book.result()

    @staticmethod
    def _looks_sdk(unit: Unit) -> bool:
        """A unit from before hints were saved: SDK when it is a file or holds ``<name>.json``."""
        path = Path(unit.path)
        return path.is_file() or (path / f"{path.name}.json").is_file() or (path / f"{path.name}.messages.json").is_file()

    def native_files(self, unit: Unit) -> list[str]:
        if os.path.isfile(unit.path):
            return [unit.path]
        return super().native_files(unit)

    def resume(self, session: Session) -> ResumeCommand | None:
        """CLI 3.x: ``cline --id <sid>``; CLI 2.x task folders: ``cline --taskId <id>``; a task
        of the VS Code extension is resumed in the editor (None), as are subagents (None)."""
        sid = safe_id(session.id, ALNUM)
        if sid is None or session.imported or session.archived or session.parent is not None:
            return None
        if session.extra.get("store") == "sessions":
            return ResumeCommand(argv=["cline", "--id", sid], cwd=session.cwd)
        if session.extra.get("store") == "tasks" and "globalStorage" not in Path(session.path).parts:
            return ResumeCommand(argv=["cline", "--taskId", sid], cwd=session.cwd)
        return None
