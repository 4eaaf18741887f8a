"""The Amazon Q Developer CLI adapter: ``data.sqlite3``, one unit per ``conversations`` row.

Q (``aws/amazon-q-developer-cli`` 1.19.7, commit 15cc8f3, April 2026) keeps its database at
``dirs::data_local_dir()/amazon-q/data.sqlite3`` (``util/paths.rs``): ``$XDG_DATA_HOME`` or
``~/.local/share`` on Linux, ``~/Library/Application Support`` on macOS. Migration
``007_conversations_table`` made ``conversations(key TEXT PRIMARY KEY, value TEXT)``: the key is
the working directory ``q chat`` ran in, the value the ConversationState JSON
(``Database::set_conversation_by_path``, after every answer). A new conversation in the same
directory overwrites the row, so each directory holds only its last conversation; the source
has no other conversations table (``conversations_v2`` is Kiro CLI's, read by that adapter).

Unit ids inside the database are ``<url-quoted cwd>`` (the row's key); the session id is the
conversation's own ``conversation_id``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from agtaild.adapters.amazon_q.history import HistoryReader
from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at
from agtaild.adapters.kit.values import BadJson, json_value, title_from_prompt
from agtaild.model import Session, project_of

DB_NAME = "data.sqlite3"
#: A conversation whose last answer called tools that have no result yet, quiet this long,
#: was cut off (Q saves the state after each answer, before running its tools).
QUIET_SECONDS = 120.0


class AmazonQAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "amazon-q"
    name: ClassVar[str] = "Amazon Q Developer CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME",)
    root_help: ClassVar[str] = "the amazon-q data folder (~/.local/share/amazon-q) or its data.sqlite3"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "q 1.19.7 data.sqlite3 conversations (hand-made from its source)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("amazon-q/synthetic-agtail",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if sys.platform == "darwin":
            data = home / "Library" / "Application Support"
        else:
            data = env_path(env, "XDG_DATA_HOME") or home / ".local" / "share"
        return [data / "amazon-q"]

    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        return [root / DB_NAME] if database_at(root / DB_NAME) else []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        if not _has_conversations(conn):
            return []  # an older Q database (before migration 007): no conversations yet
        rows = conn.execute("SELECT key FROM conversations WHERE value IS NOT NULL ORDER BY key")
        return [quote(k, safe="") for (k,) in rows if isinstance(k, str) and k]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT length(value), substr(value, 1, 120), substr(value, -200) FROM conversations WHERE key = ?",
            (unquote(session_id),),
        ).fetchone()
        return None if row is None else [str(v) for v in row]

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        key = unquote(session_id)
        row = conn.execute("SELECT value FROM conversations WHERE key = ?", (key,)).fetchone()
        s = book.session
        s.cwd = key
        book.count("metadata")  # the row itself
        doc: Any = None
        try:
            doc = json_value(row[0]) if row and isinstance(row[0], str | bytes) else None
        except BadJson as exc:
            book.bad(2)
            s.extra["value_error"] = str(exc)
            s.truncated = True
        reader = HistoryReader(book)
        if isinstance(doc, dict):
            cid = doc.get("conversation_id")
            if isinstance(cid, str) and cid:
                s.id = cid
            reader.read(doc)
            s.cwd = key  # the directory Q keyed it by (also each prompt's env_state)
        elif doc is not None:
            book.bad(2)
        s.project = project_of(s.cwd)
        s.title = title_from_prompt(s.first_prompt)
        s.extra["store_key"] = key
        return self._ending(s, reader, now)

    def _ending(self, s: Session, reader: HistoryReader, now: float) -> float | None:
        if not reader.pending:
            return None
        last = _epoch(s.ended)
        if last is not None and now - last < QUIET_SECONDS:
            return last + QUIET_SECONDS
        s.ending = "interrupted"
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        """``q chat --resume`` in the conversation's directory (``cli/chat/mod.rs`` ChatArgs:
        "Resumes the previous conversation from this directory"): Q takes no id, the directory
        names the conversation, so it resumes this one only while it is that directory's last."""
        if not session.cwd:
            return None
        return ResumeCommand(argv=["q", "chat", "--resume"], cwd=session.cwd)


def _has_conversations(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'conversations'").fetchone()
        is not None
    )


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
