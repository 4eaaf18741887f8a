"""``tool_totals``: tool calls per (agent, tool, category, failed) over the whole history, kept
by the writer: ``stats --by tool`` / ``--by tool-category`` without dates at any size.

Grouping the calls themselves (the ``events_tools`` index) reads every tool call ever made:
a million rows at 10 GB. The writer adds the calls it inserts and takes away the ones it
deletes (a session's rows at once, or some seqs of it), in the same transaction, as it does for
the quarter counts (agtaild.index.quarters). A NULL tool or category is stored as '' (a primary
key must compare equal to itself) and read back as NULL. Filters the totals do not know (a
project, a time bound, the user's selection of sessions) group the calls as before.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_totals (
    agent TEXT NOT NULL,
    tool TEXT NOT NULL,             -- '' unknown
    category TEXT NOT NULL,         -- '' none
    failed INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (agent, tool, category, failed)
) WITHOUT ROWID;
"""
#: Where the columns sit in an events row as the writer binds it (agtaild.index.prepare.EventRow).
_KIND_AT, _TOOL_AT, _FAILED_AT, _CATEGORY_AT = 1, 8, 9, 10
_UPSERT = (
    "INSERT INTO tool_totals (agent, tool, category, failed, n) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (agent, tool, category, failed) DO UPDATE SET n = n + excluded.n"
)


def create(db: sqlite3.Connection) -> None:
    """The table, filled from the stored tool calls (schema m016)."""
    db.execute(SCHEMA)
    db.execute("DELETE FROM tool_totals")
    db.execute(
        "INSERT INTO tool_totals (agent, tool, category, failed, n) SELECT s.agent, coalesce(e.tool, ''),"
        " coalesce(e.tool_category, ''), coalesce(e.tool_failed, 0), count(*) FROM events e"
        " JOIN sessions s ON s.id = e.session_id WHERE e.kind = 'tool_use' GROUP BY 1, 2, 3, 4"
    )


def _agent(db: sqlite3.Connection, session_id: int) -> str:
    row = db.execute("SELECT agent FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return str(row[0]) if row else ""


def add_rows(db: sqlite3.Connection, session_id: int, rows: Iterable[Sequence[Any]]) -> None:
    """Count the tool calls among the events rows just inserted for ``session_id``."""
    calls: Counter[tuple[str, str, int]] = Counter(
        (r[_TOOL_AT] or "", r[_CATEGORY_AT] or "", int(r[_FAILED_AT] or 0))
        for r in rows
        if r[_KIND_AT] == "tool_use"
    )
    if calls:
        agent = _agent(db, session_id)
        db.executemany(_UPSERT, [(agent, *key, n) for key, n in calls.items()])


def drop_where(db: sqlite3.Connection, session_id: int, where: str, args: Sequence[Any]) -> None:
    """Before the events matching ``where`` (of ``session_id``) are deleted: take their calls out."""
    gone = db.execute(
        "SELECT coalesce(tool, ''), coalesce(tool_category, ''), coalesce(tool_failed, 0), count(*) FROM events"
        f" WHERE {where} AND kind = 'tool_use' GROUP BY 1, 2, 3",
        args,
    ).fetchall()
    if gone:
        agent = _agent(db, session_id)
        db.executemany(_UPSERT, [(agent, tool, cat, failed, -n) for tool, cat, failed, n in gone])
        db.execute("DELETE FROM tool_totals WHERE n <= 0")


def answers(*, project: str | None, since: Any, until: Any, picked: Any) -> bool:
    """Can the totals answer (no project, no bound, no selection of sessions)?"""
    chosen = picked[0] is not None or bool(picked[1])
    return project is None and since is None and until is None and not chosen


def groups(db: sqlite3.Connection, agent: str | None) -> list[tuple[Any, ...]]:
    """(agent, tool, category, failed, calls), as agtaild.index.activity.tool_rows reads them."""
    where, args = ("agent = ?", [agent]) if agent else ("1", [])
    return db.execute(
        "SELECT agent, nullif(tool, ''), nullif(category, ''), failed, n FROM tool_totals"
        f" WHERE {where} AND n > 0 ORDER BY 1, 2, 3, 4",
        args,
    ).fetchall()
