"""OpenAI Codex CLI: rollouts under ``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``).

Layouts read: ``sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`` (2025-07 on),
flat ``sessions/rollout-*.jsonl`` (older), the TypeScript CLI's ``sessions/rollout-*.json``
(one JSON document), cold ``*.jsonl.zst`` rollouts (2026 builds compress files idle for 7
days; when both exist the plain file wins), and the flat ``archived_sessions/`` folder beside
the sessions root (sessions found there are tagged archived). The line formats and what each
record becomes are described in codex/parser.py and the modules it uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.codex.links import ARCHIVED_DIR, RolloutLinks, archived_dirs, rollout_files
from agtaild.adapters.codex.parser import CodexParser
from agtaild.adapters.codex.text import as_dict
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter, feed_lines, parse_tail, split_lines
from agtaild.model import Session


class CodexAdapter(JsonlAdapter):
    id: ClassVar[str] = "codex"
    appends_keep_units: ClassVar[bool] = True
    name: ClassVar[str] = "Codex CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("CODEX_HOME",)
    root_help: ClassVar[str] = (
        "the `sessions` folder of a Codex home ($CODEX_HOME/sessions, default ~/.codex/sessions); "
        "archived_sessions/ beside it is read too"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "codex-cli 0.171.0 (ordinal, item_completed, token_usage_record, world_state)",
        "codex-cli 0.135.0 (codex exec, envelope)",
        "codex-cli 0.106.0 (envelope, world_state, compacted)",
        "codex-cli 0.77.0 (envelope, compacted)",
        "envelope fixtures of claude-code-log and CodexBar (forks, sub-agents, archived)",
        "pre-envelope JSONL and TypeScript rollout-*.json (synthetic, from the format notes)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "codex/agent-history/sessions",
        "codex/agent-sessions/sessions",
        "codex/claude-code-log/sessions",
        "codex/codexbar/harness-smoke/codex-home/sessions",
        "real/codex-0.171.0/sessions",
    )
    Parser = CodexParser

    def __init__(self) -> None:
        self.links = RolloutLinks()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        codex_home = env_path(env, "CODEX_HOME") or home / ".codex"
        return [codex_home / "sessions"]

    def discover(self, root: Path) -> Iterator[Unit]:
        """Rollouts below ``root`` (any depth), then the archived ones beside (or in) it."""
        top = str(Path(root))
        yield from self._units(rollout_files(top, skip_archived=True), top, archived=False)
        for directory in archived_dirs(Path(top)):
            yield from self._units(rollout_files(str(directory)), top, archived=True)

    def _units(self, paths: Iterator[str], root: str, *, archived: bool) -> Iterator[Unit]:
        found = list(paths)
        plain = {p for p in found if p.endswith(".jsonl")}
        for path in found:
            if path.endswith(".zst") and path[: -len(".zst")] in plain:
                continue  # the plain rollout is the live one; the .zst is a stale copy
            yield Unit(agent=self.id, path=path, files=[path], root=root, archived=archived)

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.path.endswith(".jsonl.zst"):
            return self._read_whole(unit, self._zst_lines)
        if unit.path.endswith(".json"):
            return self._read_whole(unit, self._document_lines)
        return super().read(unit, state, now=now)

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """Codex CLI: ``codex [PROMPT]`` starts an interactive session with that first prompt."""
        return ResumeCommand(argv=["codex", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        if not session.resumable:
            return None
        # `codex resume [OPTIONS] [SESSION_ID]` (clap): after `--` the id is positional, never an
        # option (0.171.0's parser: `codex resume --x` is an error, `codex resume -- --x` is not).
        return ResumeCommand(argv=["codex", "resume", "--", session.id], cwd=session.cwd)

    def relative_path(self, unit: Unit, file: str) -> str:
        """Archived rollouts sit beside the root; mirrors keep them in ``archived_sessions/``."""
        if unit.archived:
            return f"{ARCHIVED_DIR}/{Path(file).name}"
        return os.path.relpath(file, unit.root)

    # -- whole-file formats -------------------------------------------------------------------
    def _read_whole(self, unit: Unit, lines_of: Any) -> ReadResult:
        """Compressed and single-document rollouts are read in full every time (no state)."""
        st = os.stat(unit.path)
        parser = self.Parser(self, unit, None)
        try:
            data = read_regular(Path(unit.path))
            lines, tail, tail_offset = lines_of(data)
        except Exception as exc:  # corrupt archive / unreadable document: say so, lose nothing else
            parser.st.session.accounting.lines += 1
            parser.bad(1, 0, b"")
            parser.st.session.truncated = True
            parser.st.session.extra["read_error"] = f"{type(exc).__name__}: {exc}"
            lines, tail, tail_offset = [], b"", 0
        feed_lines(parser, lines)
        if tail:
            parse_tail(parser, tail, tail_offset)
        session = parser.finish(settled=True)
        session.path = unit.path
        session.mtime = st.st_mtime
        session.archived = session.archived or unit.archived
        events, usage = parser.take_output()
        return ReadResult(session=session, events=events, usage=usage, state=None, reset=True)

    @staticmethod
    def _zst_lines(data: bytes) -> tuple[list[tuple[bytes, int]], bytes, int]:
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            plain = reader.read()
        lines, used = split_lines(plain, 0)
        return lines, plain[used:], used

    @staticmethod
    def _document_lines(data: bytes) -> tuple[list[tuple[bytes, int]], bytes, int]:
        """The TypeScript CLI's ``{"session": {...}, "items": [...]}``, one row per item."""
        doc = msgspec.json.decode(data)
        if not isinstance(doc, dict):
            raise ValueError("not a Codex rollout document (expected a JSON object)")
        session = as_dict(doc.get("session"))
        header = {"id": session.get("id"), "timestamp": session.get("timestamp")}
        if session.get("instructions"):
            header["instructions"] = session["instructions"]
        rows: list[Any] = [header]
        items = doc.get("items")
        rows.extend(items if isinstance(items, list) else [])
        encode = msgspec.json.encode
        return [(encode(row), index) for index, row in enumerate(rows)], b"", 0

