"""The Warp adapter: agent conversations in ``warp.sqlite``, one unit per conversation id.

Warp (``warpdotdev/warp``, commit 19548ae, August 2026) opens
``secure_state_dir().unwrap_or(state_dir())/warp.sqlite`` (``app/src/persistence/sqlite.rs``,
``crates/warp_core/src/paths.rs``): on Linux ``directories``' state dir of the app
``Warp-Terminal`` (``$XDG_STATE_HOME/warp-terminal``, or ``~/.local/state/warp-terminal``; other
channels ``warp-terminal-preview``, ``-dev``, …, a data profile adds ``-<profile>``), on macOS
the app group container ``~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application
Support/dev.warp.Warp-Stable`` (older builds: ``~/Library/Application
Support/dev.warp.Warp-Stable``). The terminal UI (``warp-tui``) keeps its own database in a
``tui`` folder below it.

A conversation's id is the ``AIConversationId`` (a UUID) that ``agent_conversations``,
``ai_queries`` and the blocks' ``ai_metadata`` share; one that only ``ai_queries`` names (older
builds, or a conversation Warp evicted past its 200) is a session too.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, rows_as_dicts, table_columns
from agtaild.adapters.kit.stamps import widen
from agtaild.adapters.kit.values import BadJson, title_from_prompt
from agtaild.adapters.warp.rows import RowReader, decode, naive_utc
from agtaild.model import ParentRef, Session, project_of

DB_NAME = "warp.sqlite"
#: Warp's Apple team id (``crates/warp_core/src/macos.rs``): its app group is ``<team>.dev.warp``.
APP_GROUP = "2BBY89MBSN.dev.warp"
#: The state folders of the release channels: ``directories``' project path of the app name
#: (Linux: "Warp-Terminal", "Warp-Terminal-Preview", "Warp-Oss", lower-cased; macOS: the bundle id).
LINUX_FOLDERS = ("warp-terminal", "warp-terminal-preview", "warp-oss")
MAC_FOLDERS = ("dev.warp.Warp-Stable", "dev.warp.Warp-Preview", "dev.warp.WarpOss")
#: The blocks of one conversation: their ``ai_metadata`` names it.
_BLOCKS = "SELECT * FROM blocks WHERE ai_metadata IS NOT NULL AND instr(ai_metadata, ?) > 0"


class WarpAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "warp"
    name: ClassVar[str] = "Warp (agent mode)"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_STATE_HOME",)
    root_help: ClassVar[str] = "Warp's state folder (~/.local/state/warp-terminal) or its warp.sqlite"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "warp.sqlite (hand-made from warp 19548ae's schema and serde shapes)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("warp/synthetic-agtail",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Each release channel's state folder (Stable, Preview and the open-source build)."""
        if sys.platform == "darwin":
            support = home / "Library" / "Application Support"
            group = home / "Library" / "Group Containers" / APP_GROUP / "Library" / "Application Support"
            return [base / name for base in (group, support) for name in MAC_FOLDERS]
        state = env_path(env, "XDG_STATE_HOME") or home / ".local" / "state"
        return [state / name for name in LINUX_FOLDERS]

    def databases(self, root: Path) -> list[Path]:
        """``root`` itself, ``root/warp.sqlite`` (and its ``tui/``), or, for the folder that holds
        Warp's per-channel folders (the state dir, Application Support), each
        ``warp-terminal*/`` or ``dev.warp.Warp*/`` folder's."""
        if database_at(root):
            return [root]
        found: list[Path] = []
        for folder in [root, *self._channel_folders(root)]:
            for db in (folder / DB_NAME, folder / "tui" / DB_NAME):
                if database_at(db):
                    found.append(db)
        return found

    @staticmethod
    def _channel_folders(root: Path) -> list[Path]:
        if not root.is_dir() or (root / DB_NAME).exists():
            return []
        return [
            Path(e.path)
            for e in scan.entries(root)
            if e.name.startswith(("warp-terminal", "dev.warp.Warp")) and scan.is_dir(e)
        ]

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        ids: dict[str, None] = {}
        if "conversation_id" in table_columns(conn, "agent_conversations"):
            ids.update(
                (r[0], None)
                for r in conn.execute("SELECT conversation_id FROM agent_conversations ORDER BY id")
            )
        if "conversation_id" in table_columns(conn, "ai_queries"):
            ids.update(
                (r[0], None)
                for r in conn.execute("SELECT conversation_id FROM ai_queries GROUP BY 1 ORDER BY min(id)")
            )
        return [i for i in ids if isinstance(i, str) and i and "#" not in i]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        tables = {
            t: table_columns(conn, t) for t in ("agent_conversations", "ai_queries", "blocks", "agent_tasks")
        }
        parts: list[Any] = []
        if tables["agent_conversations"]:
            parts.append(conn.execute(
                "SELECT last_modified_at, length(conversation_data), summary FROM agent_conversations WHERE conversation_id = ?",
                (session_id,)).fetchone())  # fmt: skip
        if tables["ai_queries"]:
            parts.append(conn.execute(
                "SELECT count(*), max(id), group_concat(output_status) FROM ai_queries WHERE conversation_id = ?",
                (session_id,)).fetchone())  # fmt: skip
        if "ai_metadata" in tables["blocks"]:
            parts.append(conn.execute(
                "SELECT count(*), max(id), max(completed_ts), total(length(stylized_output)) FROM blocks"
                " WHERE ai_metadata IS NOT NULL AND instr(ai_metadata, ?) > 0", (session_id,)).fetchone())  # fmt: skip
        if tables["agent_tasks"]:
            parts.append(conn.execute(
                "SELECT count(*), max(last_modified_at), total(length(task)) FROM agent_tasks WHERE conversation_id = ?",
                (session_id,)).fetchone())  # fmt: skip
        exists = bool(tables["agent_conversations"]) and parts[0] is not None
        exists = exists or (
            bool(tables["ai_queries"]) and parts[1 if tables["agent_conversations"] else 0][0] > 0
        )
        return [[str(v) for v in p] if p is not None else None for p in parts] if exists else None

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        s = book.session
        reader = RowReader(book)
        meta = self._conversation(conn, session_id, book)
        # (time, 0 for a query / 1 for a block, row id, the row, its ai_metadata, completed time)
        rows: list[tuple[str, int, int, dict[str, Any], dict[str, Any] | None, str | None]] = []
        if table_columns(conn, "ai_queries"):
            for row in rows_as_dicts(
                conn.execute("SELECT * FROM ai_queries WHERE conversation_id = ? ORDER BY id", (session_id,))
            ):
                rows.append((naive_utc(row.get("start_ts")) or "", 0, len(rows), row, None, None))
        if "ai_metadata" in table_columns(conn, "blocks"):
            for row in rows_as_dicts(conn.execute(_BLOCKS + " ORDER BY id", (session_id,))):
                block_meta = decode(row.get("ai_metadata"))
                if isinstance(block_meta, dict) and block_meta.get("conversation_id") == session_id:
                    done = naive_utc(row.get("completed_ts"))
                    rows.append(
                        (naive_utc(row.get("start_ts")) or done or "", 1, len(rows), row, block_meta, done)
                    )
        rows.sort(key=lambda r: r[:3])
        for ts, _order, _n, row, block_meta, done in rows:
            s.started, s.ended = widen(s.started, s.ended, ts or None)
            if block_meta is None:
                reader.query(row, ts or None)
            else:
                reader.block(row, block_meta, ts or None, done)
                s.started, s.ended = widen(s.started, s.ended, done)
        if table_columns(conn, "agent_tasks"):
            for row in rows_as_dicts(
                conn.execute("SELECT * FROM agent_tasks WHERE conversation_id = ? ORDER BY id", (session_id,))
            ):
                reader.task(row)
        for model in reader.models:
            if model not in s.models:
                s.models.append(model)
        self._summarize(conn, s, meta, reader)
        return None

    def _conversation(self, conn: sqlite3.Connection, session_id: str, book: RecordBook) -> dict[str, Any]:
        """The ``agent_conversations`` row (one metadata record): its decoded data and summary."""
        if not table_columns(conn, "agent_conversations"):
            return {}
        found = rows_as_dicts(
            conn.execute("SELECT * FROM agent_conversations WHERE conversation_id = ?", (session_id,))
        )
        if not found:
            return {}
        row = found[0]
        data, summary = decode(row.get("conversation_data")), decode(row.get("summary"))
        if isinstance(data, BadJson):
            book.bad(row["id"] if isinstance(row.get("id"), int) else 0)
            book.session.extra["conversation_data_error"] = str(data)
            book.session.truncated = True
        else:
            book.count("metadata")
        return {
            "data": data if isinstance(data, dict) else {},
            "summary": summary if isinstance(summary, dict) else {},
            "modified": naive_utc(row.get("last_modified_at")),
        }

    def _summarize(
        self, conn: sqlite3.Connection, s: Session, meta: dict[str, Any], reader: RowReader
    ) -> None:
        data, summary = meta.get("data") or {}, meta.get("summary") or {}
        s.started, s.ended = widen(s.started, s.ended, meta.get("modified"))
        title = summary.get("title") if isinstance(summary.get("title"), str) else None
        s.title = title.strip() if title and title.strip() else title_from_prompt(s.first_prompt)
        if not s.cwd and isinstance(summary.get("initial_working_directory"), str):
            s.cwd = summary["initial_working_directory"]
        s.project = project_of(s.cwd)
        if summary.get("is_unlisted_auto_code_diff") is True:
            s.programmatic = True
        usage = data.get("conversation_usage_metadata")
        if isinstance(usage, dict):
            # Warp keeps one total per model (its own, BYOK or a custom endpoint's tokens), never
            # input and output apart: kept as it is, not turned into usage records.
            kept = {
                k: usage[k]
                for k in ("token_usage", "credits_spent", "was_summarized", "total_provider_cost_in_cents")
                if k in usage
            }
            s.extra["warp_usage"] = kept
            if usage.get("was_summarized") is True:
                s.compactions = max(s.compactions, 1)
            for row in usage.get("token_usage") or []:
                model = row.get("model_id") if isinstance(row, dict) else None
                if isinstance(model, str) and model and model not in s.models:
                    s.models.append(model)
        for key in ("agent_name", "run_id", "server_conversation_token"):
            if isinstance(data.get(key), str) and data[key]:
                s.extra[key] = data[key]
        parent = data.get("parent_conversation_id")
        if isinstance(parent, str) and parent:
            s.parent = ParentRef(agent=self.id, id=parent)
            s.origin = "subagent"
        fork = data.get("forked_from_server_conversation_token")
        if isinstance(fork, str) and fork:
            source = self._by_server_token(conn, fork)
            if source is not None:
                s.forked_from = ParentRef(agent=self.id, id=source)
            s.extra["forked_from_server_conversation_token"] = fork
        if reader.last_status == "Failed":
            s.ending = "error"
        elif reader.last_status == "Cancelled":
            s.ending = "interrupted"
        s.resumable = False

    @staticmethod
    def _by_server_token(conn: sqlite3.Connection, token: str) -> str | None:
        rows = conn.execute(
            "SELECT conversation_id, conversation_data FROM agent_conversations WHERE instr(conversation_data, ?) > 0",
            (f'"server_conversation_token":"{token}"',),
        )
        for cid, text in rows:
            data = decode(text)
            if (
                isinstance(data, dict)
                and data.get("server_conversation_token") == token
                and isinstance(cid, str)
            ):
                return cid
        return None
