"""Cursor IDE composers in ``<Cursor User>/globalStorage/state.vscdb`` (as far as documented).

The editor's global SQLite (FORMATS-longtail §1c; peer write-ups, no real file seen here) has
a table ``cursorDiskKV(key, value)``: ``composerData:<composerId>`` holds one composer (chat):
``name``, ``createdAt``/``lastUpdatedAt`` (ms), ``status``, ``modelConfig.modelName``,
``unifiedMode``/``forceMode``, the ordered ``fullConversationHeadersOnly[{bubbleId, type}]``
(modern) or an inline ``conversation[]`` (legacy), ``subComposerIds``. Each message is a row
``bubbleId:<composerId>:<bubbleId>``: ``type`` 1 = user, 2 = assistant, ``text``,
``thinking.text``, ``toolFormerData`` (a tool call with its result), ``tokenCount``
``{inputTokens, outputTokens}``, ``createdAt`` (ISO), ``modelInfo.modelName``.

The database is the editor's live store (often large, in WAL mode): it is opened read-only
through :mod:`sqlite_db` and each composer is re-read only when its rows change. Composers with
no messages (the editor creates many) are not sessions. Composers are not resumable.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, table_columns
from agtaild.adapters.kit.stamps import any_time, from_epoch, widen
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.model import Event, ParentRef, Usage, UsageRecord

_PREFIX = "composerData:"


def _json(value: Any) -> Any:
    """One row's JSON value, or None when it is none (or does not decode: each row on its own)."""
    if not isinstance(value, bytes | str):
        return None
    try:
        return json_value(value)
    except BadJson:
        return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _bubble_range(composer_id: str) -> tuple[str, str]:
    """Key bounds of ``bubbleId:<composerId>:*`` (a range scan instead of LIKE)."""
    return f"bubbleId:{composer_id}:", f"bubbleId:{composer_id};"


class CursorIdeReader(SqliteSessionAdapter):
    """The ``state.vscdb`` part of the cursor adapter (it delegates here for such units)."""

    id: ClassVar[str] = "cursor"

    def databases(self, root: Path) -> list[Path]:
        for candidate in (root, root / "state.vscdb", root / "globalStorage" / "state.vscdb"):
            if database_at(candidate):
                return [candidate]
        return []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        if not {"key", "value"} <= table_columns(conn, "cursorDiskKV"):
            return []
        out: list[str] = []
        rows = conn.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (_PREFIX, "composerData;"))
        for key, value in rows:
            if not isinstance(key, str) or not isinstance(value, bytes | str):
                continue
            try:
                doc = json_value(value)
            except BadJson:  # one bad row is one bad unit (read as one bad record), not a bad database
                out.append(key[len(_PREFIX) :])
                continue
            if isinstance(doc, dict) and _messages_of(doc):
                out.append(key[len(_PREFIX) :])
        return out

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute("SELECT length(value), value FROM cursorDiskKV WHERE key = ?", (_PREFIX + session_id,)).fetchone()
        if row is None:
            return None
        lo, hi = _bubble_range(session_id)
        count, total = conn.execute(
            "SELECT count(*), total(length(value)) FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi)
        ).fetchone()
        doc = _json(row[1])
        updated = doc.get("lastUpdatedAt") if isinstance(doc, dict) else None
        return [row[0], count, int(total or 0), updated if isinstance(updated, int | str) else None]

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (_PREFIX + session_id,)).fetchone()
        doc = _json(row[0]) if row else None
        s = book.session
        s.resumable = False
        s.extra["ide_composer"] = True
        if not isinstance(doc, dict):
            book.bad(1)
            return None
        book.count("metadata")  # the composerData row
        s.title = _str(doc.get("name"))
        s.started = from_epoch(doc.get("createdAt"), unit="ms")
        s.ended = from_epoch(doc.get("lastUpdatedAt"), unit="ms")
        config = doc.get("modelConfig")
        model = _str(config.get("modelName")) if isinstance(config, dict) else None
        if model and model != "default":
            s.models.append(model)
        for key in ("status", "unifiedMode", "forceMode"):
            if _str(doc.get(key)):
                s.extra[key] = doc[key]
        parent = _str(doc.get("parentComposerId"))
        if parent:
            s.parent = ParentRef(agent="cursor", id=parent)
        lo, hi = _bubble_range(session_id)
        bubbles: dict[str, Any] = {}
        for key, value in conn.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi)):
            if isinstance(key, str):
                bubbles[key[len(lo) :]] = value
        used: set[str] = set()
        for i, entry in enumerate(_messages_of(doc)):
            if isinstance(entry, dict) and isinstance(entry.get("bubbleId"), str) and "type" in entry and "text" not in entry:
                bid = entry["bubbleId"]
                used.add(bid)
                if bid not in bubbles:
                    book.count("skipped")  # a header whose bubble row is gone
                    continue
                bubble = _json(bubbles[bid])
                if not isinstance(bubble, dict):
                    book.bad(i + 2)
                    continue
            else:
                bubble = entry  # a legacy inline conversation entry
            book.count(_bubble(book, bubble, i))
        for bid in bubbles:
            if bid not in used:
                book.count("skipped")  # bubbles not in the conversation (drafts, rewritten turns)
        if not s.title and s.first_prompt:
            s.title = s.first_prompt.strip().splitlines()[0][:200]
        return None


def _messages_of(doc: dict[str, Any]) -> list[Any]:
    for key in ("fullConversationHeadersOnly", "conversation"):
        value = doc.get(key)
        if isinstance(value, list) and value:
            return value
    return []


def _bubble(book: RecordBook, bubble: Any, index: int) -> Category:
    s = book.session
    src = {"bubble": index}
    if not isinstance(bubble, dict):
        book.emit(Event(seq=-1, kind="unknown", source=src, raw=bubble))
        return "events"
    kind = bubble.get("type")
    role = "user" if kind == 1 else "assistant" if kind == 2 else None
    if role is None:
        book.emit(Event(seq=-1, kind="unknown", source=src, raw=bubble))
        return "events"
    ts = any_time(bubble.get("createdAt"))
    s.started, s.ended = widen(s.started, s.ended, ts)
    info = bubble.get("modelInfo")
    model = _str(info.get("modelName")) if isinstance(info, dict) else None
    if model and model not in s.models:
        s.models.append(model)
    uuid = _str(bubble.get("bubbleId"))
    first: Event | None = None
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and _str(thinking.get("text")):
        first = book.emit(Event(seq=-1, kind="thinking", role=role, ts=ts, text=thinking["text"], model=model, uuid=uuid, source=src))
    text = _str(bubble.get("text"))
    if text:
        ev = book.emit(Event(seq=-1, kind="text", role=role, ts=ts, text=text, model=model, uuid=uuid, source=src))
        first = first or ev
        if role == "user" and s.first_prompt is None:
            s.first_prompt = text
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and (_str(tool.get("name")) or _str(tool.get("toolCallId"))):
        status = _str(tool.get("status"))
        ev = book.emit(
            Event(
                seq=-1, kind="tool_use", role="assistant", ts=ts, model=model, uuid=uuid, source=src,
                tool=_str(tool.get("name")), tool_use_id=_str(tool.get("toolCallId")),
                input=_json(tool.get("rawArgs")) or _json(tool.get("params")) or tool.get("params"),
                result=_json(tool.get("result")) or tool.get("result"),
                is_error=status in ("error", "failed", "cancelled") if status else None,
                extra={"status": status} if status else {},
            )
        )
        first = first or ev
    tokens = bubble.get("tokenCount")
    if isinstance(tokens, dict):
        usage = Usage(input_tokens=_int(tokens.get("inputTokens")), output_tokens=_int(tokens.get("outputTokens"))).fix_total()
        if not usage.is_zero():
            book.add_usage(UsageRecord(key=f"bubble:{uuid or index}", ts=ts, model=model, usage=usage))
            if first is not None:
                first.usage = usage
    if first is None:
        return "skipped"  # an empty bubble (a placeholder the editor fills later)
    s.messages += 1
    return "events"
