"""The index totals every update reports (``sessions``, ``events``, ``files``, ``bad_lines``).

An update used to recount them from every row: the distinct paths of ``file_parts`` and the
``bad_lines`` of every session's JSON (4 ms of the 6.5 ms that a one-line append costs on the
1,300-session benchmark corpus, growing with the index). The two costly ones are now kept in
the ``totals`` table by triggers (schema m005_totals), in the same transaction as the
rows they count, whoever writes them: a crash leaves them as true as the rows. The session
and event counts stay plain ``count(*)`` (SQLite counts a table from its smallest index, with
no per-row work; a trigger on every event insert would cost the cold index more).
"""

from __future__ import annotations

import sqlite3
from typing import Any

_BAD = "coalesce(json_extract({}.data, '$.bad_lines'), 0)"

_SCRIPT = [
    "CREATE TABLE totals (key TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO totals (key, n) VALUES ('files', (SELECT count(DISTINCT path) FROM file_parts)),"
    " ('bad_lines', (SELECT coalesce(sum(json_extract(data, '$.bad_lines')), 0) FROM sessions))",
    # A path counts once, however many units share it (the units of one database file).
    "CREATE TRIGGER totals_files_add AFTER INSERT ON file_parts"
    " WHEN NOT EXISTS (SELECT 1 FROM file_parts WHERE path = new.path AND file_id != new.file_id)"
    " BEGIN UPDATE totals SET n = n + 1 WHERE key = 'files'; END",
    "CREATE TRIGGER totals_files_drop AFTER DELETE ON file_parts"
    " WHEN NOT EXISTS (SELECT 1 FROM file_parts WHERE path = old.path)"
    " BEGIN UPDATE totals SET n = n - 1 WHERE key = 'files'; END",
    "CREATE TRIGGER totals_bad_add AFTER INSERT ON sessions"
    f" BEGIN UPDATE totals SET n = n + {_BAD.format('new')} WHERE key = 'bad_lines'; END",
    "CREATE TRIGGER totals_bad_drop AFTER DELETE ON sessions"
    f" BEGIN UPDATE totals SET n = n - {_BAD.format('old')} WHERE key = 'bad_lines'; END",
    "CREATE TRIGGER totals_bad_change AFTER UPDATE OF data ON sessions"
    f" BEGIN UPDATE totals SET n = n - {_BAD.format('old')} + {_BAD.format('new')} WHERE key = 'bad_lines'; END",
]


def m005_totals(db: sqlite3.Connection) -> None:
    """The ``totals`` table and the triggers that keep it (see the module docstring)."""
    for statement in _SCRIPT:
        db.execute(statement)


def totals(db: Any) -> dict[str, Any]:
    """The index totals of an update's report."""
    try:
        sessions, events, files, bad = db.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events),"
            " (SELECT n FROM totals WHERE key = 'files'), (SELECT n FROM totals WHERE key = 'bad_lines')"
        ).fetchone()
    except sqlite3.OperationalError:  # an index not migrated yet (a read-only data dir)
        return recount(db)
    return {"sessions": sessions, "events": events, "files": files, "bad_lines": bad}


def recount(db: Any) -> dict[str, Any]:
    """The same totals counted from every row (what the triggers must agree with)."""
    sessions, bad = db.execute(
        "SELECT count(*), coalesce(sum(json_extract(data, '$.bad_lines')), 0) FROM sessions"
    ).fetchone()
    events = db.execute("SELECT count(*) FROM events").fetchone()[0]
    files = db.execute("SELECT count(DISTINCT path) FROM file_parts").fetchone()[0]
    return {"sessions": sessions, "events": events, "files": files, "bad_lines": bad}
