"""The shared helper for agents that keep many sessions in one SQLite database (OpenCode's
``opencode.db``, Kiro's classic ``data.sqlite3``, …).

Opening. Agent databases are opened read-only through a ``file:…?mode=ro`` URI — never
``immutable=1``: a running agent keeps its newest rows in the ``-wal`` file, and only a
normal read-only connection sees them. A busy timeout rides out the agent's short write
locks; a database that stays locked, is missing, or is not a database at all becomes one
clean :class:`AgtailError` for that unit (the index skips it and tries again later).

Units. One session is the synthetic path ``<db path>#<session id>``; its ``files`` are the
database and its ``-wal``/``-shm`` siblings, so a write to the database is noticed.

Reading. Every write to the database touches those shared files, so every session of the
database looks changed after every write. To keep that cheap an adapter supplies a
``fingerprint`` (a small query that changes whenever the session's rows change); a read
whose fingerprint equals the saved one returns the saved summary and no events, without
reading the rows. Otherwise the session is read whole (``reset=True``), inside one read
transaction so its rows are a consistent snapshot, with one accounting "line" per row.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.errors import AgtailError, NotFound
from agtaild.model import Session

log = logging.getLogger(__name__)

#: The 16 bytes every SQLite 3 database file starts with.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long a read waits for an agent's write lock before giving up on this pass.
BUSY_TIMEOUT_SECONDS = 2.0
WAL_SUFFIXES = ("-wal", "-shm")


def unit_path(db: str | os.PathLike[str], session_id: str) -> str:
    """The stable key of one session inside a database: ``<db path>#<session id>``."""
    return f"{os.fspath(db)}#{session_id}"


def split_unit_path(path: str) -> tuple[str, str]:
    """``<db path>#<session id>`` → (db path, session id). The last ``#`` separates them,
    so a ``#`` inside the directory names is fine (session ids are agent-made and have none)."""
    db, sep, session_id = path.rpartition("#")
    if not sep or not db or not session_id:
        raise AgtailError(f"{path!r} is not a <database>#<session id> unit path")
    return db, session_id


def db_files(db: str | os.PathLike[str]) -> list[str]:
    """The database and its WAL siblings: the files whose changes can change a session."""
    base = os.fspath(db)
    return [base, *(base + suffix for suffix in WAL_SUFFIXES)]


def existing_files(db: str | os.PathLike[str]) -> list[str]:
    return [f for f in db_files(db) if os.path.exists(f)]


def is_sqlite_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file that starts with the SQLite header."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _describe(db: str, exc: sqlite3.Error) -> AgtailError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return AgtailError(
            f"{db}: the database stayed locked by another process; it will be read again later"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return AgtailError(f"{db}: not a readable SQLite database ({text})")
    if "unable to open" in text:
        return AgtailError(f"{db}: cannot be opened read-only ({text})")
    if "no such table" in text or "no such column" in text:
        return AgtailError(f"{db}: not the expected schema ({text})")
    return AgtailError(f"{db}: {text}")


def connect_ro(
    db: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_SECONDS
) -> sqlite3.Connection:
    """A read-only connection that still sees rows in the WAL. Raises AgtailError.

    The connection is in autocommit mode; :func:`reading` wraps queries in one read
    transaction. It belongs to the calling thread only.
    """
    path = os.path.abspath(os.fspath(db))
    if not os.path.isfile(path):
        raise NotFound(f"{path}: no such database file")
    uri = f"file:{quote(path)}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise _describe(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        # Touch the schema now so that "not a database" surfaces here, not mid-read.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise _describe(path, exc) from exc
    return conn


@contextmanager
def reading(
    db: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_SECONDS
) -> Iterator[sqlite3.Connection]:
    """Open ``db`` read-only and hold one read transaction (a consistent snapshot) for the
    block. Any sqlite3 error inside the block becomes an AgtailError naming the database."""
    path = os.path.abspath(os.fspath(db))
    conn = connect_ro(path, busy_timeout=busy_timeout)
    try:
        conn.execute("BEGIN")
        yield conn
    except sqlite3.Error as exc:
        raise _describe(path, exc) from exc
    finally:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        conn.close()


def table_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (empty when it does not exist): column sets vary by
    agent version, so readers select ``*`` and map by name."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({quote_ident(table)})")}


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def rows_as_dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]


class SavedRead(msgspec.Struct):
    """What a read leaves for the next one: the session's fingerprint and its summary."""

    fingerprint: Any
    session: Session
    #: A time-dependent summary field (e.g. "interrupted" once a session has gone quiet)
    #: may change at this time even if no row does: re-read once it has passed.
    recheck_after: float | None = None


class SqliteSessionAdapter(Adapter):
    """Base for "many sessions in one database" adapters.

    Subclasses implement :meth:`databases` (which DB files a root means),
    :meth:`list_sessions`, :meth:`fingerprint` and :meth:`read_session`.
    """

    busy_timeout: ClassVar[float] = BUSY_TIMEOUT_SECONDS

    # -- to implement -------------------------------------------------------------------
    def databases(self, root: Path) -> list[Path]:
        """The database files under ``root`` (by default: ``root`` itself if it is one)."""
        return [root] if is_sqlite_file(root) else []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        raise NotImplementedError

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        """A small value that changes whenever the session's rows change; None when the
        session does not exist. Must be msgspec-encodable (tuples of ints and strings)."""
        raise NotImplementedError

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        """Fill ``book`` (events, usage, accounting — one count per row) and its session.
        Returns the ``recheck_after`` time, if the summary depends on the clock."""
        raise NotImplementedError

    # -- the helper -----------------------------------------------------------------------
    def unit_files(self, db: Path, session_id: str) -> list[str]:
        return db_files(db)

    def discover(self, root: Path) -> Iterator[Unit]:
        for db in self.databases(root):
            try:
                with reading(db, busy_timeout=self.busy_timeout) as conn:
                    ids = self.list_sessions(conn, db)
            except AgtailError as exc:
                log.warning("%s: skipping %s: %s", self.id, db, exc.message)
                continue
            for session_id in ids:
                yield Unit(
                    agent=self.id,
                    path=unit_path(db, session_id),
                    files=self.unit_files(db, session_id),
                    root=str(root),
                )

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        db, session_id = split_unit_path(unit.path)
        now = time.time() if now is None else now
        saved: SavedRead | None = None
        if state is not None:
            try:
                saved = msgspec.msgpack.decode(state, type=SavedRead)
            except (msgspec.DecodeError, msgspec.ValidationError):
                saved = None
        with reading(db, busy_timeout=self.busy_timeout) as conn:
            fp = self.fingerprint(conn, session_id)
            if fp is None:
                raise NotFound(f"{db}: no session {session_id!r}")
            fp = msgspec.msgpack.decode(msgspec.msgpack.encode(fp))  # compare as stored
            if (
                saved is not None
                and saved.fingerprint == fp
                and (saved.recheck_after is None or now < saved.recheck_after)
            ):
                return ReadResult(session=saved.session, events=[], usage=[], state=state, reset=False)
            book = RecordBook(Session(agent=self.id, id=session_id, path=unit.path))
            recheck = self.read_session(conn, unit, session_id, book, now=now)
        session = book.session
        session.path = unit.path
        if session.usage.is_zero():
            session.usage = book.total_usage()
        if unit.archived:
            session.archived = True
        new_state = msgspec.msgpack.encode(SavedRead(fingerprint=fp, session=session, recheck_after=recheck))
        return book.result(new_state)

    def native_files(self, unit: Unit) -> list[str]:
        db, _ = split_unit_path(unit.path)
        return existing_files(db)
