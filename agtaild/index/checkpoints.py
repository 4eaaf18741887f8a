"""The index's WAL checkpoints on a thread of their own during a big update.

SQLite checkpoints a WAL database from inside a commit, on the committing thread, once the
log holds ``wal_autocheckpoint`` pages: it copies every page the commit logged into the main
file and fsyncs both files. During a cold index that is the writer's thread — the stage the
whole update waits for — and the copies and the fsyncs (measured: 24 of them, 0.3 s of
waiting for the disk on the 200 MB corpus) come out of its time.

:class:`BackgroundCheckpoints` turns the writer's automatic checkpoints off for the update and
checkpoints from a second connection on its own thread (PASSIVE: it never blocks the writer,
and SQLite releases the GIL while it copies), woken after every commit. So the log does not grow
without bound (a log is only rewound when a write transaction starts after a checkpoint that
copied all of it), the writer waits for that thread after a commit that left more than
``LOG_LIMIT_BYTES`` in the log: by then most of it has been copied already. At the end the
writer's own automatic checkpoints are on again.

A checkpoint is safe from any connection at any moment: killed mid-way, the log still holds
every page, and the next connection finishes the job.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

#: The writer waits for the checkpoint thread after a commit that leaves more than this much
#: in the log (the log's size on disk stays around this; see journal_size_limit in schema).
LOG_LIMIT_BYTES = 64 << 20
#: What the writer's automatic checkpoints go back to (SQLite's default).
AUTO_CHECKPOINT_PAGES = 1000


def main_file(db: sqlite3.Connection) -> str:
    """The file of ``db``'s main database ('' for one in memory)."""
    return next((row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"), "")


class BackgroundCheckpoints:
    """Checkpoints for ``writer``'s database on a thread of their own, until :meth:`close`."""

    def __init__(self, writer: sqlite3.Connection, connect: Any) -> None:
        self.writer = writer
        path = main_file(writer)
        self.page_size = writer.execute("PRAGMA page_size").fetchone()[0]
        self.conn: sqlite3.Connection = connect(path)
        self._cond = threading.Condition()
        self._asked = 0  # commits asked about
        self._done = 0  # the last of them whose checkpoint has run
        self._log_pages = 0  # pages in the log at the last checkpoint
        self._stop = False
        self.errors: list[str] = []
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        self._thread = threading.Thread(target=self._run, name="agtail-checkpoint", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, writer: sqlite3.Connection, connect: Any) -> BackgroundCheckpoints | None:
        """The thread, or None where it cannot run (an index without a file, a second
        connection refused): the writer then checkpoints as SQLite always does."""
        try:
            if not main_file(writer):
                return None
            return cls(writer, connect)
        except (sqlite3.Error, OSError):
            try:
                writer.execute(f"PRAGMA wal_autocheckpoint = {AUTO_CHECKPOINT_PAGES}")
            except sqlite3.Error:
                pass
            return None

    def committed(self) -> None:
        """The writer has just committed: checkpoint it; wait if the log has grown too big."""
        with self._cond:
            self._asked += 1
            asked = self._asked
            self._cond.notify_all()
            if self._log_pages * self.page_size > LOG_LIMIT_BYTES:
                self._cond.wait_for(lambda: self._done >= asked or self._stop)

    def wait(self) -> None:
        """Until every commit so far has been checkpointed."""
        with self._cond:
            asked = self._asked
            self._cond.wait_for(lambda: self._done >= asked or self._stop)

    def close(self) -> None:
        """Checkpoint what the last commits logged, then stop. Left to the writer, those pages
        would be copied by the next commit that reaches ``wal_autocheckpoint``: in the daemon,
        the first append after a first index (measured: 296 ms to searchable instead of ~65)."""
        with self._cond:
            if not self._stop:
                self._asked += 1
                asked = self._asked
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._done >= asked or self._stop)
            self._stop = True
            self._cond.notify_all()
        self._thread.join()
        self.conn.close()
        try:
            self.writer.execute(f"PRAGMA wal_autocheckpoint = {AUTO_CHECKPOINT_PAGES}")
        except sqlite3.Error:
            pass  # a closed or broken connection: nothing left to checkpoint from it

    def __enter__(self) -> BackgroundCheckpoints:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as exc:  # not an SQLite error (those are kept, and it goes on): it stops
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:  # whatever ends the thread, nobody waits for it any longer
            with self._cond:
                self._stop = True
                self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._asked > self._done or self._stop)
                if self._stop:
                    return
                asked = self._asked
            pages = 0
            try:
                # fetchall: a statement left unfinished would hold a read lock, and the log could
                # never start again from the beginning.
                (row,) = self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                pages = max(row[1], 0)
            except sqlite3.Error as exc:  # e.g. the disk is full: the writer's next commits go on
                self.errors.append(str(exc))
            with self._cond:
                self._done = asked
                self._log_pages = pages
                self._cond.notify_all()
