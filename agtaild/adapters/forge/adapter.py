"""The Forge adapter: ``<base>/.forge.db``, one unit per ``conversations`` row.

Forge (``antinomyhq/forge``, read at commit 54cecac, April 2026) keeps its base directory in
``$FORGE_CONFIG``, else ``~/forge`` when that exists (the legacy place, until ``forge config
migrate``), else ``~/.forge`` — the same on macOS (``forge_config`` ``reader.rs``); the database
is ``<base>/.forge.db`` (``forge_domain`` ``env.rs``), in WAL mode. Its schema (the diesel
migrations of ``forge_repo``)::

    conversations(conversation_id TEXT PRIMARY KEY, title TEXT, workspace_id BIGINT,
                  context TEXT, created_at TIMESTAMP, updated_at TIMESTAMP, metrics TEXT)

``workspace_id`` is a hash of the working directory, so the cwd is read from the system
message Forge writes (``<current_working_directory>``). A subagent's conversation has
``"initiator": "agent"`` in its context and the task as its title; the parent's agent-tool
result names it (``{"aI": {"conversation_id": …}}``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.forge.context import ContextReader, usage_of
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, rows_as_dicts
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import BadJson, json_value, title_from_prompt
from agtaild.model import ParentRef, Session, UsageRecord, project_of

DATABASE = ".forge.db"
#: A conversation that ends on a call without its result and has not changed for this long
#: was cut off (Forge saves the context after every tool result).
QUIET_SECONDS = 120.0
#: A subagent's row unchanged this long before the newest write: its parent's result, which
#: names it, has been written (the agent tool returns as the subagent ends), so other rows'
#: writes no longer make it read again.
LINK_SECONDS = 3600.0
#: Where a subagent's context says so (Forge writes ``conversation_id`` then ``initiator``).
_AGENT_MARK = '"initiator":"agent"'


class ForgeAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "forge"
    name: ClassVar[str] = "Forge"
    env_vars: ClassVar[tuple[str, ...]] = ("FORGE_CONFIG",)
    root_help: ClassVar[str] = "the Forge base directory (~/.forge, or ~/forge), or its .forge.db"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "forge .forge.db (hand-made from forge 54cecac's schema and records)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("forge/synthetic-agtail",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        configured = env_path(env, "FORGE_CONFIG")
        if configured is not None:
            return [configured]
        legacy = home / "forge"
        return [legacy, home / ".forge"] if legacy.is_dir() else [home / ".forge"]

    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        return [root / DATABASE] if database_at(root / DATABASE) else []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        rows = conn.execute("SELECT conversation_id FROM conversations WHERE context IS NOT NULL")
        return [r[0] for r in rows if isinstance(r[0], str) and r[0] and "#" not in r[0]]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT title, created_at, updated_at, length(context), length(metrics),"
            f" instr(substr(context, 1, 300), '{_AGENT_MARK}') FROM conversations WHERE conversation_id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            return None
        found = [str(v) for v in row]
        if row[5]:  # a subagent: its parent's result (and so its link) lands after its last write
            (latest,) = conn.execute("SELECT max(updated_at) FROM conversations").fetchone()
            found.append("settled" if _apart(row[2], latest) > LINK_SECONDS else str(latest))
        return found

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        found = rows_as_dicts(
            conn.execute("SELECT * FROM conversations WHERE conversation_id = ?", (session_id,))
        )
        row = found[0] if found else {}
        s = book.session
        book.count("metadata")  # the conversations row itself
        context = _decode(row.get("context"))
        reader = ContextReader(book)
        if isinstance(context, BadJson):
            book.bad(2)  # the context cell of this row (a torn write, or damage)
            s.extra["context_error"] = str(context)
            s.truncated = True
        elif isinstance(context, dict):
            messages = context.get("messages")
            for number, entry in enumerate(messages if isinstance(messages, list) else [], 1):
                reader.entry(entry, number)
            total = usage_of(context.get("usage"))
            if not book.usage and total is not None:  # older rows: one total for the context
                book.add_usage(
                    UsageRecord(key="context", ts=None, model=s.models[-1] if s.models else None, usage=total)
                )
            if context.get("initiator") == "agent":
                s.origin = "subagent"
                s.parent = self._parent(conn, session_id)
        self._summarize(s, row)
        return self._ending(s, reader, now)

    def _summarize(self, s: Session, row: dict[str, Any]) -> None:
        title = row.get("title")
        s.title = (
            title.strip() if isinstance(title, str) and title.strip() else title_from_prompt(s.first_prompt)
        )
        s.project = project_of(s.cwd)
        s.started = norm_iso(row.get("created_at"))
        s.ended = norm_iso(row.get("updated_at")) or s.started
        changed = _files_changed(_decode(row.get("metrics")))
        if changed:
            s.extra["files_changed"] = changed
        workspace = row.get("workspace_id")
        if isinstance(workspace, int):
            s.extra["workspace_id"] = workspace

    def _parent(self, conn: sqlite3.Connection, session_id: str) -> ParentRef | None:
        """The conversation whose agent-tool result names this one (and that call's id)."""
        rows = conn.execute(
            "SELECT conversation_id, context FROM conversations WHERE conversation_id != ? AND instr(context, ?) > 0",
            (session_id, f'"conversation_id":"{session_id}"'),
        )
        for parent_id, text in rows:
            context = _decode(text)
            if not isinstance(parent_id, str) or not isinstance(context, dict):
                continue
            book = RecordBook(Session(agent=self.id, id=parent_id))
            reader = ContextReader(book)
            messages = context.get("messages")
            for number, entry in enumerate(messages if isinstance(messages, list) else [], 1):
                reader.entry(entry, number)
            call = next((cid for cid, child in reader.children.items() if child == session_id), None)
            if call is not None:
                return ParentRef(agent=self.id, id=parent_id, tool_use_id=call)
        return None

    def _ending(self, s: Session, reader: ContextReader, now: float) -> float | None:
        """``interrupted`` when the conversation ends on a call without its result and has
        been quiet for :data:`QUIET_SECONDS` (Forge keeps no end marker)."""
        if not reader.pending:
            return None
        last = _epoch(s.ended)
        if last is not None and now - last < QUIET_SECONDS:
            return last + QUIET_SECONDS
        s.ending = "interrupted"
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        """``forge --conversation-id=<id>`` in the cwd (``forge_main`` ``cli.rs``: "When
        provided, resumes or continues an existing conversation"); a subagent's is not."""
        if session.parent is not None or session.origin == "subagent":
            return None
        return ResumeCommand(argv=["forge", f"--conversation-id={session.id}"], cwd=session.cwd)


def _files_changed(metrics: Any) -> dict[str, dict[str, Any]]:
    """Forge's own file counters (``metrics.files_changed``: path → one operation, or a list
    of them in older rows, the last one current)."""
    changed = metrics.get("files_changed") if isinstance(metrics, dict) else None
    out: dict[str, dict[str, Any]] = {}
    for path, op in changed.items() if isinstance(changed, dict) else ():
        last = op[-1] if isinstance(op, list) and op else op
        if isinstance(last, dict):
            out[path] = {k: last[k] for k in ("lines_added", "lines_removed", "tool") if k in last}
    return out


def _decode(value: Any) -> Any:
    """A JSON cell: its value, None when empty, a BadJson when it does not decode."""
    if not isinstance(value, str | bytes) or not value.strip():
        return None
    try:
        return json_value(value)
    except BadJson as exc:
        return exc


def _apart(earlier: Any, later: Any) -> float:
    """Seconds from one diesel timestamp to another (0 when either does not parse)."""
    first, second = _epoch(norm_iso(earlier)), _epoch(norm_iso(later))
    return second - first if first is not None and second is not None else 0.0


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
