"""Reading one OpenCode session out of ``opencode.db`` (OpenCode 1.2+).

Tables (``packages/opencode/src/session/session.sql.ts``): ``session`` (one row per session,
``parent_id`` for subagent children), ``message`` and ``part`` (ids and times in columns, the
rest as JSON in ``data``). Column sets differ between versions, so rows are selected with
``*`` and read by name. The ``event`` table of 1.18 duplicates messages and parts as an
event-sourced log and is not read.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agtaild.adapters.kit.sqlite_db import quote_ident, rows_as_dicts, table_columns
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.adapters.opencode.parts import Message, Row


def decode(data: Any) -> Any:
    """A ``data`` column as a dict, or None when it is not a JSON object (each row on its own:
    agtaild.adapters.kit.values)."""
    if not isinstance(data, bytes | str):
        return None
    try:
        value = json_value(data)
    except BadJson:
        return None
    return value if isinstance(value, dict) else None


def list_sessions(conn: sqlite3.Connection) -> list[str]:
    order = "time_created, id" if "time_created" in table_columns(conn, "session") else "id"
    return [str(r[0]) for r in conn.execute(f"SELECT id FROM session ORDER BY {order}") if r[0] is not None]


def _part_filter(conn: sqlite3.Connection) -> str:
    """How to select a session's parts: by their own ``session_id`` when the table has one."""
    if "session_id" in table_columns(conn, "part"):
        return "session_id = ?"
    return "message_id IN (SELECT id FROM message WHERE session_id = ?)"


def fingerprint(conn: sqlite3.Connection, session_id: str) -> Any:
    """Changes whenever the session row, one of its messages or one of its parts changes:
    OpenCode stamps ``time_updated`` on every write (the sum catches an older row updated,
    the count a deleted one, e.g. by a revert)."""
    row = conn.execute("SELECT * FROM session WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        return None
    out: list[Any] = [repr(tuple(row))]
    for table, where in (("message", "session_id = ?"), ("part", _part_filter(conn))):
        stamps = (
            "max(time_updated), total(time_updated)"
            if "time_updated" in table_columns(conn, table)
            else "0, 0"
        )
        out.extend(
            conn.execute(f"SELECT count(*), {stamps} FROM {table} WHERE {where}", (session_id,)).fetchone()
        )
    return out


def session_row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    rows = rows_as_dicts(conn.execute("SELECT * FROM session WHERE id = ?", (session_id,)))
    return rows[0] if rows else None


#: The columns a message or part row is read by (a missing one reads as NULL).
_ROW_COLUMNS = ("id", "data", "time_created", "time_updated")


def _select(conn: sqlite3.Connection, table: str, extra: tuple[str, ...] = ()) -> str:
    """``SELECT`` of just the columns read, by position (``*`` and a dict per row cost more
    than the rows' own decoding); a column an older schema lacks is NULL."""
    have = table_columns(conn, table)
    return ", ".join(quote_ident(c) if c in have else "NULL" for c in _ROW_COLUMNS + extra)


def read_messages(conn: sqlite3.Connection, session_id: str, first_number: int = 2) -> list[Message]:
    """The session's messages (by creation time, then id) with their parts (by id). Parts of
    a message that is gone are kept, under a placeholder that is not counted as a row."""
    order = "time_created, id" if "time_created" in table_columns(conn, "message") else "id"
    msg_rows = conn.execute(
        f"SELECT {_select(conn, 'message')} FROM message WHERE session_id = ? ORDER BY {order}", (session_id,)
    ).fetchall()
    part_rows = conn.execute(
        f"SELECT {_select(conn, 'part', ('message_id',))} FROM part WHERE {_part_filter(conn)} ORDER BY id",
        (session_id,),
    ).fetchall()
    by_message: dict[str, list[tuple[Any, ...]]] = {}
    for p in part_rows:
        by_message.setdefault(str(p[4]), []).append(p)
    number = first_number
    out: list[Message] = []

    def row(r: tuple[Any, ...]) -> Row:
        nonlocal number
        number += 1
        created, updated = r[2], r[3]
        return Row(
            id=str(r[0]),
            data=decode(r[1]),
            number=number - 1,
            time_created=created if isinstance(created, int) else None,
            time_updated=updated if isinstance(updated, int) else None,
        )

    for m in msg_rows:
        message_row = row(m)
        out.append(Message(row=message_row, parts=[row(p) for p in by_message.pop(message_row.id, [])]))
    for message_id, orphans in by_message.items():
        out.append(Message(row=None, parts=[row(p) for p in orphans], orphan_of=message_id))
    return out


def parent_call(conn: sqlite3.Connection, parent_id: str, child_id: str) -> str | None:
    """The ``callID`` of the parent's ``task`` tool part that started ``child_id``."""
    like = "%" + child_id.replace("%", "").replace("_", "\\_") + "%"
    query = f"SELECT data FROM part WHERE {_part_filter(conn)} AND data LIKE ? ESCAPE '\\'"
    for (data,) in conn.execute(query, (parent_id, like)):
        part = decode(data)
        state = part.get("state") if part else None
        meta = state.get("metadata") if isinstance(state, dict) else None
        if isinstance(meta, dict) and meta.get("sessionId") == child_id and isinstance(part, dict):
            call = part.get("callID")
            return call if isinstance(call, str) else None
    return None
