"""Cursor IDE composers in ``<Cursor User>/globalStorage/state.vscdb`` (as far as documented).

The editor's global SQLite (FORMATS-longtail §1c; peer write-ups, no real file seen here) has
a table ``cursorDiskKV(key, value)``: ``composerData:<composerId>`` holds one composer (chat):
``name``, ``createdAt``/``lastUpdatedAt`` (ms), ``status``, ``modelConfig.modelName``,
``unifiedMode``/``forceMode``, the ordered ``fullConversationHeadersOnly[{bubbleId, type}]``
(modern) or an inline ``conversation[]`` (legacy), ``subComposerIds``. Each message is a row
``bubbleId:<composerId>:<bubbleId>``: ``type`` 1 = user, 2 = assistant, ``text``,
``thinking.text``, ``toolFormerData`` (a tool call with its result), ``tokenCount``
``{inputTokens, outputTokens}``, ``createdAt`` (ISO), ``modelInfo.modelName``.

Older builds (late 2024; a real workspace database, tests/corpus/cursor/cursor-history) kept
the composers of a workspace in that workspace's own ``workspaceStorage/<hash>/state.vscdb``:
table ``ItemTable(key, value)``, row ``composer.composerData`` = ``{allComposers[{composerId,
name?, createdAt, lastUpdatedAt?, status, conversation[{type, bubbleId, text, richText?,
codeBlocks?, context?, relevantFiles, capabilityTypes?}]…}], selectedComposerId,
composerDataVersion}`` — every message inline, no tool calls, thinking or token counts.
``workspace.json`` beside it names the folder (the cwd). Newer builds keep only headers there.

The database is the editor's live store (often large, in WAL mode): it is opened read-only
through :mod:`sqlite_db` and each composer is re-read only when its rows change. Composers with
no messages (the editor creates many) are not sessions. Composers are not resumable.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, db_files, table_columns
from agtaild.adapters.kit.stamps import any_time, from_epoch, widen
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.adapters.kit.vscode_hosts import workspace_folder
from agtaild.model import Event, ParentRef, Usage, UsageRecord

_PREFIX = "composerData:"
#: ``ItemTable`` row of a workspace's composers (inline conversations in late-2024 builds).
_WORKSPACE_KEY = "composer.composerData"
DB_NAME = "state.vscdb"


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

    def direct_database(self, root: Path) -> Path | None:
        """The one database ``root`` names: itself, its ``state.vscdb``, or its globalStorage's."""
        for candidate in (root, root / DB_NAME, root / "globalStorage" / DB_NAME):
            if database_at(candidate):
                return candidate
        return None

    def databases(self, root: Path) -> list[Path]:
        direct = self.direct_database(root)
        if direct is not None:
            return [direct]
        # a workspaceStorage folder: one database per workspace, <hash>/state.vscdb
        folders = [Path(e.path) for e in scan.entries(root) if scan.is_dir(e)]
        return [p / DB_NAME for p in folders if database_at(p / DB_NAME)]

    def unit_files(self, db: Path, session_id: str) -> list[str]:
        marker = db.parent / "workspace.json"
        return db_files(db) + ([str(marker)] if marker.is_file() else [])

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        inline = [cid for cid, doc in _workspace_composers(conn) if _messages_of(doc)]
        if not {"key", "value"} <= table_columns(conn, "cursorDiskKV"):
            return inline
        out: list[str] = []
        rows = conn.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (_PREFIX, "composerData;")
        )
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
        return out + [cid for cid in inline if cid not in out]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = _global_row(conn, session_id)
        if row is None:
            doc = _workspace_composer(conn, session_id)
            if doc is None:
                return None
            conversation = _messages_of(doc)
            return [
                "workspace",
                len(conversation),
                doc.get("lastUpdatedAt"),
                sum(len(str(b)) for b in conversation),
            ]
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
        row = _global_row(conn, session_id)
        doc = _json(row[1]) if row else _workspace_composer(conn, session_id)
        s = book.session
        s.resumable = False
        s.extra["ide_composer"] = True
        marker = next((f for f in unit.files if f.endswith("workspace.json")), None)
        if marker:
            s.cwd = workspace_folder(Path(marker))
        if row is None and isinstance(doc, dict):
            s.extra["workspace_store"] = True  # a late-2024 workspace database, messages inline
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
        rows = (
            conn.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi))
            if row
            else ()
        )
        for key, value in rows:
            if isinstance(key, str):
                bubbles[key[len(lo) :]] = value
        used: set[str] = set()
        for i, entry in enumerate(_messages_of(doc)):
            if (
                isinstance(entry, dict)
                and isinstance(entry.get("bubbleId"), str)
                and "type" in entry
                and "text" not in entry
            ):
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


def _global_row(conn: sqlite3.Connection, composer_id: str) -> tuple[Any, Any] | None:
    """``(length, value)`` of the composer's ``cursorDiskKV`` row, if the database has one."""
    if not {"key", "value"} <= table_columns(conn, "cursorDiskKV"):
        return None
    row = conn.execute(
        "SELECT length(value), value FROM cursorDiskKV WHERE key = ?", (_PREFIX + composer_id,)
    ).fetchone()
    return (row[0], row[1]) if row else None


def _workspace_composers(conn: sqlite3.Connection) -> list[tuple[str, dict[str, Any]]]:
    """The composers of a workspace database's ``ItemTable`` row, with their ids."""
    if not {"key", "value"} <= table_columns(conn, "ItemTable"):
        return []
    row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (_WORKSPACE_KEY,)).fetchone()
    doc = _json(row[0]) if row else None
    composers = doc.get("allComposers") if isinstance(doc, dict) else None
    out: list[tuple[str, dict[str, Any]]] = []
    for c in composers if isinstance(composers, list) else []:
        if isinstance(c, dict) and _str(c.get("composerId")):
            out.append((c["composerId"], c))
    return out


def _workspace_composer(conn: sqlite3.Connection, composer_id: str) -> dict[str, Any] | None:
    return next((doc for cid, doc in _workspace_composers(conn) if cid == composer_id), None)


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
        first = book.emit(
            Event(
                seq=-1,
                kind="thinking",
                role=role,
                ts=ts,
                text=thinking["text"],
                model=model,
                uuid=uuid,
                source=src,
            )
        )
    text = _str(bubble.get("text"))
    if text:
        ev = book.emit(
            Event(seq=-1, kind="text", role=role, ts=ts, text=text, model=model, uuid=uuid, source=src)
        )
        first = first or ev
        if role == "user" and s.first_prompt is None:
            s.first_prompt = text
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and (_str(tool.get("name")) or _str(tool.get("toolCallId"))):
        status = _str(tool.get("status"))
        ev = book.emit(
            Event(
                seq=-1,
                kind="tool_use",
                role="assistant",
                ts=ts,
                model=model,
                uuid=uuid,
                source=src,
                tool=_str(tool.get("name")),
                tool_use_id=_str(tool.get("toolCallId")),
                input=_json(tool.get("rawArgs")) or _json(tool.get("params")) or tool.get("params"),
                result=_json(tool.get("result")) or tool.get("result"),
                is_error=status in ("error", "failed", "cancelled") if status else None,
                extra={"status": status} if status else {},
            )
        )
        first = first or ev
    tokens = bubble.get("tokenCount")
    if isinstance(tokens, dict):
        usage = Usage(
            input_tokens=_int(tokens.get("inputTokens")), output_tokens=_int(tokens.get("outputTokens"))
        ).fix_total()
        if not usage.is_zero():
            book.add_usage(UsageRecord(key=f"bubble:{uuid or index}", ts=ts, model=model, usage=usage))
            if first is not None:
                first.usage = usage
    if first is None:
        return "skipped"  # an empty bubble (a placeholder the editor fills later)
    s.messages += 1
    return "events"
