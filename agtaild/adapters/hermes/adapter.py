"""The Hermes Agent adapter: ``$HERMES_HOME/state.db`` (and each profile's), one unit per session.

Hermes 0.19.0 (``hermes_state.py``) keeps its home in ``$HERMES_HOME``, else ``~/.hermes`` (the
same on macOS); ``hermes -p <name>`` runs a profile whose home is ``profiles/<name>/``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.hermes.legacy import PREFIX, read_legacy, session_id_of
from agtaild.adapters.hermes.messages import MessageReader, usage_records
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import (
    SqliteSessionAdapter,
    database_at,
    rows_as_dicts,
    table_columns,
)
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import ParentRef, Session, project_of

#: A session whose last row is a prompt without an answer, or a call without its result, and
#: that has not changed for this long was cut off (interrupted, killed).
QUIET_SECONDS = 120.0


class HermesAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "hermes"
    name: ClassVar[str] = "Hermes Agent"
    env_vars: ClassVar[tuple[str, ...]] = ("HERMES_HOME",)
    root_help: ClassVar[str] = "the Hermes home (~/.hermes), a profile's folder, or a state.db"
    formats_tested: ClassVar[tuple[str, ...]] = ("hermes-agent 0.19.0 (state.db)", "session JSON (peer fixtures)")
    sample_roots: ClassVar[tuple[str, ...]] = ("real/hermes-0.19.0", "hermes/agent-sessions")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [env_path(env, "HERMES_HOME") or home / ".hermes"]

    def databases(self, root: Path) -> list[Path]:
        # What stands at a database's name, SQLite or not: the shared discovery opens only real
        # databases and reports anything else (a FIFO, a damaged file) as an unreadable store.
        if database_at(root):
            return [root]
        found = [root / "state.db"] if database_at(root / "state.db") else []
        profiles = root / "profiles"
        if profiles.is_dir():
            for entry in scan.entries(profiles):
                db = Path(entry.path) / "state.db"
                if scan.is_dir(entry) and database_at(db):
                    found.append(db)
        return found

    def discover(self, root: Path) -> Iterator[Unit]:
        """The database's sessions, then the older ``sessions/session_<id>.json`` files whose
        session the database does not hold."""
        in_db: set[str] = set()
        for unit in super().discover(root):
            in_db.add(unit.path.rpartition("#")[2])
            yield unit
        folder = root / "sessions" if (root / "sessions").is_dir() else root if root.name == "sessions" else None
        if folder is None or not folder.is_dir():
            return
        for entry in scan.entries(folder):
            name = entry.name
            if not (name.startswith(PREFIX) and name.endswith(".json")) or session_id_of(entry.path) in in_db:
                continue
            if scan.is_file(entry) and scan.size(entry) > 0:
                yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.path.endswith(".json") and "#" not in os.path.basename(unit.path):
            return read_legacy(self.id, unit, now=now)
        return super().read(unit, state, now=now)

    def native_files(self, unit: Unit) -> list[str]:
        if unit.path.endswith(".json") and "#" not in os.path.basename(unit.path):
            return list(unit.files)
        return super().native_files(unit)

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        return [r[0] for r in conn.execute("SELECT id FROM sessions") if isinstance(r[0], str) and r[0] and "#" not in r[0]]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        messages = conn.execute(
            "SELECT count(*), max(id), max(timestamp), total(length(content)) FROM messages WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        (children,) = conn.execute("SELECT count(*) FROM sessions WHERE parent_session_id = ?", (session_id,)).fetchone()
        return [str(v) for v in row if not isinstance(v, str) or len(v) < 200] + [str(v) for v in messages] + [children]

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        found = rows_as_dicts(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)))
        srow = found[0] if found else {}
        s = book.session
        book.count("metadata")  # the sessions row
        model = srow.get("model")
        if isinstance(model, str) and model:
            s.models.append(model)
        reader = MessageReader(book)
        cursor = conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        for number, row in enumerate(rows_as_dicts(cursor), 1):
            reader.row(row, number)
        model_rows: list[dict[str, Any]] = []
        if table_columns(conn, "session_model_usage"):
            model_rows = rows_as_dicts(conn.execute("SELECT * FROM session_model_usage WHERE session_id = ?", (session_id,)))
        for record in usage_records(srow, model_rows):
            book.add_usage(record)
            if record.model and record.model not in s.models:
                s.models.append(record.model)
        self._summarize(s, srow)
        self._link_delegations(conn, book, session_id)
        return self._ending(s, reader, Path(unit.path.rpartition("#")[0]), session_id, now)

    def _summarize(self, s: Session, row: dict[str, Any]) -> None:
        title = row.get("title")
        s.title = title.strip() if isinstance(title, str) and title.strip() else title_from_prompt(s.first_prompt)
        for field, value in (("cwd", row.get("cwd")), ("git_branch", row.get("git_branch"))):
            if isinstance(value, str) and value:
                setattr(s, field, value)
        s.project = project_of(s.cwd)
        started, ended = from_epoch(row.get("started_at"), unit="s"), from_epoch(row.get("ended_at"), unit="s")
        s.started = started or s.started
        if ended and (s.ended is None or ended > s.ended):
            s.ended = ended
        source = row.get("source")
        if isinstance(source, str) and source:
            s.origin = source
        parent = row.get("parent_session_id")
        if isinstance(parent, str) and parent:
            s.parent = ParentRef(agent=self.id, id=parent)
        for field in ("end_reason", "profile_name", "billing_provider", "display_name", "api_call_count", "tool_call_count"):
            value = row.get(field)
            if value not in (None, ""):
                s.extra[field] = value
        if row.get("archived") == 1:
            s.extra["hermes_archived"] = True

    def _link_delegations(self, conn: sqlite3.Connection, book: RecordBook, session_id: str) -> None:
        """``delegate_task`` runs a child session whose first prompt is one of the call's
        ``goals`` (the result lists them): the child's ``parent.tool_use_id`` is that call, and
        the call's ``extra.subagent`` names the child (``extra.subagents`` for a batch)."""
        s = book.session
        first = "SELECT content FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.id LIMIT 1"
        children = {
            prompt: child
            for child, prompt in conn.execute(f"SELECT s.id, ({first}) FROM sessions s WHERE s.parent_session_id = ?", (session_id,))
            if isinstance(prompt, str) and isinstance(child, str)
        }
        if children:
            for ev in book.events:
                goals = _goals(ev.result) if ev.kind == "tool_use" and ev.tool == "delegate_task" else []
                found = [children[g] for g in goals if g in children]
                if found:
                    ev.extra["subagents" if len(found) > 1 else "subagent"] = found if len(found) > 1 else found[0]
                    book.emit(ev)
        if s.parent is not None and s.first_prompt:
            rows = conn.execute(
                "SELECT tool_call_id, content FROM messages WHERE session_id = ? AND role = 'tool' AND tool_name = 'delegate_task'",
                (s.parent.id,),
            )
            for call_id, content in rows:
                if isinstance(call_id, str) and s.first_prompt in _goals(content):
                    s.parent.tool_use_id = call_id
                    break

    def _ending(self, s: Session, reader: MessageReader, db: Path, session_id: str, now: float) -> float | None:
        """``error`` when Hermes dumped the session's failed request (``sessions/request_dump_<id>_…``);
        ``interrupted`` when it ends waiting on a prompt or a call and stayed quiet."""
        try:
            names = os.listdir(db.parent / "sessions")
        except OSError:
            names = []
        if any(n.startswith(f"request_dump_{session_id}_") for n in names):
            s.ending = "error"
            return None
        waiting = reader.last_role == "user" or bool(reader.pending)
        if not waiting or s.extra.get("end_reason"):
            return None
        last = _epoch(s.ended)
        if last is not None and now - last < QUIET_SECONDS:
            return last + QUIET_SECONDS
        s.ending = "interrupted"
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        """``hermes --resume=<id>`` (``hermes --help`` 0.19.0: "--resume SESSION, -r SESSION
        Resume a previous session by ID or title"); a subagent's session is not resumed."""
        if session.parent is not None:
            return None
        return ResumeCommand(argv=["hermes", f"--resume={session.id}"], cwd=session.cwd)


def _goals(result: object) -> list[str]:
    """The ``goals`` of a ``delegate_task`` result (JSON text)."""
    if not isinstance(result, str) or '"goals"' not in result:
        return []
    try:
        doc = json.loads(result)
    except (ValueError, RecursionError):
        return []
    goals = doc.get("goals") if isinstance(doc, dict) else None
    return [g for g in goals if isinstance(g, str)] if isinstance(goals, list) else []


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
