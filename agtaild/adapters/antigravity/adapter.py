"""The Google Antigravity adapter: CLI step logs (read incrementally) and IDE brain artifacts.

Roots are the app folders ``<home>/.gemini/antigravity-cli`` (the CLI, ``agy``) and
``<home>/.gemini/antigravity`` (the IDE), where home is ``$GEMINI_CLI_HOME`` or the user's home
(both OSes). A conversation is ``brain/<conversation id>/``: with a step log
(``.system_generated/logs/transcript_full.jsonl``, else ``transcript.jsonl``, the CLI's shorter
copy) it is read by :mod:`.steps`; a folder with only Markdown artifacts (the IDE) by
:mod:`.artifacts`. ``conversations/<id>.db`` (the newer CLI's SQLite of protobuf rows) and the
IDE's encrypted ``conversations/<id>.pb`` are not read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.antigravity.artifacts import read_artifacts
from agtaild.adapters.antigravity.steps import StepParser
from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session

#: The CLI's app folder (the IDE's is ``antigravity``).
CLI_FOLDER = "antigravity-cli"
#: The step logs of a conversation, the fuller first.
STEP_LOGS = ("transcript_full.jsonl", "transcript.jsonl")
#: A conversation that ends on a prompt and has not changed for this long was cut off.
QUIET_SECONDS = 120.0


class AntigravityAdapter(JsonlAdapter):
    id: ClassVar[str] = "antigravity"
    name: ClassVar[str] = "Google Antigravity"
    env_vars: ClassVar[tuple[str, ...]] = ("GEMINI_CLI_HOME",)
    root_help: ClassVar[str] = (
        "an Antigravity app folder that holds brain/ (~/.gemini/antigravity-cli or ~/.gemini/antigravity)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "CLI step logs (peer fixtures and hand-made samples)",
        "IDE brain artifacts (peer fixture and hand-made samples)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "antigravity/agent-sessions/antigravity-cli",
        "antigravity/agent-sessions/antigravity",
        "antigravity/handmade/antigravity-cli",
        "antigravity/handmade/antigravity",
    )
    Parser: ClassVar[type[LineParser[Any]]] = StepParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = (env_path(env, "GEMINI_CLI_HOME") or home) / ".gemini"
        return [base / CLI_FOLDER, base / "antigravity"]

    def discover(self, root: Path) -> Iterator[Unit]:
        brain = root if root.name == "brain" else root / "brain"
        if not brain.is_dir():
            return
        conversations = brain.parent / "conversations"
        for folder in scan.entries(brain):
            if not scan.is_dir(folder):
                continue
            logs = os.path.join(folder.path, ".system_generated", "logs")
            log = next(
                (os.path.join(logs, n) for n in STEP_LOGS if _nonempty_file(os.path.join(logs, n))), None
            )
            if log is not None:
                yield Unit(
                    agent=self.id,
                    path=log,
                    files=[log],
                    root=str(root),
                    hints={"id": folder.name, "mode": "cli"},
                )
                continue
            artifacts = [
                e.path for e in scan.entries(folder.path) if e.name.endswith(".md") and scan.is_file(e)
            ]
            if not artifacts:
                continue
            # the IDE's conversations; in the CLI's folder, one whose log is not written yet
            hints: dict[str, Any] = {
                "mode": "ide",
                "app": "cli" if brain.parent.name == CLI_FOLDER else "ide",
            }
            body = conversations / f"{folder.name}.pb"
            if body.is_file():
                hints["encrypted"] = str(body)
                artifacts.append(str(body))
            yield Unit(agent=self.id, path=folder.path, files=artifacts, root=str(root), hints=hints)

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.hints.get("mode") == "ide":
            return read_artifacts(unit)
        result = super().read(unit, state, now=now)
        s = result.session
        s.extra["mode"] = "cli"
        waiting = s.extra.pop("waiting", False)
        quiet = s.mtime is not None and (time.time() if now is None else now) - s.mtime >= QUIET_SECONDS
        s.ending = "interrupted" if waiting and quiet else None
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``agy --conversation <id>`` (the CLI's resume, as peer integrations call it; the id
        is a UUID, so it is never read as an option); the IDE's conversations are opened in
        the IDE."""
        if session.extra.get("mode") != "cli" or not session.resumable:
            return None
        return ResumeCommand(argv=["agy", "--conversation", session.id], cwd=session.cwd)


def _nonempty_file(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return os.path.isfile(path) and st.st_size > 0
