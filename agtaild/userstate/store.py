"""``<data dir>/state.sqlite3``: labels, stars, titles and hides, and who set each.

Every change is one row in ``changes`` (who, when, what) and the current value in ``labels`` or
``marks``; both are written in the same transaction, so the current state is always the replay
of the accepted changes. A change is refused (not written) when a higher-ranked one holds the
same label or mark: a user's wins over an agent's, an agent's over a rule's
(agtaild.userstate.checks.RANK). A removal is kept as a row with no value, so that a rule or an
agent does not bring back what a user took away.

A batch (:meth:`UserState.apply`) is checked whole before anything is written, then written in
one transaction: nothing is ever half applied. Writers in several processes (the daemon, CLIs,
an MCP server) are serialised by SQLite (``BEGIN IMMEDIATE``, WAL, a busy timeout).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError, UsageError
from agtaild.userstate import checks
from agtaild.userstate.allowlist import m002_secret_allowlist

FILE = "state.sqlite3"
MARKS = ("star", "hide", "title")
#: A session's key: (collection or "" for this machine's own, agent, session id).
Ref = tuple[str, str, str]


@dataclass(frozen=True)
class Change:
    """One change asked for: ``what`` is ``label`` (``key``, ``value``; None removes it) or a
    mark (``star``, ``hide``: value "1" or None; ``title``: the text or None)."""

    ref: Ref
    what: str
    value: str | None
    key: str = ""
    who: str = "user"
    #: When it was made, for a change carried from elsewhere (a sync's state pack, a backup):
    #: then a change of the same rank wins only when it is newer, and the same change twice
    #: is taken once. None: now, and a change of the same rank always wins.
    at: float | None = None


def _m001_base(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE labels (collection TEXT NOT NULL, agent TEXT NOT NULL, sid TEXT NOT NULL, key TEXT NOT NULL,"
        " value TEXT, who TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (collection, agent, sid, key))"
    )
    db.execute("CREATE INDEX labels_key ON labels(key, value)")
    db.execute(
        "CREATE TABLE marks (collection TEXT NOT NULL, agent TEXT NOT NULL, sid TEXT NOT NULL, mark TEXT NOT NULL,"
        " value TEXT, who TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (collection, agent, sid, mark))"
    )
    db.execute(
        "CREATE TABLE changes (id INTEGER PRIMARY KEY, at REAL NOT NULL, who TEXT NOT NULL, collection TEXT NOT NULL,"
        " agent TEXT NOT NULL, sid TEXT NOT NULL, what TEXT NOT NULL, key TEXT NOT NULL, value TEXT)"
    )
    db.execute(
        "CREATE TABLE rules (id INTEGER PRIMARY KEY, filter TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, at REAL NOT NULL)"
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m001_base, m002_secret_allowlist]


class UserState:
    """The store of one data dir. Thread-safe; one connection per instance."""

    def __init__(self, data_dir: str | os.PathLike[str], *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(data_dir) / FILE
        self._clock = clock
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    # -- the connection -------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                db = self._open()
            except sqlite3.DatabaseError as exc:
                raise AgtailError(
                    f"cannot open {self.path}: {exc}. It holds your labels, stars, titles and hides and is "
                    "never rebuilt: restore it from a backup rather than delete it"
                ) from None
            self._db = db
        return self._db

    def _open(self) -> sqlite3.Connection:
        """Connect, switch to WAL and migrate. Processes opening a new store at once can get
        SQLITE_BUSY at once, without the busy handler (the switch to WAL, or a lock SQLite gives
        up to avoid a deadlock): such an open is tried again for up to ~10 s."""
        delay = 0.01
        for attempt in range(40):
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
            try:
                db.execute("PRAGMA busy_timeout = 30000")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = FULL")  # a user's decision is worth an fsync
                self._migrate(db)
                return db
            except sqlite3.OperationalError as exc:
                db.close()
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 39:
                    raise
                time.sleep(delay)
                delay = min(0.5, delay * 2)
        raise AssertionError("unreachable")

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL)")
            done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
            for step in MIGRATIONS:
                if step.__name__ not in done:
                    step(db)
                    db.execute("INSERT INTO _migrations VALUES (?, ?)", (step.__name__, self._clock()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- writing --------------------------------------------------------------------------
    def apply(self, changes: Iterable[Change]) -> list[tuple[Change, bool]]:
        """Check every change, then write them in one transaction. Each comes back with
        whether it was accepted (False: a higher-ranked change holds that label or mark)."""
        batch = [self._checked(c) for c in changes]
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                out = [(c, self._write(db, c)) for c in batch]
                if any(ok for _, ok in out):
                    self._check_label_count(db, {c.ref for c, ok in out if ok and c.what == "label"})
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return out

    def _checked(self, c: Change) -> Change:
        collection, agent, sid = c.ref
        if not agent or not sid or len(sid) > 512 or len(collection) > 128:
            raise UsageError(f"not a session: {agent!r}:{sid!r}")
        checks.who(c.who)
        at = None if c.at is None else checks.at(c.at, self._clock())
        if c.what == "label":
            return Change(
                c.ref, "label", None if c.value is None else checks.value(c.value), checks.key(c.key), c.who, at
            )
        if c.what in ("star", "hide"):
            return Change(c.ref, c.what, None if c.value in (None, "", "0") else "1", "", c.who, at)
        if c.what == "title":
            return Change(c.ref, "title", None if c.value is None else checks.title(c.value), "", c.who, at)
        raise UsageError(f"unknown change {c.what!r}")

    def _write(self, db: sqlite3.Connection, c: Change) -> bool:
        collection, agent, sid = c.ref
        if c.what == "label":
            table, name_col, name = "labels", "key", c.key
        else:
            table, name_col, name = "marks", "mark", c.what
        row = db.execute(
            f"SELECT who, at, value FROM {table} WHERE collection = ? AND agent = ? AND sid = ? AND {name_col} = ?",
            (collection, agent, sid, name),
        ).fetchone()
        if row is not None and checks.RANK[row[0]] > checks.RANK[c.who]:
            return False
        if c.at is not None and row is not None and row[0] == c.who and row[1] >= c.at:
            return False  # carried: the same rank's newer (or the very same) change holds
        now = self._clock() if c.at is None else c.at
        db.execute(
            f"INSERT OR REPLACE INTO {table} (collection, agent, sid, {name_col}, value, who, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (collection, agent, sid, name, c.value, c.who, now),
        )
        db.execute(
            "INSERT INTO changes (at, who, collection, agent, sid, what, key, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (now, c.who, collection, agent, sid, c.what, name if c.what == "label" else "", c.value),
        )
        return True

    def _check_label_count(self, db: sqlite3.Connection, refs: set[Ref]) -> None:
        for ref in refs:
            (n,) = db.execute(
                "SELECT count(*) FROM labels WHERE collection = ? AND agent = ? AND sid = ? AND value IS NOT NULL",
                ref,
            ).fetchone()
            if n > checks.MAX_LABELS:
                raise UsageError(f"{ref[1]}:{ref[2]} would carry {n} labels; at most {checks.MAX_LABELS}")

    # -- reading --------------------------------------------------------------------------
    def of(self, refs: Iterable[Ref]) -> dict[Ref, dict[str, Any]]:
        """Each session's state: ``{"labels": {key: value}, "starred", "hidden", "title"}`` (only
        sessions that have any)."""
        wanted = set(refs)
        out: dict[Ref, dict[str, Any]] = {}
        if not wanted or not self.path.exists():
            return out
        with self._lock:
            db = self.db
            for part in _chunks(sorted(wanted), 300):
                where, args = _refs_sql(part)
                for collection, agent, sid, key, value in db.execute(
                    f"SELECT collection, agent, sid, key, value FROM labels WHERE value IS NOT NULL AND ({where})",
                    args,
                ):
                    _entry(out, (collection, agent, sid))["labels"][key] = value
                for collection, agent, sid, mark, value in db.execute(
                    f"SELECT collection, agent, sid, mark, value FROM marks WHERE value IS NOT NULL AND ({where})",
                    args,
                ):
                    entry = _entry(out, (collection, agent, sid))
                    if mark == "title":
                        entry["title"] = value
                    else:
                        entry["starred" if mark == "star" else "hidden"] = True
        return out

    def matching(
        self, *, label: tuple[str, str | None] | None = None, starred: bool = False, hidden: bool = False
    ) -> set[Ref]:
        """The sessions that carry ``label`` (key, and value unless None), are starred, are hidden."""
        if not self.path.exists():
            return set()
        found: set[Ref] | None = None
        with self._lock:
            db = self.db
            if label is not None:
                key, val = label
                sql = "SELECT collection, agent, sid FROM labels WHERE key = ? AND value IS NOT NULL"
                args: list[Any] = [checks.key(key)]
                if val is not None:
                    sql += " AND value = ?"
                    args.append(val)
                found = {(r[0], r[1], r[2]) for r in db.execute(sql, args)}
            for flag, mark in ((starred, "star"), (hidden, "hide")):
                if flag:
                    rows: set[Ref] = {(r[0], r[1], r[2]) for r in db.execute(
                        "SELECT collection, agent, sid FROM marks WHERE mark = ? AND value IS NOT NULL", (mark,))}  # fmt: skip
                    found = rows if found is None else found & rows
        return found or set()

    def history(self, ref: Ref) -> list[dict[str, Any]]:
        """Every accepted change of one session, oldest first."""
        if not self.path.exists():
            return []
        with self._lock:
            rows = self.db.execute(
                "SELECT at, who, what, key, value FROM changes WHERE collection = ? AND agent = ? AND sid = ? ORDER BY id",
                ref,
            ).fetchall()
        return [
            {"at": at, "who": who, "what": what, "key": key or None, "value": value}
            for at, who, what, key, value in rows
        ]

    # -- carrying it -------------------------------------------------------------------------
    def dump(self) -> dict[str, Any]:
        """Everything, as JSON-able data (a backup; what sync carries to another machine)."""
        if not self.path.exists():
            return {"version": 1, "labels": [], "marks": []}
        with self._lock:
            db = self.db
            labels = [
                list(r)
                for r in db.execute(
                    "SELECT collection, agent, sid, key, value, who, at FROM labels ORDER BY 1, 2, 3, 4"
                )
            ]
            marks = [
                list(r)
                for r in db.execute(
                    "SELECT collection, agent, sid, mark, value, who, at FROM marks ORDER BY 1, 2, 3, 4"
                )
            ]
        return {"version": 1, "labels": labels, "marks": marks}

    def load(self, doc: Any, *, collection: str | None = None) -> int:
        """Take another store's dump (another machine's, arriving with its sessions as
        ``collection``): each row is applied as a change by its own ``who``, so precedence holds
        here too, and of the same rank the newer change wins (a row's own time is kept): the
        same dump loaded twice changes nothing the second time. Returns the rows accepted. A
        malformed dump is refused whole, before anything is written."""
        if not isinstance(doc, dict) or doc.get("version") != 1:
            raise UsageError("not a dump of agtail's user state (version 1)")
        changes: list[Change] = []
        for table, rows in (("labels", doc.get("labels")), ("marks", doc.get("marks"))):
            if not isinstance(rows, list):
                raise UsageError(f"user state dump: {table} is not a list")
            for row in rows:
                if not (isinstance(row, list) and len(row) == 7 and all(isinstance(x, str) for x in row[:4])):
                    raise UsageError(f"user state dump: a malformed {table} row: {json.dumps(row)[:80]}")
                src_collection, agent, sid, name, value, who, at = row
                if value is not None and not isinstance(value, str):
                    raise UsageError(f"user state dump: a {table} value is text or null: {json.dumps(row)[:80]}")
                if table == "marks" and name not in MARKS:
                    raise UsageError(f"user state dump: {name[:20]!r} is no mark ({', '.join(MARKS)})")
                if not isinstance(who, str):
                    raise UsageError(f"user state dump: who made a change is text: {json.dumps(row)[:80]}")
                ref = (collection if collection is not None else src_collection, agent, sid)
                if table == "labels":
                    changes.append(Change(ref, "label", value, key=name, who=who, at=at))
                else:
                    changes.append(Change(ref, name, value, who=who, at=at))
        return sum(1 for _, ok in self.apply(changes) if ok)


def _entry(out: dict[Ref, dict[str, Any]], ref: Ref) -> dict[str, Any]:
    return out.setdefault(ref, {"labels": {}, "starred": False, "hidden": False, "title": None})


def _chunks(items: list[Ref], n: int) -> Iterable[list[Ref]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _refs_sql(refs: list[Ref]) -> tuple[str, list[Any]]:
    args: list[Any] = []
    for ref in refs:
        args.extend(ref)
    return " OR ".join(["(collection = ? AND agent = ? AND sid = ?)"] * len(refs)), args
