"""The Junie adapter: ``<Junie home>/sessions/<session id>/events.jsonl``, read incrementally.

Junie keeps its home in ``$JUNIE_HOME``, else ``.junie`` in the user's home (Linux, macOS and
``%USERPROFILE%\\.junie`` on Windows), for the ``junie`` CLI and for the agent the JetBrains
IDEs' AI Assistant runs alike. A session folder is named ``session-<YYMMDD>-<HHMMSS>-<4
letters>`` (local time). ``sessions/index.jsonl`` holds one line per session
(``sessionId``, ``createdAt``, ``updatedAt``, ``projectDir``, ``taskName``): the cwd and title
of a session whose own log never states them.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.junie.parser import JunieParser
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session, project_of

EVENTS = "events.jsonl"
INDEX = "index.jsonl"
#: The most of ``index.jsonl`` read to find one session's row.
MAX_INDEX = 16 * 1024 * 1024


class JunieAdapter(JsonlAdapter):
    id: ClassVar[str] = "junie"
    name: ClassVar[str] = "Junie"
    env_vars: ClassVar[tuple[str, ...]] = ("JUNIE_HOME",)
    root_help: ClassVar[str] = "the sessions folder of Junie's home (~/.junie/sessions)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "junie 2026.8 (IDE-hosted session)",
        "junie (hand-made lines from peer catalogues)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("junie/observer/sessions", "junie/handmade/sessions")
    Parser: ClassVar[type[LineParser[Any]]] = JunieParser
    appends_keep_units: ClassVar[bool] = True

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "JUNIE_HOME") or home / ".junie") / "sessions"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):
            if not scan.is_dir(entry):
                continue
            events = os.path.join(entry.path, EVENTS)
            try:
                st = os.stat(events)
            except FileNotFoundError:
                continue  # a folder Junie made before the session's first event (or another file)
            except OSError as exc:
                scan.report(events, exc)
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                yield Unit(agent=self.id, path=events, files=[events], root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        s = result.session
        if s.cwd is None or s.title is None:
            row = _index_row(Path(unit.path).parent.parent / INDEX, s.id)
            project = row.get("projectDir")
            if s.cwd is None and isinstance(project, str) and project:
                s.cwd, s.project = project, project_of(project.replace("\\", "/"))
                s.extra["cwd_from"] = INDEX
            name = row.get("taskName")
            if s.title is None and isinstance(name, str) and name.strip():
                s.title = name.strip()
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``junie --session-id=<id> --resume`` in the project folder (how the CLI resumes a
        session by id; peer launchers run the same)."""
        if session.imported:
            return None
        return ResumeCommand(argv=["junie", f"--session-id={session.id}", "--resume"], cwd=session.cwd)


def _index_row(path: Path, session_id: str) -> dict[str, Any]:
    """The ``index.jsonl`` row of ``session_id`` (the last one), or {}."""
    try:
        data = read_regular(path, MAX_INDEX)
    except OSError:
        return {}
    needle = session_id.encode()
    found: dict[str, Any] = {}
    for raw in data.splitlines():
        if needle not in raw:
            continue
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("sessionId") == session_id:
            found = row
    return found
