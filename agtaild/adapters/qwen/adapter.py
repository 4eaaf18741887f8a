"""Qwen Code (QwenLM/qwen-code, a Gemini CLI fork): ``~/.qwen``.

Two layouts, both under Qwen's global dir (``$QWEN_HOME``, default ``~/.qwen``; transcripts
go to ``$QWEN_RUNTIME_DIR`` when that is set):

* the JSONL chats (current): ``projects/<cwd with non-alphanumerics → ->/chats/<sessionId>.jsonl``,
  append-only, one line per record (:mod:`agtaild.adapters.qwen.parser`); ``--continue``/``--resume`` append
  to the same file. ``chats/archive/`` holds archived ones.
* the older JSON checkpoints, Gemini-shaped: ``tmp/<project hash>/chats/session-<ts>-<id8>.json``,
  a ConversationRecord rewritten in place whose model messages have ``type: "qwen"``; they
  are replayed by the Gemini reader (:mod:`agtaild.adapters.gemini.replay`).

Resume: ``qwen --resume <sessionId>`` in the session's cwd (Part R of FORMATS-longtail: the
resumed run appends to the same file). Old checkpoints are not resumable that way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.gemini.adapter import GeminiAdapter
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.qwen.parser import QwenParser
from agtaild.model import Session

#: Session ids Qwen writes (UUIDs); anything else is never put on a command line.
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$")


class _QwenCheckpoints(GeminiAdapter):
    """The Gemini JSON-document reader, under Qwen's id (the pre-JSONL checkpoints)."""

    id: ClassVar[str] = "qwen"


class QwenAdapter(JsonlAdapter):
    id: ClassVar[str] = "qwen"
    name: ClassVar[str] = "Qwen Code"
    env_vars: ClassVar[tuple[str, ...]] = ("QWEN_HOME", "QWEN_RUNTIME_DIR")
    root_help: ClassVar[str] = (
        "Qwen Code's global dir (~/.qwen, or $QWEN_RUNTIME_DIR), its projects folder, "
        "or its tmp folder (older JSON checkpoints)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "jsonl 0.15.10 (real)",
        "jsonl 0.21.13",
        "jsonl 0.21.14",
        "json checkpoint (synthetic)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/qwen-0.15.10",
        "qwen/agent-sessions",
        "qwen/entireio-cli/.qwen",
        "qwen/synthetic-agtail/.qwen",
    )
    Parser = QwenParser

    def __init__(self) -> None:
        self._checkpoints = _QwenCheckpoints()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = env_path(env, "QWEN_HOME") or home / ".qwen"
        runtime = env_path(env, "QWEN_RUNTIME_DIR")
        roots = [runtime] if runtime is not None else []
        if base not in roots:
            roots.append(base)
        return roots

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        projects, tmp = root / "projects", root / "tmp"
        if projects.is_dir() or tmp.is_dir():
            yield from self._buckets(projects, root)
            yield from self._buckets(tmp, root)
        else:  # --root names the projects (or tmp) folder itself
            yield from self._buckets(root, root)

    def _buckets(self, folder: Path, root: Path) -> Iterator[Unit]:
        try:
            buckets = sorted(p for p in folder.iterdir() if (p / "chats").is_dir())
        except OSError:
            return
        for bucket in buckets:
            chats = bucket / "chats"
            yield from self._chats(chats, root, archived=False)
            if (chats / "archive").is_dir():
                yield from self._chats(chats / "archive", root, archived=True)

    def _chats(self, chats: Path, root: Path, *, archived: bool) -> Iterator[Unit]:
        try:
            entries = sorted(chats.iterdir())
        except OSError:
            return
        for entry in entries:
            legacy = entry.suffix == ".json" and entry.name.startswith("session-")
            if (entry.suffix == ".jsonl" or legacy) and entry.is_file():
                yield Unit(
                    agent=self.id, path=str(entry), files=[str(entry)], root=str(root), archived=archived
                )

    # -- reading ----------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.path.endswith(".json"):
            result = self._checkpoints.read(unit, None, now=now)
            result.session.resumable = False
            result.session.extra["format"] = "checkpoint"
            return result
        return super().read(unit, state, now=now)

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """Qwen Code (a Gemini CLI fork): ``--prompt-interactive``, as Gemini CLI."""
        return ResumeCommand(argv=["qwen", "--prompt-interactive", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        if session.path.endswith(".json") or not session.resumable or session.parent is not None:
            return None
        if not _ID_RE.match(session.id or ""):
            return None
        return ResumeCommand(argv=["qwen", "--resume", session.id], cwd=session.cwd)
