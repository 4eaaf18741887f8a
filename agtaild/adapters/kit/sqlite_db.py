"""The shared helper for agents that keep many sessions in one SQLite database (OpenCode's
``opencode.db``, Kiro's classic ``data.sqlite3``, …).

Opening. Agent databases are opened strictly read-only and never leave a file in the agent's
folder (agtaild.adapters.kit.sqlite_open: ``mode=ro`` where the WAL can be shared, else
``immutable=1``, on a private copy when a ``-wal`` holds rows): nothing but a regular file with
the SQLite header is opened. A busy timeout rides out the agent's short write locks; a
database that stays locked, is missing, damaged or not a database at all becomes one clean
:class:`AgtailError` for that unit (the index keeps what it stored and tries again later).

Discovery. :meth:`SqliteSessionAdapter.databases` names the database files a root means —
whatever stands at those names, SQLite or not. A database that cannot be listed (locked past
the busy timeout, damaged, a FIFO in its place, an adapter's listing that fails) is recorded as
an unreadable store (agtaild.adapters.kit.scan): the update reports it in its ``errors`` and
``agtail doctor`` names it, the sessions indexed from it are kept, and the archive's copy of it
is served to an index that holds nothing of it. One database never hides another.

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

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_open import (
    BUSY_TIMEOUT_SECONDS,
    SQLITE_MAGIC,
    check_database,
    connect_ro,
    database_at,
    is_sqlite_file,
    reading,
)
from agtaild.errors import AgtailError, NotFound
from agtaild.model import Session

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "SQLITE_MAGIC",
    "SqliteSessionAdapter",
    "connect_ro",
    "database_at",
    "db_files",
    "existing_files",
    "is_sqlite_file",
    "reading",
    "split_unit_path",
    "unit_path",
]

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


def list_database(db: Path, listing: Any, *, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> list[str] | None:
    """``listing(conn)`` on ``db`` opened read-only; None (and the store recorded as unreadable,
    agtaild.adapters.kit.scan) when it cannot be read, whatever the reason: a locked or damaged
    database, a FIFO in its place, a row the listing chokes on (RecursionError included)."""
    try:
        check_database(db)
        with reading(db, busy_timeout=busy_timeout) as conn:
            return list(listing(conn))
    except NotFound:
        return []  # gone since it was named: nothing to keep
    except AgtailError as exc:
        reason = exc.message.removeprefix(f"{os.path.abspath(db)}: ").removeprefix(f"{os.fspath(db)}: ")
        scan.unreadable(os.fspath(db), f"not read: {reason}")
    except Exception as exc:  # an adapter's listing gone wrong: this database only
        scan.unreadable(os.fspath(db), f"not read: its sessions could not be listed ({type(exc).__name__}: {exc})")
    return None


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
        """The database files ``root`` means, as they stand (by default ``root`` itself when it
        is not a directory): SQLite or not. The shared discovery opens only real databases and
        reports whatever else stands at these names (:func:`database_at` tells what is there)."""
        return [root] if database_at(root) else []

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
        units, _unread = self.database_units(root)
        yield from units

    def database_units(self, root: Path) -> tuple[list[Unit], list[Path]]:
        """(the units of the databases ``root`` means, the databases that could not be read —
        recorded as unreadable stores: an adapter with other files that a database may
        duplicate, such as sessions imported into it, lists none of those then)."""
        units: list[Unit] = []
        unread: list[Path] = []
        for db in self.databases(root):
            ids = list_database(db, lambda conn, db=db: self.list_sessions(conn, db), busy_timeout=self.busy_timeout)
            if ids is None:
                unread.append(db)
            units.extend(
                Unit(agent=self.id, path=unit_path(db, sid), files=self.unit_files(db, sid), root=str(root))
                for sid in ids or ()
            )
        return units, unread

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
