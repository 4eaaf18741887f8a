"""The CodeBuddy Code adapter: ``<config dir>/projects/<slug>/<id>.jsonl``, read incrementally.

CodeBuddy Code 2.163.0 keeps its config dir in ``$CODEBUDDY_CONFIG_DIR``, else
``~/.codebuddy`` (both OSes). A subagent's transcript is
``<slug>/<parent id>/subagents/agent-<id>.jsonl``; the parent's ``Agent`` call result names it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.codebuddy.parser import CodeBuddyParser
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import ParentRef, Session

#: A session that ends waiting on the model or a tool and has not changed for this long was cut off.
QUIET_SECONDS = 120.0
#: The most of a parent's transcript read to find the call that ran a subagent.
MAX_PARENT_SCAN = 64 * 1024 * 1024


class CodeBuddyAdapter(JsonlAdapter):
    id: ClassVar[str] = "codebuddy"
    name: ClassVar[str] = "CodeBuddy Code"
    env_vars: ClassVar[tuple[str, ...]] = ("CODEBUDDY_CONFIG_DIR",)
    root_help: ClassVar[str] = "the projects folder of the config dir (~/.codebuddy/projects)"
    formats_tested: ClassVar[tuple[str, ...]] = ("codebuddy 2.163.0",)
    sample_roots: ClassVar[tuple[str, ...]] = ("real/codebuddy-2.163.0/projects", "codebuddy/agent-sessions/projects")
    Parser: ClassVar[type[LineParser[Any]]] = CodeBuddyParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "CODEBUDDY_CONFIG_DIR") or home / ".codebuddy") / "projects"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for project in scan.entries(root):
            if not scan.is_dir(project):
                continue
            for entry in scan.entries(project.path):
                if entry.name.endswith(".jsonl") and scan.is_file(entry) and scan.size(entry) > 0:
                    yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))
                elif scan.is_dir(entry):
                    yield from self._subagents(Path(entry.path), root)

    def _subagents(self, folder: Path, root: Path) -> Iterator[Unit]:
        subs = folder / "subagents"
        if not subs.is_dir():
            return
        parent_log = folder.parent / f"{folder.name}.jsonl"
        for entry in scan.entries(subs):
            if entry.name.endswith(".jsonl") and scan.is_file(entry) and scan.size(entry) > 0:
                files = [entry.path] + ([str(parent_log)] if parent_log.is_file() else [])
                hints = {"parent_id": folder.name, "parent_log": str(parent_log)}
                yield Unit(agent=self.id, path=entry.path, files=files, root=str(root), hints=hints)

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if f != unit.hints.get("parent_log")]

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        s = result.session
        waiting = s.extra.pop("waiting", False)
        quiet = s.mtime is not None and (time.time() if now is None else now) - s.mtime >= QUIET_SECONDS
        if waiting and s.ending is None and quiet:
            s.ending = "interrupted"
        parent_id = unit.hints.get("parent_id")
        if isinstance(parent_id, str) and parent_id:
            s.id = Path(unit.path).stem
            s.parent = ParentRef(agent=self.id, id=parent_id, tool_use_id=_spawning_call(unit.hints.get("parent_log"), s.id))
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``codebuddy --resume=<id>`` (2.163.0 ``--help``: "-r, --resume [sessionId]  Resume a
        conversation - provide a session ID …"); subagents are not resumed."""
        if session.parent is not None:
            return None
        return ResumeCommand(argv=["codebuddy", f"--resume={session.id}"], cwd=session.cwd)


def _spawning_call(parent_log: Any, child_id: str) -> str | None:
    """The parent's call whose result names ``child_id`` as its subagent."""
    if not isinstance(parent_log, str):
        return None
    needle = f'"sessionId": "{child_id}"'.encode()
    try:
        data = read_regular(parent_log, MAX_PARENT_SCAN)
    except OSError:
        return None
    for raw in data.splitlines():
        if needle not in raw.replace(b'":"', b'": "'):
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "function_call_result" and isinstance(obj.get("callId"), str):
            return str(obj["callId"])
    return None

