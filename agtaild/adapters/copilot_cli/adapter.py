"""GitHub Copilot CLI (``copilot``): ``~/.copilot/session-state/<id>/events.jsonl``.

``$COPILOT_HOME`` replaces ``~/.copilot`` (the CLI's config-dir reference). Each session is a
directory holding an append-only ``events.jsonl`` (parsed by :mod:`agtaild.adapters.copilot_cli.events`), a
``workspace.yaml`` the CLI rewrites (id, cwd, branch, ``name`` = the first prompt or the name
the user gave), checkpoints and per-prompt file backups. Early builds wrote a flat
``session-state/<id>.jsonl`` in the same event format; both layouts are read.

Sub-agents (the ``task`` tool) run inline in the parent's file, so they are not separate
sessions here: their events are marked ``sidechain`` and name the spawning tool call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.copilot_cli.events import CopilotParser
from agtaild.adapters.kit.files import read_regular_text
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.kit.resume_ids import safe_id
from agtaild.model import Session, project_of

#: Files of a live process that are never copied (lock files stay behind after a kill).
_TRANSIENT = (".lock", ".hold")
#: workspace.yaml is a few hundred bytes; anything far larger is not read.
_MAX_WORKSPACE_BYTES = 1 << 20


class CopilotCliAdapter(JsonlAdapter):
    id: ClassVar[str] = "copilot-cli"
    name: ClassVar[str] = "GitHub Copilot CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("COPILOT_HOME",)
    root_help: ClassVar[str] = "the session-state folder (~/.copilot/session-state; ~/.copilot works too)"
    formats_tested: ClassVar[tuple[str, ...]] = ("events.jsonl 0.0.420", "1.0.11", "1.0.77", "1.0.102")
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/copilot-1.0.102/session-state",
        "copilot-cli/agent-sessions/session-state",
        "copilot-cli/synthetic-agtail/.copilot/session-state",
    )
    Parser = CopilotParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = env_path(env, "COPILOT_HOME") or home / ".copilot"
        return [base / "session-state"]

    def discover(self, root: Path) -> Iterator[Unit]:
        state_dir = root / "session-state" if (root / "session-state").is_dir() else root
        try:
            entries = sorted(os.scandir(state_dir), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    events = path / "events.jsonl"
                    if events.is_file():
                        files = [str(events)]
                        if (path / "workspace.yaml").is_file():
                            files.append(str(path / "workspace.yaml"))
                        yield Unit(agent=self.id, path=str(events), files=files, root=str(root), hints={"id": entry.name})
                elif entry.name.endswith(".jsonl") and entry.is_file():
                    yield Unit(agent=self.id, path=str(path), files=[str(path)], root=str(root), hints={"id": path.stem})
            except OSError:
                continue

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        if Path(unit.path).name == "events.jsonl":
            _apply_workspace(result.session, Path(unit.path).parent / "workspace.yaml")
        return result

    def native_files(self, unit: Unit) -> list[str]:
        path = Path(unit.path)
        if path.name != "events.jsonl":
            return [unit.path]
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(path.parent):
            dirnames.sort()
            out.extend(os.path.join(dirpath, n) for n in sorted(filenames) if not n.endswith(_TRANSIENT))
        return out

    def resume(self, session: Session) -> ResumeCommand | None:
        sid = safe_id(session.id)
        if sid is None:
            return None
        # "--resume=<id>" is the form the recorded runs used; the id cannot become an option.
        return ResumeCommand(argv=["copilot", f"--resume={sid}"], cwd=session.cwd)


def read_workspace(path: Path) -> dict[str, str]:
    """The top-level ``key: value`` scalars of a workspace.yaml (all it ever holds)."""
    try:
        if path.stat().st_size > _MAX_WORKSPACE_BYTES:
            return {}
        text = read_regular_text(path, errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def _apply_workspace(session: Session, path: Path) -> None:
    """Fill what the event log lacks from workspace.yaml; a user-given name is the title."""
    ws: dict[str, Any] = read_workspace(path)
    if not ws:
        return
    if ws.get("name") and (ws.get("user_named") == "true" or not session.title):
        session.title = ws["name"]
    if not session.cwd and ws.get("cwd"):
        session.cwd = ws["cwd"]
        session.project = project_of(session.cwd)
    if not session.git_branch and ws.get("branch"):
        session.git_branch = ws["branch"]
    if ws.get("summary"):
        session.extra["summary"] = ws["summary"]
