"""The archive's catalog (``.zstore/catalog.sqlite3``): one row per archived file.

A row records the file's frames (raw length, compressed length, sha256 of the raw bytes), the
native file it mirrors, the unit it belongs to and the digests of its first and last bytes
(agtaild.store.archive.ends). :class:`CatalogRows` is the part of the store
(agtaild.store.archive.blobs.ZStore) that reads and writes those rows; the store decides when
a row may be written (after its blob's bytes are durable).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

import msgspec

from agtaild.fsnames import to_text

log = logging.getLogger(__name__)

encode_json = msgspec.json.Encoder().encode


class Row:
    """One catalog row: an archived file and its frames."""

    __slots__ = ("ends", "frames", "mtime_ns", "path", "source", "unit")

    def __init__(
        self,
        path: str,
        source: str | None,
        unit: str | None,
        mtime_ns: int,
        frames: list[list[Any]],
        ends: list[Any] | None = None,
    ) -> None:
        self.path = path
        self.source = source
        self.unit = unit
        self.mtime_ns = mtime_ns
        self.frames = frames
        #: ``[window, head sha256, tail sha256]`` (agtaild.store.archive.ends), or None for a
        #: row written before the catalog kept them.
        self.ends = ends

    @property
    def size(self) -> int:
        return sum(f[0] for f in self.frames)

    @property
    def zsize(self) -> int:
        return sum(f[1] for f in self.frames)


class CatalogRows:
    """The catalog's rows, for the store that holds them (``root``: the ``.zstore`` folder)."""

    root: Path
    _lock: threading.RLock
    _db: sqlite3.Connection | None
    #: The catalog's ``ends`` column as rows are read ("NULL" when it could not be added).
    _ends_sql: str

    def exists(self) -> bool:
        return (self.root / "catalog.sqlite3").is_file()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.root.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.root / "catalog.sqlite3", check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL: a commit is durable once the WAL is checkpointed (or :meth:`sync`); a row
            # lost to a power cut only means the file is stored again, never a wrong read.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, source TEXT, unit TEXT,"
                " mtime_ns INTEGER NOT NULL, frames TEXT NOT NULL, size INTEGER NOT NULL, ends TEXT)"
            )
            self._ends_column(db)
            self._db = db
        return self._db

    def _ends_column(self, db: sqlite3.Connection) -> None:
        """Add the ``ends`` column to a catalog written before it had one (its rows gain their
        digests at their next append). A catalog that cannot be written (a read-only data dir)
        is read without them."""
        if any(r[1] == "ends" for r in db.execute("PRAGMA table_info(files)")):
            return
        try:
            _add_ends_column(db)
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):  # else another process added it meanwhile
                log.warning("archive: cannot add the ends column to the catalog: %s", exc)
                self._ends_sql = "NULL"

    def get(self, path: str) -> Row | None:
        with self._lock:
            db = self.db
            r = db.execute(
                f"SELECT path, source, unit, mtime_ns, frames, {self._ends_sql} FROM files WHERE path = ?",
                (to_text(path),),
            ).fetchone()
        return None if r is None else _row(r)

    def rows(self) -> list[Row]:
        with self._lock:
            db = self.db
            got = db.execute(
                f"SELECT path, source, unit, mtime_ns, frames, {self._ends_sql} FROM files ORDER BY path"
            ).fetchall()
        return [_row(r) for r in got]

    def heads(self) -> list[tuple[str, str | None, str | None, int, int]]:
        """(path, source, unit, size, mtime_ns) of every row, without their frames (cheap:
        read before every index update)."""
        with self._lock:
            return self.db.execute("SELECT path, source, unit, size, mtime_ns FROM files").fetchall()

    def totals(self) -> tuple[int, int]:
        """Files archived and their original bytes (conflict copies included)."""
        with self._lock:
            n, size = self.db.execute(
                "SELECT count(DISTINCT files.path), coalesce(sum(json_extract(f.value, '$[0]')), 0)"
                " FROM files, json_each(files.frames) AS f"
            ).fetchone()
        return int(n), int(size)

    def _put(self, row: Row) -> None:
        with self._lock:
            values = (row.path, row.source, row.unit, row.mtime_ns, encode_json(row.frames).decode(), row.size)
            if self._ends_sql == "NULL":
                self.db.execute(
                    "INSERT OR REPLACE INTO files (path, source, unit, mtime_ns, frames, size)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    values,
                )
                return
            ends = None if row.ends is None else encode_json(row.ends).decode()
            self.db.execute(
                "INSERT OR REPLACE INTO files (path, source, unit, mtime_ns, frames, size, ends)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*values, ends),
            )

    def set_source(self, path: str, source: str | None, unit: str | None) -> None:
        with self._lock:
            self.db.execute(
                "UPDATE files SET source = ?, unit = ? WHERE path = ?", (source, unit, to_text(path))
            )


def _row(r: tuple[Any, ...]) -> Row:
    return Row(r[0], r[1], r[2], r[3], json.loads(r[4]), None if r[5] is None else json.loads(r[5]))


def _add_ends_column(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE files ADD COLUMN ends TEXT")
