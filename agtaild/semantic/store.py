"""The vector store: ``<data dir>/vectors.sqlite3``, derived from the index and thrown away freely.

Tables:

* ``meta``: ``model_id`` and ``dimension`` of every vector here; another model empties the store
  (vectors of two models are never compared), and ``generation`` moves on every deletion so the
  in-memory matrix (agtaild.semantic.knn) knows to reload rather than only append.
* ``seen``: every index event looked at (event id, session id, seq), embedded or not: the
  coverage is its count against the index's. A row whose id now holds another event (the
  index re-read a session) is dropped with its vectors, and the event is embedded again.
* ``chunks``: one int8 vector per chunk (``scale`` × int8 ≈ the unit float vector).

It is its own file, written only by the embedder, so the full-text index never waits on it;
the index is attached read-only for the joins.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

FILE_NAME = "vectors.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS seen (event_id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    scale REAL NOT NULL,
    vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_event ON chunks(event_id);
"""


def quantize(vectors: Any) -> tuple[Any, Any]:
    """(int8 rows, float scales) with row ≈ scale × int8 row."""
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


class VectorStore:
    def __init__(self, path: str | Path, index_path: str | Path) -> None:
        self.path = Path(path)
        self.index_path = Path(index_path)
        self.lock = threading.RLock()
        self.db = sqlite3.connect(
            f"file:{quote(str(self.path))}",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
            timeout=30,
        )
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self._counts: tuple[int, tuple[int, int]] | None = None

    def close(self) -> None:
        with self.lock, contextlib.suppress(sqlite3.Error):
            self.db.close()

    # -- meta -----------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        # Under the lock like every use of the connection: a statement of another thread
        # running while the embedder detaches the index keeps the index's read transaction
        # open, and the DETACH fails ("database idx is locked").
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def model_id(self) -> str | None:
        return self.meta("model_id")

    @property
    def generation(self) -> int:
        return int(self.meta("generation") or 0)

    def use_model(self, model_id: str, dimension: int) -> bool:
        """Make the store this model's; True when it was emptied for it (another model's)."""
        with self.lock:
            if self.meta("model_id") == model_id and self.meta("dimension") == str(dimension):
                return False
            with self._write():
                self.db.execute("DELETE FROM chunks")
                self.db.execute("DELETE FROM seen")
                self._set("model_id", model_id)
                self._set("dimension", str(dimension))
                self._bump()
            return True

    def _set(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _bump(self) -> None:
        self._set("generation", str(self.generation + 1))

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._counts = None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextlib.contextmanager
    def attached(self) -> Iterator[sqlite3.Connection]:
        """The store's connection with the index attached read-only as ``idx``."""
        with self.lock:
            uri = f"file:{quote(str(self.index_path))}?mode=ro"
            self.db.execute("ATTACH DATABASE ? AS idx", (uri,))
            try:
                yield self.db
            finally:
                with contextlib.suppress(sqlite3.Error):
                    if self.db.in_transaction:
                        self.db.execute("ROLLBACK")
                self.db.execute("DETACH DATABASE idx")

    # -- the embedder's side ----------------------------------------------------------------
    def drop_stale(self, db: sqlite3.Connection) -> int:
        """Forget events the index no longer has as they were (``db``: from :meth:`attached`)."""
        stale = [
            r[0]
            for r in db.execute(
                "SELECT s.event_id FROM seen s LEFT JOIN idx.events e ON e.id = s.event_id"
                " WHERE e.id IS NULL OR e.session_id != s.session_id OR e.seq != s.seq"
            )
        ]
        if stale:
            with self._write():
                for start in range(0, len(stale), 500):
                    part = stale[start : start + 500]
                    marks = ",".join("?" * len(part))
                    db.execute(f"DELETE FROM chunks WHERE event_id IN ({marks})", part)
                    db.execute(f"DELETE FROM seen WHERE event_id IN ({marks})", part)
                self._bump()
        return len(stale)

    def pending(self, db: sqlite3.Connection, below: int | None, limit: int) -> list[int]:
        """Ids of index events not looked at yet, newest first, below ``below``."""
        sql = "SELECT e.id FROM idx.events e WHERE NOT EXISTS (SELECT 1 FROM seen s WHERE s.event_id = e.id)"
        args: list[Any] = []
        if below is not None:
            sql += " AND e.id < ?"
            args.append(below)
        return [r[0] for r in db.execute(sql + " ORDER BY e.id DESC LIMIT ?", [*args, limit])]

    def add(
        self, seen: Sequence[tuple[int, int, int]], chunks: Sequence[tuple[int, int]], vectors: Any
    ) -> None:
        """Record events looked at, and the vectors of their chunks ((event id, chunk no) each)."""
        rows: list[tuple[int, int, float, bytes]] = []
        if chunks:
            q, scale = quantize(vectors)
            rows = [(eid, n, float(scale[i]), q[i].tobytes()) for i, (eid, n) in enumerate(chunks)]
        with self.lock, self._write():
            self.db.executemany(
                "INSERT OR REPLACE INTO seen (event_id, session_id, seq) VALUES (?, ?, ?)", seen
            )
            if rows:
                self.db.executemany(
                    "INSERT INTO chunks (event_id, chunk, scale, vec) VALUES (?, ?, ?, ?)", rows
                )

    # -- counts ---------------------------------------------------------------------------
    def counts(self) -> tuple[int, int]:
        """(events looked at, chunks stored). Counting a million rows takes ~0.2 s here, and
        /health asks often: the counts are kept until this connection writes or another one
        commits (SQLite's ``data_version``)."""
        with self.lock:
            version = self.db.execute("PRAGMA data_version").fetchone()[0]
            cached = self._counts
            if cached is not None and cached[0] == version:
                return cached[1]
            seen = self.db.execute("SELECT count(*) FROM seen").fetchone()[0]
            chunks = self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            self._counts = (version, (int(seen), int(chunks)))
        return int(seen), int(chunks)

    def rows_after(self, last_id: int, limit: int = -1) -> list[tuple[int, int, float, bytes]]:
        """(chunk id, event id, scale, vector bytes) of the chunks after ``last_id`` (at most
        ``limit`` of them; -1: all)."""
        with self.lock:
            return self.db.execute(
                "SELECT id, event_id, scale, vec FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                (last_id, limit),
            ).fetchall()

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += Path(str(self.path) + suffix).stat().st_size
        return total
