"""`agtail pg push`: mirror this machine's index into the team database.

What changed is found through the index's change numbers (schema m003_change_log): every write
of a session stamps it with the next number, every removal leaves a numbered row in
``removed``. The team database remembers, per machine, the index it last pushed from and the
highest number pushed (``machines.cursor``), so a push reads only what came after — an
unchanged index pushes nothing at all.

Each batch is one PostgreSQL transaction that also moves the cursor, so a push killed at any
moment leaves the database as it was after some whole batch, and the next push continues from
there. Within a session only event rows newer than the last pushed one are sent (the writer
gives a replaced or appended event a new row id); seqs that vanished locally are deleted.
A rebuilt local index has a new ``index_id``: then every session is sent again and, once the
push has finished, rows of this machine that the new index no longer has are deleted. Last,
the sessions the user labelled ``share=team`` are marked (agtaild.pg.shares).

Under roles (agtaild.pg.roles) the push checks first that its credentials are this machine's;
PostgreSQL's row-level security keeps every statement inside the machine's rows regardless.

The local index is opened read-only; nothing here writes to it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agtaild.errors import AgtailError
from agtaild.index.projects import project_root
from agtaild.index.queries import event_doc
from agtaild.pg.connection import connect_team, stopped, transport_warning
from agtaild.pg.schema import migrate
from agtaild.pg.shares import sync_shares
from agtaild.pg.userstate import sync_state
from agtaild.userstate.store import FILE as STATE_FILE

#: Roughly how many event rows one transaction carries (whole sessions: a batch ends between
#: two change numbers).
BATCH_EVENTS = 5000
#: Local event rows fetched at a time for one session.
EVENT_CHUNK = 2000
#: Usage rows per INSERT statement (16 parameters each; PostgreSQL takes at most 65,535).
_USAGE_ROWS_PER_INSERT = 1000

_json = msgspec.json.Encoder()


@dataclass
class PushReport:
    machine: str
    sessions: int = 0
    removed: int = 0
    events: int = 0
    usage: int = 0
    deleted_events: int = 0
    shared: int = 0
    #: Sessions whose labels, star, hide or title changed on the team server (agtaild.pg.userstate).
    state: int = 0
    full: bool = False
    seconds: float = 0.0
    cursor: int = 0
    batches: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        """Rows written to the team database (0 for an unchanged index)."""
        return self.sessions + self.removed + self.events + self.usage + self.deleted_events + self.shared + self.state

    def as_json(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "sessions": self.sessions,
            "removed": self.removed,
            "events": self.events,
            "usage": self.usage,
            "deleted_events": self.deleted_events,
            "shared": self.shared,
            "state": self.state,
            "rows": self.rows,
            "full": self.full,
            "cursor": self.cursor,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            **({"warnings": self.warnings} if self.warnings else {}),
        }


def _clean(text: str | None) -> str | None:
    """Text as it may leave this machine: secrets masked (agtaild.secrets: the team server
    never holds one, and cannot reveal it), and no NUL (PostgreSQL text cannot hold one)."""
    if not text:
        return text
    from agtaild.secrets import mask

    text = mask(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def open_local(index_path: Path) -> sqlite3.Connection:
    if not index_path.is_file():
        raise AgtailError(f"no index at {index_path}: run `agtail index` first")
    db = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        db.execute("SELECT change FROM sessions LIMIT 1")
        row = db.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
    except sqlite3.DatabaseError as err:
        db.close()
        raise AgtailError(
            f"the index at {index_path} cannot be pushed yet ({err}); run `agtail index` first"
        ) from None
    if row is None:
        db.close()
        raise AgtailError(f"the index at {index_path} has no id; run `agtail index` first")
    return db


class Pusher:
    """One push of one machine's index into the team database."""

    def __init__(self, local: sqlite3.Connection, team: Any, machine: str, state: Path | None = None) -> None:
        self.local = local
        self.state = state  # the user's labels (agtaild.userstate): share=team
        self.team = team
        self.report = PushReport(machine)
        self.machine = machine
        (self.index_id,) = local.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()

    # -- the whole push ---------------------------------------------------------------------
    def run(self) -> PushReport:
        import psycopg

        try:
            return self._run()
        except psycopg.Error as err:
            raise stopped(err, self.report.cursor, self.report.batches) from None

    def _run(self) -> PushReport:
        from agtaild.pg.roles import require_identity

        started = time.monotonic()
        migrate(self.team)
        require_identity(self.team, self.machine)
        cursor, full = self._cursor()
        self.report.full = full
        self.report.cursor = cursor
        self.local.execute("BEGIN")  # one consistent snapshot of the local index
        try:
            batch: list[tuple[str, tuple[Any, ...]]] = []
            weight = 0
            last_change = None
            for item in self._changes(cursor):
                change = item[1][0]
                if batch and weight >= BATCH_EVENTS and change != last_change:
                    self._push_batch(batch)
                    batch, weight = [], 0
                batch.append(item)
                weight += 1 + (item[1][-1] if item[0] == "session" else 0)
                last_change = change
            if batch:
                self._push_batch(batch)
            self._drop_stale()
            self._share()
        finally:
            self.local.execute("ROLLBACK")
        self.report.seconds = time.monotonic() - started
        return self.report

    def _cursor(self) -> tuple[int, bool]:
        with self.team.cursor() as cur:
            cur.execute("SELECT index_id, cursor FROM machines WHERE machine = %s", (self.machine,))
            row = cur.fetchone()
        self.team.commit()
        if row is None or row[0] != self.index_id:
            return 0, True
        return int(row[1]), False

    def _changes(self, cursor: int) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """Sessions written and sessions removed after ``cursor``, in change order."""
        sessions = self.local.execute(
            "SELECT s.change, s.id, s.agent, s.sid, coalesce(s.collection, ''), s.kind, s.cwd, s.project,"
            " s.started, s.activity, s.programmatic, s.archived, s.title, s.data,"
            " (SELECT count(*) FROM events e WHERE e.session_id = s.id)"
            " FROM sessions s WHERE s.change > ? ORDER BY s.change, s.id",
            (cursor,),
        )
        removed = self.local.execute(
            "SELECT change, agent, sid, coalesce(collection, '') FROM removed WHERE change > ? ORDER BY change",
            (cursor,),
        )
        s_row, r_row = sessions.fetchone(), removed.fetchone()
        while s_row is not None or r_row is not None:
            if r_row is not None and (s_row is None or r_row[0] <= s_row[0]):
                yield "removed", tuple(r_row)
                r_row = removed.fetchone()
            else:
                assert s_row is not None
                yield "session", tuple(s_row)
                s_row = sessions.fetchone()

    # -- one transaction --------------------------------------------------------------------
    def _push_batch(self, batch: list[tuple[str, tuple[Any, ...]]]) -> None:
        with self.team.transaction(), self.team.cursor() as cur:
            for kind, row in batch:
                if kind == "removed":
                    self._remove(cur, row)
                else:
                    self._session(cur, row)
            top = batch[-1][1][0]
            cur.execute(
                "INSERT INTO machines (machine, index_id, cursor, pushed_at) VALUES (%s, %s, %s, now())"
                " ON CONFLICT (machine) DO UPDATE SET index_id = excluded.index_id, cursor = excluded.cursor,"
                " pushed_at = excluded.pushed_at",
                (self.machine, self.index_id, top),
            )
        self.report.cursor = top
        self.report.batches += 1

    def _remove(self, cur: Any, row: tuple[Any, ...]) -> None:
        _change, agent, sid, collection = row
        # A session read again (e.g. now from the archive) under the same key in this same
        # index has a later change number and is written after this removal.
        cur.execute(
            "DELETE FROM sessions WHERE machine = %s AND agent = %s AND sid = %s AND collection = %s",
            (self.machine, agent, sid, collection),
        )
        self.report.removed += cur.rowcount

    def _session(self, cur: Any, row: tuple[Any, ...]) -> None:
        (
            _change,
            local_id,
            agent,
            sid,
            collection,
            kind,
            cwd,
            project,
            started,
            activity,
            programmatic,
            archived,
            title,
            data,
            local_events,
        ) = row
        key = (self.machine, agent, sid, collection)
        cur.execute(
            "SELECT index_id, last_event FROM sessions WHERE machine = %s AND agent = %s AND sid = %s"
            " AND collection = %s",
            key,
        )
        found = cur.fetchone()
        after = int(found[1]) if found and found[0] == self.index_id else 0
        doc = data.decode() if isinstance(data, bytes) else data
        cur.execute(
            "INSERT INTO sessions (machine, agent, sid, collection, kind, cwd, project, started, activity,"
            " programmatic, archived, title, doc, index_id, last_event, project_root)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (machine, agent, sid, collection) DO UPDATE SET kind = excluded.kind,"
            " cwd = excluded.cwd, project = excluded.project, started = excluded.started,"
            " project_root = excluded.project_root,"
            " activity = excluded.activity, programmatic = excluded.programmatic,"
            " archived = excluded.archived, title = excluded.title, doc = excluded.doc,"
            " index_id = excluded.index_id, pushed_at = now()",
            (
                *key,
                kind,
                _clean(cwd),
                _clean(project),
                started,
                activity,
                bool(programmatic),
                bool(archived),
                _clean(title),
                _clean_doc(doc),
                self.index_id,
                after,
                _clean(project_root(cwd))
                if cwd
                else None,  # the git root, found here where the repository is
            ),
        )
        self.report.sessions += 1
        last = self._events(cur, key, local_id, after)
        cur.execute(
            "UPDATE sessions SET last_event = %s WHERE machine = %s AND agent = %s AND sid = %s AND collection = %s",
            (last, *key),
        )
        self._trim_events(cur, key, local_id, local_events)
        self._usage(cur, key, local_id)

    def _events(self, cur: Any, key: tuple[str, ...], local_id: int, after: int) -> int:
        last = after
        while True:
            rows = self.local.execute(
                "SELECT id, seq, kind, epoch, text, tool_input, tool_result, result_moved, data FROM events"
                " WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
                (local_id, last, EVENT_CHUNK),
            ).fetchall()
            if not rows:
                return last
            params = []
            for eid, seq, kind, epoch, text, tool_input, tool_result, moved, data in rows:
                doc = _clean_doc(_json.encode(event_doc(data, text, tool_result, moved)).decode())
                params.append(
                    (*key, seq, kind, epoch, _clean(text), _clean(tool_input), _clean(tool_result), doc)
                )
                last = eid
            cur.executemany(
                "INSERT INTO events (machine, agent, sid, collection, seq, kind, epoch, text, tool_input,"
                " tool_result, doc) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (machine, agent, sid, collection, seq) DO UPDATE SET kind = excluded.kind,"
                " epoch = excluded.epoch, text = excluded.text, tool_input = excluded.tool_input,"
                " tool_result = excluded.tool_result, doc = excluded.doc",
                params,
            )
            self.report.events += len(params)

    def _trim_events(self, cur: Any, key: tuple[str, ...], local_id: int, local_events: int) -> None:
        """Delete events whose seq the local session no longer has (a rewritten file)."""
        cur.execute(
            "SELECT count(*) FROM events WHERE machine = %s AND agent = %s AND sid = %s AND collection = %s",
            key,
        )
        if cur.fetchone()[0] <= local_events:
            return
        seqs = [r[0] for r in self.local.execute("SELECT seq FROM events WHERE session_id = ?", (local_id,))]
        cur.execute(
            "DELETE FROM events WHERE machine = %s AND agent = %s AND sid = %s AND collection = %s"
            " AND NOT (seq = ANY(%s))",
            (*key, seqs),
        )
        self.report.deleted_events += cur.rowcount

    def _usage(self, cur: Any, key: tuple[str, ...], local_id: int) -> None:
        rows = self.local.execute(
            "SELECT key, epoch, day, model, input, output, cache_read, cache_write, reasoning, total,"
            " long_ctx, counted FROM usage WHERE session_id = ?",
            (local_id,),
        ).fetchall()
        cur.execute(
            "DELETE FROM usage WHERE machine = %s AND agent = %s AND sid = %s AND collection = %s"
            " AND NOT (key = ANY(%s))",
            (*key, [r[0] for r in rows]),
        )
        if not rows:
            return
        values = [
            (*key, k, epoch, day, model, i, o, cr, cw, rs, t, bool(lc), bool(c))
            for k, epoch, day, model, i, o, cr, cw, rs, t, lc, c in rows
        ]
        # Many rows per statement: the usage_daily triggers (schema m003_stats) run once per
        # statement, and a statement per row made a cold push ~40% slower.
        for start in range(0, len(values), _USAGE_ROWS_PER_INSERT):
            part = values[start : start + _USAGE_ROWS_PER_INSERT]
            marks = ", ".join(["(" + ", ".join(["%s"] * 16) + ")"] * len(part))
            cur.execute(
                "INSERT INTO usage (machine, agent, sid, collection, key, epoch, day, model, input, output,"
                f" cache_read, cache_write, reasoning, total, long_ctx, counted) VALUES {marks}"
                " ON CONFLICT (machine, agent, sid, collection, key) DO UPDATE SET epoch = excluded.epoch,"
                " day = excluded.day, model = excluded.model, input = excluded.input, output = excluded.output,"
                " cache_read = excluded.cache_read, cache_write = excluded.cache_write,"
                " reasoning = excluded.reasoning, total = excluded.total, long_ctx = excluded.long_ctx,"
                " counted = excluded.counted",
                [v for row in part for v in row],
            )
        self.report.usage += len(rows)

    def _share(self) -> None:
        if self.state is not None:
            self.report.shared += sync_shares(self.team, self.machine, self.state)
            self.report.state += sync_state(self.team, self.machine, self.state)

    def _drop_stale(self) -> None:
        """Rows of this machine from an earlier index that this one does not have."""
        with self.team.transaction(), self.team.cursor() as cur:
            cur.execute(
                "DELETE FROM sessions WHERE machine = %s AND index_id <> %s", (self.machine, self.index_id)
            )
            self.report.removed += cur.rowcount


def _clean_doc(doc: str) -> str:
    """A JSON document with every secret in its strings masked. JSON text never holds a raw
    NUL (it is escaped), but a damaged stored blob could."""
    from agtaild.secrets import mask_json

    doc = doc.replace("\x00", "")
    try:
        value = msgspec.json.decode(doc)
    except msgspec.DecodeError:
        from agtaild.secrets import mask

        return mask(doc)  # not JSON after all: masked as text
    return _json.encode(mask_json(value)).decode()


def push(index_path: Path, url: str, machine: str) -> PushReport:
    """One push: everything that changed in the local index since this machine's last push."""
    local = open_local(index_path)
    try:
        team = connect_team(url)
        try:
            said = transport_warning(
                team.info.host, bool(team.pgconn.ssl_in_use), team.info.get_parameters().get("sslmode")
            )
            pusher = Pusher(local, team, machine, state=index_path.parent / STATE_FILE)
            if said:
                pusher.report.warnings.append(said)
            return pusher.run()
        finally:
            team.close()
    finally:
        local.close()
