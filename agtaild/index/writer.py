"""The single writer: applies prepared rows to the index under the adapters' read protocol.

* ``reset`` → the unit's events and usage are dropped first;
* events are upserts keyed by ``seq`` (a re-emitted seq replaces the stored event);
* usage records are upserts keyed by ``key``;
* the session row is replaced by the new summary; the file row gets the new state.

All of a unit's changes, its new continuation state included, go in the same transaction, so
a crash (kill -9) leaves either the old rows with the old state or the new rows with the new
state — and the next update continues from whichever it finds.

Usage is de-duplicated across files per agent and ``key`` (resume replays and imported copies
repeat responses): exactly one row per (agent, key) has ``counted = 1`` — the largest, then the
earliest session, then the smallest path, so the choice never depends on the order of reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import msgspec

from agtaild.index.prepare import Prepared

_CHUNK = 500
#: Full-text rows are inserted in batches of about this many characters (see Writer).
FTS_BATCH_CHARS = 8_000_000


class UnitInfo(msgspec.Struct):
    """Where a unit was found and what its files looked like before it was read."""

    path: str
    agent: str
    root: str
    kind: str
    collection: str | None
    rel: str
    files: list[str]
    fingerprint: bytes
    main: tuple[int, int, int, int]  # dev, ino, size, mtime_ns of the main file
    unit: bytes
    read_at: float
    settled: bool


def _chunks(items: Sequence[object], size: int = _CHUNK) -> Iterable[Sequence[object]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Writer:
    """Owns the write connection for the duration of one update (callers hold the lock).

    Full-text rows are buffered and inserted in big batches, after the unit's other
    statements: FTS5 flushes its in-memory terms to a new segment whenever another write
    statement starts in the transaction, so inserting them unit by unit, between other
    statements, writes hundreds of tiny segments and merges them again (measured: most of
    the indexing time). Their rowids are fresh event ids, so batching never reorders a
    delete and an insert of the same row.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.next_event_id = 0
        self.touched_keys: set[tuple[str, str]] = set()
        self._fts: list[tuple[int, str | None, str | None, str | None]] = []
        self._cjk: list[tuple[int, str | None, str | None]] = []
        self._pending_chars = 0

    # -- transactions ---------------------------------------------------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        # Explicit ids (the FTS rowids) are assigned here, under the write lock, so that a
        # second writer process can never hand out the same id.
        self.next_event_id = (self.db.execute("SELECT max(id) FROM events").fetchone()[0] or 0) + 1
        self.touched_keys = set()

    def commit(self) -> None:
        self.flush_fts()
        self.recount(self.touched_keys)
        self.touched_keys = set()
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        self._fts, self._cjk, self._pending_chars = [], [], 0
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    # -- whole index ----------------------------------------------------------------------
    def wipe(self) -> None:
        """Forget every row (``reindex``): the files are read again from scratch."""
        db = self.db
        db.execute("INSERT INTO events_fts(events_fts) VALUES ('delete-all')")
        db.execute("DELETE FROM events_cjk")
        for table in ("events", "usage", "sessions", "file_parts", "files"):
            db.execute(f"DELETE FROM {table}")

    # -- one unit -------------------------------------------------------------------------
    def apply(self, info: UnitInfo, prep: Prepared) -> str:
        """Store a read unit; returns "added" or "updated"."""
        db = self.db
        row = db.execute("SELECT id FROM files WHERE path = ?", (info.path,)).fetchone()
        dev, ino, size, mtime_ns = info.main
        values = (
            info.agent,
            info.root,
            info.kind,
            info.collection,
            info.rel,
            dev,
            ino,
            size,
            mtime_ns,
            info.fingerprint,
            info.unit,
            prep.state,
            info.read_at,
            int(info.settled),
        )
        if row is None:
            file_id = db.execute(
                "INSERT INTO files (agent, root, kind, collection, rel, dev, ino, size, mtime_ns,"
                " fingerprint, unit, state, read_at, settled, path)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (*values, info.path),
            ).fetchone()[0]
            action = "added"
        else:
            file_id = row[0]
            db.execute(
                "UPDATE files SET agent = ?, root = ?, kind = ?, collection = ?, rel = ?, dev = ?,"
                " ino = ?, size = ?, mtime_ns = ?, fingerprint = ?, unit = ?, state = ?, read_at = ?,"
                " settled = ? WHERE id = ?",
                (*values, file_id),
            )
            db.execute("DELETE FROM file_parts WHERE file_id = ?", (file_id,))
            action = "updated"
        db.executemany(
            "INSERT OR IGNORE INTO file_parts (path, file_id) VALUES (?, ?)",
            [(p, file_id) for p in info.files],
        )
        assert prep.session is not None
        s = prep.session
        srow = db.execute("SELECT id FROM sessions WHERE file_id = ?", (file_id,)).fetchone()
        svalues = (
            info.agent,
            s.sid,
            info.kind,
            info.collection,
            s.cwd,
            s.project,
            s.started,
            s.activity,
            int(s.programmatic),
            int(s.archived),
            s.title,
            s.data,
        )
        if srow is None:
            session_id = db.execute(
                "INSERT INTO sessions (agent, sid, kind, collection, cwd, project, started, activity,"
                " programmatic, archived, title, data, file_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (*svalues, file_id),
            ).fetchone()[0]
        else:
            session_id = srow[0]
            db.execute(
                "UPDATE sessions SET agent = ?, sid = ?, kind = ?, collection = ?, cwd = ?, project = ?,"
                " started = ?, activity = ?, programmatic = ?, archived = ?, title = ?, data = ? WHERE id = ?",
                (*svalues, session_id),
            )
        if prep.reset:
            self._drop_session_rows(session_id)
        else:
            self._drop_events_by_seq(session_id, [e.seq for e in prep.events])
        self._insert_events(session_id, prep)
        self._upsert_usage(session_id, info.agent, prep)
        return action

    def note_read(self, info: UnitInfo, state: bytes | None) -> None:
        """Remember a read that produced nothing new (e.g. a settled tail re-check)."""
        self.db.execute(
            "UPDATE files SET fingerprint = ?, state = ?, read_at = ?, settled = ? WHERE path = ?",
            (info.fingerprint, state, info.read_at, int(info.settled), info.path),
        )

    def remove(self, file_id: int) -> None:
        """A unit whose files are gone (or no longer under any configured root)."""
        db = self.db
        srow = db.execute("SELECT id FROM sessions WHERE file_id = ?", (file_id,)).fetchone()
        if srow is not None:
            self._drop_session_rows(srow[0])
            db.execute("DELETE FROM sessions WHERE id = ?", (srow[0],))
        db.execute("DELETE FROM file_parts WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    # -- rows -----------------------------------------------------------------------------
    def _drop_session_rows(self, session_id: int) -> None:
        db = self.db
        db.execute(
            "INSERT INTO events_fts (events_fts, rowid, text, tool_input, tool_result)"
            " SELECT 'delete', id, text, tool_input, tool_result FROM events WHERE session_id = ?",
            (session_id,),
        )
        db.execute(
            "DELETE FROM events_cjk WHERE rowid IN (SELECT id FROM events WHERE session_id = ?)",
            (session_id,),
        )
        db.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
        for agent, key in db.execute("SELECT agent, key FROM usage WHERE session_id = ?", (session_id,)):
            self.touched_keys.add((agent, key))
        db.execute("DELETE FROM usage WHERE session_id = ?", (session_id,))

    def _drop_events_by_seq(self, session_id: int, seqs: list[int]) -> None:
        db = self.db
        top = db.execute("SELECT max(seq) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0]
        if top is None:
            return
        old = [s for s in seqs if s <= top]
        for part in _chunks(old):
            marks = ",".join("?" * len(part))
            where = f"session_id = ? AND seq IN ({marks})"
            args = (session_id, *part)
            db.execute(
                "INSERT INTO events_fts (events_fts, rowid, text, tool_input, tool_result)"
                f" SELECT 'delete', id, text, tool_input, tool_result FROM events WHERE {where}",
                args,
            )
            db.execute(f"DELETE FROM events_cjk WHERE rowid IN (SELECT id FROM events WHERE {where})", args)
            db.execute(f"DELETE FROM events WHERE {where}", args)

    def _insert_events(self, session_id: int, prep: Prepared) -> None:
        if not prep.events:
            return
        first = self.next_event_id
        self.next_event_id += len(prep.events)
        rows = []
        fts = self._fts
        cjk = self._cjk
        chars = 0
        for i, e in enumerate(prep.events):
            eid = first + i
            rows.append(
                (
                    eid,
                    session_id,
                    e.seq,
                    e.kind,
                    e.epoch,
                    e.text,
                    e.tool_input,
                    e.tool_result,
                    int(e.moved),
                    e.data,
                )
            )
            if e.text or e.tool_input or e.tool_result:
                fts.append((eid, e.text, e.tool_input, e.tool_result))
                chars += len(e.text or "") + len(e.tool_input or "") + len(e.tool_result or "")
            if e.cjk is not None:
                cjk.append((eid, *e.cjk))
        self.db.executemany(
            "INSERT INTO events (id, session_id, seq, kind, epoch, text, tool_input, tool_result,"
            " result_moved, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self._pending_chars += chars
        if self._pending_chars >= FTS_BATCH_CHARS:
            self.flush_fts()

    def flush_fts(self) -> None:
        """Insert the buffered full-text rows (one statement per table)."""
        if self._fts:
            self.db.executemany(
                "INSERT INTO events_fts (rowid, text, tool_input, tool_result) VALUES (?, ?, ?, ?)", self._fts
            )
        if self._cjk:
            self.db.executemany(
                "INSERT INTO events_cjk (rowid, text, tool_input) VALUES (?, ?, ?)", self._cjk
            )
        self._fts, self._cjk, self._pending_chars = [], [], 0

    def _upsert_usage(self, session_id: int, agent: str, prep: Prepared) -> None:
        if not prep.usage:
            return
        self.db.executemany(
            "INSERT INTO usage (session_id, agent, key, epoch, day, model, input, output, cache_read,"
            " cache_write, reasoning, total, long_ctx) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (session_id, key) DO UPDATE SET epoch = excluded.epoch, day = excluded.day,"
            " model = excluded.model, input = excluded.input, output = excluded.output,"
            " cache_read = excluded.cache_read, cache_write = excluded.cache_write,"
            " reasoning = excluded.reasoning, total = excluded.total, long_ctx = excluded.long_ctx",
            [
                (
                    session_id,
                    agent,
                    u.key,
                    u.epoch,
                    u.day,
                    u.model,
                    u.input,
                    u.output,
                    u.cache_read,
                    u.cache_write,
                    u.reasoning,
                    u.total,
                    int(u.long_ctx),
                )
                for u in prep.usage
            ],
        )
        self.touched_keys.update((agent, u.key) for u in prep.usage)

    # -- usage de-duplication -------------------------------------------------------------
    def recount(self, keys: set[tuple[str, str]] | None) -> None:
        """Re-elect the counted copy of each (agent, key) given (None: of every key)."""
        db = self.db
        if keys is not None and not keys:
            return
        if keys is None:
            scope = "1"
        else:
            db.execute(
                "CREATE TEMP TABLE IF NOT EXISTS _recount (agent TEXT, key TEXT, PRIMARY KEY (agent, key))"
            )
            db.execute("DELETE FROM _recount")
            db.executemany("INSERT OR IGNORE INTO _recount (agent, key) VALUES (?, ?)", list(keys))
            scope = "(u.agent, u.key) IN (SELECT agent, key FROM _recount)"
        db.execute(
            f"""
            UPDATE usage SET counted = (id IN (
                SELECT id FROM (
                    SELECT u.id AS id, row_number() OVER (
                        PARTITION BY u.agent, u.key
                        ORDER BY u.total DESC, s.started IS NULL, s.started, f.path, u.id
                    ) AS rn
                    FROM usage u JOIN sessions s ON s.id = u.session_id JOIN files f ON f.id = s.file_id
                    WHERE {scope}
                ) WHERE rn = 1
            ))
            WHERE {scope.replace("u.", "")}
            """
        )
