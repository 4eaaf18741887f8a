"""The single writer: applies prepared rows to the index under the adapters' read protocol.

* ``reset`` → the unit's events and usage are dropped first;
* events are upserts keyed by ``seq`` (a re-emitted seq replaces the stored event);
* usage records are upserts keyed by ``key``;
* file changes (``edits``) come and go with the events of their seqs;
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
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from agtaild.fsnames import to_text, unit_text
from agtaild.index import edits, findings, places, quarters, tool_totals
from agtaild.index.codec import patch_extra
from agtaild.index.prepare import Prepared
from agtaild.index.usage import recount, refresh_rollup
from agtaild.index.week import TABLES as WEEK_TABLES

_CHUNK = 500
_unit_encoder = msgspec.msgpack.Encoder()
#: Past this many touched usage keys an update re-counts every key instead: cheaper than a
#: re-count per key, and the keys are no longer kept (a 2 GB cold index touched ~400k of them,
#: tens of MB that grew with the corpus).
RECOUNT_ALL_KEYS = 20_000
#: Full-text rows are inserted in batches of about this many characters (see Writer).
FTS_BATCH_CHARS = 4_000_000


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
    file_id: int | None = None  # its row in ``files`` when the update found one
    new: bool = False  # the update found no row for it (so none is looked up)
    #: Discovery's candidate (agtaild.index.discovery.Candidate: its adapter, unit and root),
    #: when the update made this; ``rel``, ``files`` and ``unit`` are then left to :meth:`fill`.
    source: Any = None
    cost: int = 0  # the bytes the update counts for reading it

    def fill(self) -> None:
        """``rel``, ``files`` and ``unit`` from the candidate, when the update left them to the
        moment the unit is stored: it lists every unit before it reads the first, and holding
        them for each unit all along cost ~0.6 KB a unit (~40 MB at 10 GB)."""
        if self.source is None or self.unit:
            return
        text = unit_text(self.source.unit)
        self.rel = to_text(self.source.rel_path())
        self.files = [*(text.files or [self.path]), *text.sidecars]
        self.unit = _unit_encoder.encode(text)


def _chunks(items: Sequence[object], size: int = _CHUNK) -> Iterable[Sequence[object]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Writer:
    """Owns the write connection for the duration of one update (callers hold the lock).

    Full-text rows are inserted in big batches, after the units' other statements: FTS5
    flushes its in-memory terms to a new segment whenever another write statement starts in
    the transaction, so inserting them unit by unit, between other statements, writes
    hundreds of tiny segments and merges them again (measured: most of the indexing time).
    A batch is copied inside SQLite from the events just inserted (``INSERT … SELECT``), so no
    text passes through Python twice.

    Event ids are assigned by SQLite (max + 1) while this writer holds the write lock, so the
    events of one update form one contiguous, growing range.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.touched_keys: set[tuple[str, str]] = set()
        self._cjk: list[tuple[int, str | None, str | None]] = []
        self._fts_from: int | None = None  # first event id not yet in the full-text tables
        self._pending_chars = 0
        self._marked = False
        self._recount_all = False
        self._session_id = 0
        self._agent = ""
        # usage_rollup rows to recompute: whole sessions, and (session, day) groups.
        self.rollup_sessions: set[int] = set()
        self.rollup_days: set[tuple[int, str]] = set()
        # Per-unit constants for executemany: the rows come from the worker as they are.
        db.create_function("agtail_session", 0, lambda: self._session_id)
        db.create_function("agtail_agent", 0, lambda: self._agent)
        self._change: int | None = None  # the last change number handed out (see next_change)
        self._first_change: int | None = None  # the first one of this update

    # -- transactions ---------------------------------------------------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        if (
            not self._marked
            and self.db.execute("SELECT 1 FROM meta WHERE key = 'recount_pending'").fetchone()
        ):
            self._recount_all = True  # an earlier update died between its commits and its recount

    def commit(self, *, final: bool = False) -> None:
        """Commit; usage is re-counted once, in the ``final`` commit of an update.

        Re-counting per batch cost as much as the usage inserts themselves; instead the first
        batch that changes usage also records ``recount_pending``, in the same transaction,
        so a crash before the final commit makes the next update re-count everything.
        """
        self.flush_fts()
        if final:
            if self._recount_all or len(self.touched_keys) > RECOUNT_ALL_KEYS:
                recount(self.db, None)
                refresh_rollup(self.db, None)
            elif self.touched_keys or self.rollup_sessions or self.rollup_days:
                recount(self.db, self.touched_keys)
                if self.touched_keys:
                    # A re-count can move the counted copy of a response to or from a session
                    # this update did not read (a fork, an imported copy): followers of the
                    # change numbers must see those sessions again too.
                    # (Sessions this update wrote already carry a new number.)
                    floor = self._first_change or 0
                    self.db.execute(
                        "UPDATE sessions SET change = ? WHERE change < ? AND id IN (SELECT DISTINCT"
                        " session_id FROM usage WHERE (agent, key) IN (SELECT agent, key FROM _recount))",
                        (self.next_change(), floor),
                    )
                refresh_rollup(
                    self.db, self.rollup_sessions, self.rollup_days, recounted=bool(self.touched_keys)
                )
            self.db.execute("DELETE FROM meta WHERE key = 'recount_pending'")
            self.touched_keys, self.rollup_sessions, self.rollup_days = set(), set(), set()
            self._marked = self._recount_all = False
            self._first_change = None
        elif (self.touched_keys or self.rollup_sessions or self._recount_all) and not self._marked:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('recount_pending', '1')")
            self._marked = True
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        self._cjk, self._fts_from, self._pending_chars = [], None, 0
        self._change = self._first_change = None  # numbers of a rolled-back transaction are free again
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    # -- whole index ----------------------------------------------------------------------
    def wipe(self) -> None:
        """Forget every row (``reindex``): the files are read again from scratch."""
        db = self.db
        db.execute("INSERT INTO events_fts(events_fts) VALUES ('delete-all')")
        db.execute("DELETE FROM events_cjk")
        derived = (
            "usage_rollup",
            "usage_daily",
            "usage_totals",
            "event_quarters",
            "usage_quarters",
            *WEEK_TABLES,
            "tool_totals",
        )
        kept = places.suspend(db)
        for table in ("events", "edits", "usage", *derived, "sessions", "file_parts", "files", "removed"):
            db.execute(f"DELETE FROM {table}")
        if kept:
            places.create(db)  # empty, and the triggers back
        findings.forget_all(db)
        # Change numbers start again: a new index id tells followers to compare everything.
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('index_id', ?)", (uuid.uuid4().hex,))
        self._change = None

    # -- one unit -------------------------------------------------------------------------
    def next_change(self) -> int:
        """The next change number (schema m003_change_log); read once per writer, then counted
        here: this writer holds the write lock, so nobody else hands numbers out meanwhile."""
        if self._change is None:
            self._change = self.db.execute(
                "SELECT max(coalesce((SELECT max(change) FROM sessions), 0),"
                " coalesce((SELECT max(change) FROM removed), 0))"
            ).fetchone()[0]
        self._change += 1
        if self._first_change is None:
            self._first_change = self._change
        return self._change

    def apply(self, info: UnitInfo, prep: Prepared) -> str:
        """Store a read unit; returns "added" or "updated"."""
        db = self.db
        info.fill()
        row: tuple[int] | None = None
        if info.file_id is not None:
            row = (info.file_id,)
        elif not info.new:
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
            try:
                file_id = db.execute(
                    "INSERT INTO files (agent, root, kind, collection, rel, dev, ino, size, mtime_ns,"
                    " fingerprint, unit, state, read_at, settled, path)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (*values, info.path),
                ).fetchone()[0]
            except sqlite3.IntegrityError:  # stored after all (outside the update's scope)
                return self.apply(msgspec.structs.replace(info, new=False), prep)
            action = "added"
        else:
            file_id = row[0]
            db.execute(
                "UPDATE files SET agent = ?, root = ?, kind = ?, collection = ?, rel = ?, dev = ?,"
                " ino = ?, size = ?, mtime_ns = ?, fingerprint = ?, unit = ?, state = ?, read_at = ?,"
                " settled = ? WHERE id = ?",
                (*values, file_id),
            )
            action = "updated"
        parts = (
            None
            if row is None
            else {r[0] for r in db.execute("SELECT path FROM file_parts WHERE file_id = ?", (file_id,))}
        )
        if parts != set(info.files):  # a grown file keeps its parts: nothing to delete and insert again
            if parts:
                db.execute("DELETE FROM file_parts WHERE file_id = ?", (file_id,))
            db.executemany(
                "INSERT OR IGNORE INTO file_parts (path, file_id) VALUES (?, ?)",
                [(p, file_id) for p in info.files],
            )
        assert prep.session is not None
        s = prep.session
        # A new file has no session yet: nothing to look up, nothing to drop.
        srow = (
            None
            if row is None
            else db.execute("SELECT id FROM sessions WHERE file_id = ?", (file_id,)).fetchone()
        )
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
            self.next_change(),
        )
        if srow is None:
            session_id = db.execute(
                "INSERT INTO sessions (agent, sid, kind, collection, cwd, project, started, activity,"
                " programmatic, archived, title, data, change, file_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (*svalues, file_id),
            ).fetchone()[0]
        else:
            session_id = srow[0]
            db.execute(
                "UPDATE sessions SET agent = ?, sid = ?, kind = ?, collection = ?, cwd = ?, project = ?,"
                " started = ?, activity = ?, programmatic = ?, archived = ?, title = ?, data = ?, change = ?"
                " WHERE id = ?",
                (*svalues, session_id),
            )
        if prep.reset:
            self.rollup_sessions.add(session_id)
            if srow is not None:
                self._drop_session_rows(session_id)
        else:
            self._drop_events_by_seq(session_id, [e[0] for e in prep.rows])
        self._insert_events(session_id, prep)
        edits.insert(db, session_id, prep.edits)
        if prep.marks and not prep.reset:
            self._mark_events(session_id, prep.marks)
        self._upsert_usage(session_id, info.agent, prep)
        return action

    def _mark_events(self, session_id: int, marks: dict[int, dict[str, Any]]) -> None:
        """Set ``extra`` keys of stored events (only their JSON changes: no text is re-indexed)."""
        db = self.db
        for seq, patch in marks.items():
            row = db.execute(
                "SELECT id, data FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
            ).fetchone()
            if row is not None:
                db.execute("UPDATE events SET data = ? WHERE id = ?", (patch_extra(row[1], patch), row[0]))
                findings.requeue(db, [row[0]])

    def note_read(self, info: UnitInfo, state: bytes | None) -> None:
        """Remember a read that produced nothing new (e.g. a settled tail re-check)."""
        self.db.execute(
            "UPDATE files SET fingerprint = ?, state = ?, read_at = ?, settled = ? WHERE path = ?",
            (info.fingerprint, state, info.read_at, int(info.settled), info.path),
        )

    def remove(self, file_id: int) -> None:
        """A unit whose files are gone (or no longer under any configured root)."""
        db = self.db
        srow = db.execute(
            "SELECT id, agent, sid, collection FROM sessions WHERE file_id = ?", (file_id,)
        ).fetchone()
        if srow is not None:
            db.execute(
                "INSERT INTO removed (change, agent, sid, collection) VALUES (?, ?, ?, ?)",
                (self.next_change(), *srow[1:]),
            )
            self._drop_session_rows(srow[0])
            db.execute("DELETE FROM sessions WHERE id = ?", (srow[0],))
            self.rollup_sessions.add(srow[0])
        db.execute("DELETE FROM file_parts WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    # -- rows -----------------------------------------------------------------------------
    def _drop_session_rows(self, session_id: int) -> None:
        db = self.db
        self._flush_before_deleting(session_id)
        db.execute(
            "INSERT INTO events_fts (events_fts, rowid, text, tool_input, tool_result)"
            " SELECT 'delete', id, text, tool_input, tool_result FROM events WHERE session_id = ?",
            (session_id,),
        )
        db.execute(
            "DELETE FROM events_cjk WHERE rowid IN (SELECT id FROM events WHERE session_id = ?)",
            (session_id,),
        )
        tool_totals.drop_where(db, session_id, "session_id = ?", (session_id,))
        db.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
        quarters.drop_session(db, session_id)
        db.execute("DELETE FROM secret_findings WHERE session_id = ?", (session_id,))
        edits.drop_session(db, session_id)
        if not self._recount_all:
            self.touched_keys.update(
                db.execute("SELECT agent, key FROM usage WHERE session_id = ?", (session_id,))
            )
            self._check_touched()
        db.execute("DELETE FROM usage WHERE session_id = ?", (session_id,))

    def _drop_events_by_seq(self, session_id: int, seqs: list[int]) -> None:
        db = self.db
        top = db.execute("SELECT max(seq) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0]
        if top is None:
            return
        old = [s for s in seqs if s <= top]
        if old:
            self._flush_before_deleting(session_id)
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
            quarters.drop_where(db, session_id, where, args)
            tool_totals.drop_where(db, session_id, where, args)
            db.execute(f"DELETE FROM events WHERE {where}", args)
            db.execute(f"DELETE FROM secret_findings WHERE {where}", args)
            edits.drop_seqs(db, session_id, list(part))  # type: ignore[arg-type]

    def _insert_events(self, session_id: int, prep: Prepared) -> None:
        rows = prep.rows
        if not rows:
            return
        db = self.db
        first = (db.execute("SELECT max(id) FROM events").fetchone()[0] or 0) + 1
        if self._fts_from is None:
            self._fts_from = first
        self._session_id = session_id
        db.executemany(
            "INSERT INTO events (session_id, seq, kind, epoch, text, tool_input, tool_result, result_moved, data,"
            " tool, tool_failed, tool_category)"
            # CAST: a worker sends the text columns as UTF-8 bytes (WireEventRow); they are
            # stored as the TEXT they are (a no-op for rows prepared in this process).
            " VALUES (agtail_session(), ?, ?, ?, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?)",
            rows,
        )
        quarters.add_rows(db, session_id, rows)
        tool_totals.add_rows(db, session_id, rows)
        findings.queue_reused(db, first, len(rows))
        self._cjk.extend((first + i, text, tool_input) for i, text, tool_input in prep.cjk)
        self._pending_chars += prep.chars
        if self._pending_chars >= FTS_BATCH_CHARS:
            self.flush_fts()

    def _flush_before_deleting(self, session_id: int) -> None:
        """A delete must only meet events already in the full-text tables. (An update applies
        each unit once, so this never fires in practice; it keeps the tables exact if it did.)"""
        if (
            self._fts_from is not None
            and self.db.execute(
                "SELECT 1 FROM events WHERE session_id = ? AND id >= ? LIMIT 1", (session_id, self._fts_from)
            ).fetchone()
        ):
            self.flush_fts()

    def flush_fts(self) -> None:
        """Index the events inserted since the last flush (one statement per table)."""
        if self._fts_from is not None:
            self.db.execute(
                "INSERT INTO events_fts (rowid, text, tool_input, tool_result)"
                " SELECT id, text, tool_input, tool_result FROM events WHERE id >= ?",
                (self._fts_from,),
            )
        if self._cjk:
            # Plain VALUES: an INSERT … SELECT into a virtual table, run per row, measured 7×
            # slower (each run materializes its SELECT).
            self.db.executemany(
                "INSERT INTO events_cjk (rowid, text, tool_input) VALUES (?, ?, ?)", self._cjk
            )
        self._cjk, self._fts_from, self._pending_chars = [], None, 0

    def _upsert_usage(self, session_id: int, agent: str, prep: Prepared) -> None:
        if not prep.usage:
            return
        self._session_id = session_id
        self._agent = agent
        if session_id not in self.rollup_sessions:
            # An upsert can move a record to another day: its old day and its new day change.
            keys = [u[0] for u in prep.usage]
            for part in _chunks(keys):
                marks = ",".join("?" * len(part))
                for (day,) in self.db.execute(
                    f"SELECT DISTINCT day FROM usage WHERE session_id = ? AND key IN ({marks})",
                    (session_id, *part),
                ):
                    self.rollup_days.add((session_id, day))
            self.rollup_days.update((session_id, u[2]) for u in prep.usage)
        self.db.executemany(
            "INSERT INTO usage (session_id, agent, key, epoch, day, model, input, output, cache_read,"
            " cache_write, reasoning, total, long_ctx)"
            " VALUES (agtail_session(), agtail_agent(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (session_id, key) DO UPDATE SET epoch = excluded.epoch, day = excluded.day,"
            " model = excluded.model, input = excluded.input, output = excluded.output,"
            " cache_read = excluded.cache_read, cache_write = excluded.cache_write,"
            " reasoning = excluded.reasoning, total = excluded.total, long_ctx = excluded.long_ctx",
            prep.usage,
        )
        if not self._recount_all:
            self.touched_keys.update((agent, u[0]) for u in prep.usage)
            self._check_touched()

    def _check_touched(self) -> None:
        if len(self.touched_keys) > RECOUNT_ALL_KEYS:
            self._recount_all = True
            self.touched_keys = set()
