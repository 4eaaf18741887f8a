"""The Claude Desktop adapter: ``local_<id>.json`` records and the transcripts in their folders.

Roots: the app-data folder's ``claude-code-sessions`` (the Code tab) and
``local-agent-mode-sessions`` (Cowork), on macOS ``~/Library/Application Support/Claude/``, on
Windows ``%APPDATA%\\Claude\\``; there is no official Linux build (community builds use
``~/.config/Claude``, read too). Records sit a few folders down (``<account>/<org>/``); a
session's own folder is ``local_<id>/`` beside its record (or the record's own folder), and its
transcript is Claude Code JSONL in ``local_<id>/.claude/projects/<slug>/<cliSessionId>.jsonl``,
with subagents beside it as Claude Code keeps them. Every transcript found there is a unit, read
by the Claude Code reader.

A Code-tab session runs the user's own Claude Code, whose transcript is in ``~/.claude/projects``:
the ``claude-code`` adapter lists it (its ``origin`` is the entrypoint the CLI wrote). Such a
record has no folder of its own with a transcript, so it gives no unit here and the session is
listed once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude_desktop.record import RECORD_NAME, read_record
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.stamps import widen
from agtaild.model import Session

#: The app's session folders, and the mode each holds.
MODES = {"claude-code-sessions": "code", "local-agent-mode-sessions": "cowork"}
#: How many folders below a root the records are looked for.
MAX_RECORD_DEPTH = 4
#: Folders in the tree that never hold records (a session's own files, its uploads).
_NOT_RECORDS = frozenset(
    {"outputs", "uploads", ".claude", "memory", "spaces", "node_modules", ".git", "skills-plugin"}
)


class ClaudeDesktopAdapter(ClaudeCodeAdapter):
    id: ClassVar[str] = "claude-desktop"
    name: ClassVar[str] = "Claude Desktop (Code tab, Cowork)"
    env_vars: ClassVar[tuple[str, ...]] = ("APPDATA",)
    root_help: ClassVar[str] = (
        "one of the app's session folders, ~/Library/Application Support/Claude/"
        "local-agent-mode-sessions or …/claude-code-sessions"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("hand-made records and Claude Code 2.1 transcripts",)
    sample_roots: ClassVar[tuple[str, ...]] = ("claude-desktop/handmade/Claude/local-agent-mode-sessions",)
    appends_keep_units: ClassVar[bool] = False

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        bases = [
            home / "Library" / "Application Support",
            env_path(env, "XDG_CONFIG_HOME") or home / ".config",
        ]
        appdata = env_path(env, "APPDATA")
        if appdata is not None:
            bases.append(appdata)
        return list(dict.fromkeys(base / "Claude" / folder for base in bases for folder in MODES))

    def discover(self, root: Path) -> Iterator[Unit]:
        mode = MODES.get(root.name)
        for record_path in self._records(str(root), 0):
            folder = _session_folder(record_path)
            projects = os.path.join(folder, ".claude", "projects") if folder else None
            if projects is None or not os.path.isdir(projects):
                continue  # a Code-tab session: its transcript is in the user's ~/.claude
            for unit in super().discover(Path(projects)):
                unit.root = str(root)
                unit.files.append(record_path)
                unit.hints["desktop_record"] = record_path
                if mode:
                    unit.hints["desktop_mode"] = mode
                yield unit

    def _records(self, folder: str, depth: int) -> Iterator[str]:
        for entry in scan.entries(folder):
            if RECORD_NAME.match(entry.name) and scan.is_file(entry):
                yield entry.path
            elif self._walk_into(entry, depth):
                yield from self._records(entry.path, depth + 1)

    @staticmethod
    def _walk_into(entry: os.DirEntry[str], depth: int) -> bool:
        """A folder that may hold records: not too deep, not a session's own folder."""
        if depth >= MAX_RECORD_DEPTH or entry.name in _NOT_RECORDS or not scan.is_dir(entry):
            return False
        return not _is_session_folder(entry.path)

    def plugins_dir_for(self, root: Path) -> Path | None:
        return None

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        path = unit.hints.get("desktop_record")
        record = read_record(path) if isinstance(path, str) else None
        s = result.session
        mode = unit.hints.get("desktop_mode")
        if record is not None and mode is None:
            mode = "cowork" if record.cowork_fields else "code"
        s.extra["desktop_mode"] = mode
        s.resumable = False
        if record is None:
            return result
        extra: dict[str, Any] = {"desktop_session_id": record.session_id}
        if record.archived:
            extra["desktop_archived"] = True
        if record.folders:
            extra["selected_folders"] = record.folders
        if record.origin_cwd:
            extra["origin_cwd"] = record.origin_cwd
        if record.worktree:
            extra["worktree"] = record.worktree
        s.extra.update(extra)
        if s.parent is None:  # the record describes the main session, not its subagents
            s.started, s.ended = widen(*widen(s.started, s.ended, record.created), record.last_activity)
            if record.title:
                s.title = record.title
            if record.cwd and record.cwd != s.cwd:
                if s.cwd:
                    s.extra["transcript_cwd"] = s.cwd
                s.cwd = record.cwd
                s.project = os.path.basename(record.cwd.rstrip("/\\")) or record.cwd
            if record.model and record.model not in s.models:
                s.extra["desktop_model"] = record.model
            if s.first_prompt is None and record.initial_message:
                s.first_prompt = record.initial_message
        return result

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        """None: a Cowork session runs in the app's own sandbox with its own config folder, and
        the app has no command line that opens a session."""
        return None


def _session_folder(record_path: str) -> str | None:
    """``local_<id>/`` beside the record, or the record's own folder when it is named so."""
    stem = os.path.basename(record_path)[: -len(".json")]
    beside = os.path.join(os.path.dirname(record_path), stem)
    if os.path.isdir(beside):
        return beside
    parent = os.path.dirname(record_path)
    return parent if os.path.basename(parent) == stem else None


def _is_session_folder(path: str) -> bool:
    """A ``local_<id>/`` folder (a session's own files, never more records' parents)."""
    name = os.path.basename(path)
    return RECORD_NAME.match(name + ".json") is not None and os.path.isfile(path + ".json")
