"""Kiro CLI's classic SQLite store, ``data.sqlite3`` (the Amazon Q Developer CLI lineage).

Two tables hold conversations, each row one whole ``ConversationState`` JSON document:
``conversations`` (key = cwd; one conversation per directory, kiro-cli 1.x) and
``conversations_v2`` (key = cwd, ``conversation_id``, ``created_at``/``updated_at`` in ms;
several per directory). Columns are selected by name since the DDL differs between versions.

Unit ids inside the database (``<db>#<id>``): ``v2:<conversation_id>`` and
``v1:<url-quoted cwd>``; a v1 row whose conversation also sits in ``conversations_v2``
(migrated) is left out. Accounting: the row itself is one metadata record, and every user
and assistant message of its ``history`` is one record.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, table_columns
from agtaild.adapters.kit.stamps import from_epoch, norm_iso, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, project_of


class KiroSqliteReader(SqliteSessionAdapter):
    """The classic-store reader; :class:`agtaild.adapters.kiro.adapter.KiroAdapter` dispatches to it."""

    id: ClassVar[str] = "kiro"

    def databases(self, root: Path) -> list[Path]:
        if root.is_dir():
            root = root / "data.sqlite3"
        return [root] if database_at(root) else []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        ids: list[str] = []
        v2_ids: set[str] = set()
        if {"conversation_id", "value"} <= table_columns(conn, "conversations_v2"):
            for (cid,) in conn.execute("SELECT conversation_id FROM conversations_v2 ORDER BY created_at"):
                if isinstance(cid, str) and cid:
                    v2_ids.add(cid)
                    ids.append(f"v2:{cid}")
        if {"key", "value"} <= table_columns(conn, "conversations"):
            query = (
                "SELECT key, CASE WHEN json_valid(value) THEN json_extract(value, '$.conversation_id') END"
                " FROM conversations ORDER BY key"
            )
            for key, cid in conn.execute(query):
                if isinstance(key, str) and cid not in v2_ids:
                    ids.append("v1:" + quote(key, safe=""))
        return ids

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        table, key = _locate(session_id)
        if table == "conversations_v2":
            row = conn.execute(
                "SELECT updated_at, length(value) FROM conversations_v2 WHERE conversation_id = ?", (key,)
            ).fetchone()
        else:
            row = conn.execute("SELECT length(value) FROM conversations WHERE key = ?", (key,)).fetchone()
        return None if row is None else tuple(row)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        table, key = _locate(session_id)
        s = book.session
        s.extra["store"] = "sqlite-v2" if table == "conversations_v2" else "sqlite-v1"
        if table == "conversations_v2":
            row = conn.execute(
                "SELECT key, value, created_at, updated_at FROM conversations_v2 WHERE conversation_id = ?",
                (key,),
            ).fetchone()
            cwd, value, created, updated = row
            s.id = key
            for ms in (created, updated):
                s.started, s.ended = widen(s.started, s.ended, from_epoch(ms, unit="ms"))
        else:
            cwd, value = conn.execute("SELECT key, value FROM conversations WHERE key = ?", (key,)).fetchone()
        if isinstance(cwd, str) and cwd:
            s.cwd = cwd
            s.project = project_of(cwd)
        try:
            doc = json.loads(value) if isinstance(value, str | bytes) else None
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            book.bad(1)
            return None
        book.count("metadata")
        ConversationReader(book).read(doc)
        return None


class ConversationReader:
    """One ``ConversationState`` document → events (user/assistant messages of ``history``)."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.pending: dict[str, Event] = {}
        self.record = 1

    def _emit(self, kind: str, **fields: Any) -> Event:
        return self.book.emit(Event(seq=-1, kind=kind, source={"row": self.record}, **fields))

    def read(self, doc: dict[str, Any]) -> None:
        s = self.book.session
        if isinstance(doc.get("conversation_id"), str) and doc["conversation_id"]:
            s.id = doc["conversation_id"]
        history = doc.get("history") if isinstance(doc.get("history"), list) else []
        for entry in history or []:
            if not isinstance(entry, dict):
                self.record += 1
                self._emit("unknown", raw=entry)
                self.book.count("events")
                continue
            meta = _dict(entry.get("request_metadata"))
            if "user" in entry:
                self.record += 1
                self.book.count(self._user(entry["user"]))
            if "assistant" in entry:
                self.record += 1
                self.book.count(self._assistant(entry["assistant"], meta))
        info = _dict(doc.get("model_info"))
        model = info.get("model_id") or info.get("model_name")
        if isinstance(model, str) and model and model not in s.models:
            s.models.append(model)
        if doc.get("latest_summary"):
            s.compactions += 1
            s.extra["latest_summary"] = doc["latest_summary"]
        s.title = title_from_prompt(s.first_prompt)

    def _user(self, user: Any) -> Any:
        s = self.book.session
        if not isinstance(user, dict):
            self._emit("unknown", raw=user)
            return "events"
        ts = norm_iso(user.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        cwd = _dict(_dict(user.get("env_context")).get("env_state")).get("current_working_directory")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd, s.project = cwd, project_of(cwd)
        content = _dict(user.get("content"))
        if "Prompt" in content:
            self._prompt(_dict(content["Prompt"]).get("prompt"), ts)
            return "events"
        if "ToolUseResults" in content or "CancelledToolUses" in content:
            body = _dict(content.get("ToolUseResults") or content.get("CancelledToolUses"))
            emitted = False
            if isinstance(body.get("prompt"), str) and body["prompt"]:
                self._prompt(body["prompt"], ts)
                emitted = True
            for result in body.get("tool_use_results") or []:
                emitted = self._result(result, ts) or emitted
            return "events" if emitted else "merged"
        self._emit("unknown", role="user", ts=ts, raw=user)
        return "events"

    def _prompt(self, prompt: Any, ts: str | None) -> None:
        s = self.book.session
        text = prompt if isinstance(prompt, str) else None
        self._emit("text", role="user", text=text, ts=ts)
        s.messages += 1
        if text and s.first_prompt is None:
            s.first_prompt = text

    def _result(self, result: Any, ts: str | None) -> bool:
        """Merge a tool result into its call; True when it had to become its own event."""
        if not isinstance(result, dict):
            self._emit("unknown", raw=result)
            return True
        parts: list[str] = []
        for item in result.get("content") or []:
            if isinstance(item, dict) and isinstance(item.get("Text"), str):
                parts.append(item["Text"])
            elif isinstance(item, dict) and "Json" in item:
                parts.append(json.dumps(item["Json"], ensure_ascii=False))
        text = "\n".join(parts) if parts else None
        is_error = str(result.get("status", "")).lower() == "error"
        call = self.pending.pop(str(result.get("tool_use_id")), None)
        if call is not None:
            call.result, call.is_error = text, is_error
            call.extra["result_ts"] = ts
            self.book.emit(call)
            return False
        self._emit("tool_result", role="tool", result=text, is_error=is_error, ts=ts,
                   tool_use_id=_str(result.get("tool_use_id")))  # fmt: skip
        return True

    def _assistant(self, assistant: Any, meta: dict[str, Any]) -> Any:
        s = self.book.session
        model = meta.get("model_id") if isinstance(meta.get("model_id"), str) else None
        if model and model not in s.models:
            s.models.append(model)
        ts = from_epoch(meta.get("request_start_timestamp_ms"), unit="ms")
        s.started, s.ended = widen(
            s.started, s.ended, from_epoch(meta.get("stream_end_timestamp_ms"), unit="ms")
        )
        body = None
        if isinstance(assistant, dict):
            body = assistant.get("Response") or assistant.get("ToolUse")
        if not isinstance(body, dict):
            self._emit("unknown", role="assistant", ts=ts, raw=assistant)
            return "events"
        uuid = body.get("message_id") if isinstance(body.get("message_id"), str) else None
        content = body.get("content")
        emitted = False
        if isinstance(content, str) and content:
            self._emit("text", role="assistant", text=content, ts=ts, model=model, uuid=uuid)
            emitted = True
        for use in body.get("tool_uses") or []:
            if not isinstance(use, dict):
                continue
            ev = self._emit("tool_use", role="assistant", tool=_str(use.get("name")), input=use.get("args"),
                            ts=ts, model=model, uuid=uuid, tool_use_id=_str(use.get("id")))  # fmt: skip
            if isinstance(use.get("id"), str):
                self.pending[use["id"]] = ev
            emitted = True
        if not emitted:
            self._emit("text", role="assistant", text="", ts=ts, model=model, uuid=uuid)
        s.messages += 1
        return "events"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _locate(session_id: str) -> tuple[str, str]:
    """Unit id → (table, key in that table)."""
    if session_id.startswith("v1:"):
        return "conversations", unquote(session_id[3:])
    return "conversations_v2", session_id.removeprefix("v2:")
