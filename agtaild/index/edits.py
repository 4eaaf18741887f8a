"""The ``edits`` table: every recorded file change, kept by the writer beside the events.

One row per change of one file by one event (agtaild.provenance.records builds them in the
worker that prepares the events): the session and the event's seq, its time, the file's
normalized path and its last component (``name``: every spelling of one file is found from it,
case-insensitively — agtaild.provenance.paths decides which spellings are the file asked
for), the kind, whether the tool failed, the source of a rename, and the replay document.
Rows live and die with their events: the writer inserts them in the same transaction and drops
them whenever it drops the events of their seqs (agtaild.index.writer).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

_SCRIPT = [
    "CREATE TABLE edits ("
    " id INTEGER PRIMARY KEY,"
    " session_id INTEGER NOT NULL,"
    " seq INTEGER NOT NULL,"
    " epoch REAL,"
    " path TEXT NOT NULL,"  # absolute, lexically normalized, as recorded
    " name TEXT NOT NULL,"  # its last component
    " kind TEXT NOT NULL,"  # create | edit | patch | delete | command | rename
    " failed INTEGER NOT NULL,"  # 1: the tool reported a failure
    " from_path TEXT,"  # a rename's old path
    " data BLOB NOT NULL)",  # msgpack: ops, hunks, cut, numbered, tool, command
    "CREATE INDEX edits_session ON edits(session_id, seq)",
    "CREATE INDEX edits_name ON edits(name COLLATE NOCASE)",
    "CREATE INDEX edits_path ON edits(path)",
]


def m013_edits(db: sqlite3.Connection) -> None:
    """The edits index (issue 27: ``agtail history`` and ``agtail blame``)."""
    for statement in _SCRIPT:
        db.execute(statement)


def insert(db: sqlite3.Connection, session_id: int, rows: Sequence[tuple[object, ...]]) -> None:
    if rows:
        db.executemany(
            "INSERT INTO edits (session_id, seq, epoch, path, name, kind, failed, from_path, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(session_id, *r) for r in rows],
        )


def drop_session(db: sqlite3.Connection, session_id: int) -> None:
    db.execute("DELETE FROM edits WHERE session_id = ?", (session_id,))


def drop_seqs(db: sqlite3.Connection, session_id: int, seqs: Sequence[int]) -> None:
    marks = ",".join("?" * len(seqs))
    db.execute(f"DELETE FROM edits WHERE session_id = ? AND seq IN ({marks})", (session_id, *seqs))
