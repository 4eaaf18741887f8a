"""The OpenClaw adapter: ``<state dir>/agents/<agentId>/agent/openclaw-agent.sqlite``.

The session root is OpenClaw's state dir (``~/.openclaw``). Every agent's database under it is
read; one unit is one ``session_id`` of ``transcript_events`` (``<db>#<id>``). Transcripts of
releases before the SQLite cutover, ``agents/<agentId>/sessions/*.jsonl`` (Pi's JSONL), are
units of their own, read incrementally like Pi's.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.kit.sqlite_db import (
    SqliteSessionAdapter,
    database_at,
    rows_as_dicts,
    table_columns,
)
from agtaild.adapters.kit.stamps import from_epoch_ms
from agtaild.adapters.openclaw.rows import OpenClawParser, decode_row
from agtaild.model import ParentRef, Session

log = logging.getLogger(__name__)

DB_NAME = "openclaw-agent.sqlite"
#: A session whose transcript ends waiting (a user message without a reply, a tool call
#: without a result) and has not changed for this long was cut off (killed, interrupted).
QUIET_SECONDS = 120.0
#: session_windows.status → Session.ending
_STATUS_ENDINGS = {"failed": "error", "killed": "interrupted", "timeout": "interrupted"}
#: The keys OpenClaw writes (``agent:main:explicit:<id>``, ``agent:main:subagent:<uuid>``).
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._-]{0,299}")


class _LegacyJsonl(JsonlAdapter):
    """Reads the pre-SQLite ``agents/<id>/sessions/*.jsonl`` files (Pi's format)."""

    id: ClassVar[str] = "openclaw"
    Parser = OpenClawParser


class OpenClawAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "openclaw"
    name: ClassVar[str] = "OpenClaw"
    env_vars: ClassVar[tuple[str, ...]] = ("OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "OPENCLAW_PROFILE")
    root_help: ClassVar[str] = (
        "the state dir (~/.openclaw, ~/.openclaw-<profile>), an agent's openclaw-agent.sqlite, "
        "or an agent's sessions folder of JSONL files (before the SQLite cutover)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("openclaw 2026.9.6 (SQLite)", "JSONL v3 (peer fixtures)")
    sample_roots: ClassVar[tuple[str, ...]] = ("real/openclaw-2026.9.6", "openclaw/agent-sessions")
    _legacy = _LegacyJsonl()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        state = env_path(env, "OPENCLAW_STATE_DIR")
        if state is not None:
            return [state]
        base = env_path(env, "OPENCLAW_HOME") or home
        profile = (env.get("OPENCLAW_PROFILE") or "").strip()
        if profile and profile != "default" and "/" not in profile:
            return [base / f".openclaw-{profile}"]
        return [base / ".openclaw"]

    # -- discovery ---------------------------------------------------------------------------
    def databases(self, root: Path) -> list[Path]:
        # What stands at a database's name, SQLite or not: the shared discovery opens only real
        # databases and reports anything else (a FIFO, a damaged file) as an unreadable store.
        if database_at(root):
            return [root]
        found = [p for p in (root / DB_NAME, root / "agent" / DB_NAME) if database_at(p)]
        for agent in self._agent_dirs(root):
            db = agent / "agent" / DB_NAME
            if database_at(db):
                found.append(db)
        return found

    def _agent_dirs(self, root: Path) -> list[Path]:
        agents = root / "agents"
        if not agents.is_dir():
            return []
        return sorted(Path(e.path) for e in scan.entries(agents) if scan.is_dir(e))

    def _jsonl_dirs(self, root: Path) -> list[Path]:
        dirs = [root] if root.name == "sessions" else []
        dirs += [a / "sessions" for a in self._agent_dirs(root)]
        return [d for d in dirs if d.is_dir()]

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from super().discover(root)
        for folder in self._jsonl_dirs(root):
            for entry in scan.entries(folder):
                if entry.name.endswith(".jsonl") and scan.is_file(entry) and scan.size(entry) > 0:
                    yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        ids = [row[0] for row in conn.execute("SELECT DISTINCT session_id FROM transcript_events")]
        good = [i for i in ids if isinstance(i, str) and i and "#" not in i]
        if len(good) < len(ids):
            log.warning("%s: %s: %d session ids that are not ids skipped", self.id, db, len(ids) - len(good))
        return good

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT count(*), max(seq), max(created_at), total(coalesce(length(event_json), length(event_zstd)))"
            " FROM transcript_events WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if not row or not row[0]:
            return None
        window = self._window(conn, session_id)
        return [*row, str(window.get("updated_at")), str(window.get("status"))]

    # -- reading -----------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.path.endswith(".jsonl") and os.path.isfile(unit.path):
            return self._legacy.read(unit, state, now=now)
        return super().read(unit, state, now=now)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        parser = OpenClawParser(self, unit, None)
        acct = parser.st.session.accounting
        last_ms = 0
        rows = conn.execute(
            "SELECT event_json, event_zstd, event_utf8_bytes, created_at FROM transcript_events"
            " WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        for n, (event_json, event_zstd, size, created) in enumerate(rows, 1):
            if isinstance(created, int) and not isinstance(created, bool):
                last_ms = max(last_ms, created)
            try:
                obj = decode_row(event_json, event_zstd, size)
            except ValueError:
                acct.lines += 1
                parser.bad(n, 0, b"")
                continue
            acct.count(parser.record(obj, n, 0))
        parser.settle()
        session = parser.finish(settled=True)
        session.id = session_id
        session.extra.pop("leaf", None)
        self._summarize(conn, session, unit, session_id)
        recheck = self._ending(parser, session, last_ms / 1000.0, now)
        events, usage = parser.take_output()
        for ev in events:
            book.emit(ev)
        for rec in usage:
            book.add_usage(rec)
        book.session = session
        return recheck

    def _window(self, conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
        if not table_columns(conn, "session_windows"):
            return {}
        rows = rows_as_dicts(conn.execute("SELECT * FROM session_windows WHERE session_id = ?", (session_id,)))
        return rows[0] if rows else {}

    def _summarize(self, conn: sqlite3.Connection, s: Session, unit: Unit, session_id: str) -> None:
        """Key, label, parent and status from ``session_windows`` / ``session_nodes``."""
        db = Path(unit.path.rpartition("#")[0])
        if db.parent.name == "agent":
            s.extra["openclaw_agent"] = db.parent.parent.name
        window = self._window(conn, session_id)
        key = window.get("session_key")
        node: dict[str, Any] = {}
        if isinstance(key, str) and key:
            s.extra["session_key"] = key
            if table_columns(conn, "session_nodes"):
                found = rows_as_dicts(conn.execute("SELECT * FROM session_nodes WHERE session_key = ?", (key,)))
                node = found[0] if found else {}
        for source in (node.get("label"), node.get("display_name"), window.get("display_name")):
            if isinstance(source, str) and source.strip():
                s.title = source.strip()
                break
        model = window.get("model")
        if isinstance(model, str) and model and model not in s.models:
            s.models.append(model)
        for field in ("reason", "previous_session_id", "channel", "chat_type"):
            if isinstance(window.get(field), str):
                s.extra[field] = window[field]
        status = window.get("status") if isinstance(window.get("status"), str) else node.get("status")
        if isinstance(status, str):
            s.extra["status"] = status
            s.ending = _STATUS_ENDINGS.get(status, s.ending)
        parent_key = next(
            (k for k in (window.get("parent_session_key"), window.get("spawned_by"), node.get("parent_session_key"))
             if isinstance(k, str) and k),
            None,
        )  # fmt: skip
        if parent_key is not None and table_columns(conn, "session_nodes"):
            row = conn.execute("SELECT current_session_id FROM session_nodes WHERE session_key = ?", (parent_key,)).fetchone()
            if row and isinstance(row[0], str) and row[0]:
                s.parent = ParentRef(agent=self.id, id=row[0])
                s.extra["parent_session_key"] = parent_key
        if s.started is None:
            s.started = from_epoch_ms(window.get("started_at") or window.get("created_at"))

    def _ending(self, parser: OpenClawParser, s: Session, last: float, now: float) -> float | None:
        """A transcript that ends waiting — a prompt without an answer, a tool call without its
        result — and stayed so for :data:`QUIET_SECONDS` was cut off: ``interrupted``."""
        if s.ending is not None:
            return None
        waiting = bool(parser.st.pending) and parser.st.last_stop == "toolUse"
        events = parser._out
        if not waiting and events:
            last_event = events[max(events)]
            waiting = last_event.kind == "text" and last_event.role == "user"
        if not waiting:
            return None
        if last and now - last < QUIET_SECONDS:
            return last + QUIET_SECONDS
        s.ending = "interrupted"
        return None

    def native_files(self, unit: Unit) -> list[str]:
        if unit.path.endswith(".jsonl") and "#" not in os.path.basename(unit.path):
            return list(unit.files)
        return super().native_files(unit)

    def resume(self, session: Session) -> ResumeCommand | None:
        """``openclaw tui --local --session=<key>`` (the TUI opens a session by its key);
        sessions read from JSONL were imported into the database by ``openclaw doctor --fix``
        and have no key here."""
        key = session.extra.get("session_key")
        if session.parent is not None or not isinstance(key, str) or not _KEY.fullmatch(key):
            return None
        return ResumeCommand(argv=["openclaw", "tui", "--local", f"--session={key}"], cwd=session.cwd)

