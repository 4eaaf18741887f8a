"""The open index file and its repair: one object owns the writer connection and reopens it.

Service asks an :class:`IndexKeeper` for its connections. The keeper opens the index the
way the data dir allows (read-write, or read-only when the dir or file is not writable),
notices when the file was deleted or replaced under it (its device and inode changed), and
repairs a damaged one: the bad file is moved aside (agtaild.index.storage.quarantine), an
empty index is created, and a counter (``generation``) tells every thread that its reader
connection is stale. The caller then re-reads the transcripts into the new file.

``status()`` is what the daemon's /health shows under ``storage``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.index import schema
from agtaild.index.storage import (
    DiskFull,
    check_data_dir,
    disk_full_message,
    file_identity,
    is_writable,
    problem_of,
    quarantine,
    readonly_uri,
)

#: How many past repairs status() lists.
_KEPT_EVENTS = 10


def _say(message: str) -> None:
    print(f"agtail: {message}", file=sys.stderr)


class IndexKeeper:
    def __init__(self, data_dir: Path, path: Path, *, say: Callable[[str], None] = _say) -> None:
        check_data_dir(data_dir)
        self.data_dir = data_dir
        self.path = path
        self.say = say
        self.read_only = not is_writable(data_dir, path)
        #: Bumped on every reopen: a reader connection of an older generation is stale.
        self.generation = 0
        self.state = "read_only" if self.read_only else "ok"
        self.message: str | None = None
        self.events: list[dict[str, Any]] = []
        self.lock = threading.RLock()
        self.identity: tuple[int, int] | None = None
        self.db = self._open()

    # -- opening --------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if self.read_only:
            return self._open_read_only()
        try:
            return self._open_writable()
        except sqlite3.DatabaseError as exc:
            problem = problem_of(exc)
            if problem == "readonly":  # the permissions said yes, the file system said no
                self.read_only, self.state = True, "read_only"
                return self._open_read_only()
            if problem == "full":
                raise DiskFull(disk_full_message(self.data_dir, 1 << 20)) from None
            if problem != "corrupt":
                raise
            self._set_aside(exc)
            return self._open_writable()

    def _open_writable(self) -> sqlite3.Connection:
        folder = self.path.parent
        new_dir = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        if new_dir:
            os.chmod(folder, 0o700)  # transcripts hold secrets; so does their index
        fresh = not self.path.exists()
        db = schema.connect(self.path)
        try:
            if fresh:
                os.chmod(self.path, 0o600)
            schema.migrate(db)
        except BaseException:
            db.close()
            raise
        self.identity = file_identity(self.path)
        return db

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.exists():
            raise AgtailError(f"there is no index in {self.data_dir}, and that directory is read-only")
        db = self.reader()
        if not schema.up_to_date(db):
            db.close()
            raise AgtailError(
                f"the index in {self.data_dir} was written by another agtail version and the directory "
                "is read-only, so it cannot be rebuilt; make it writable and run `agtail reindex`"
            )
        self.message = f"the data dir {self.data_dir} is read-only: showing the index as it is, without updating it"
        self.identity = file_identity(self.path)
        return db

    def reader(self) -> sqlite3.Connection:
        """A new connection for reading (query_only; opened read-only in a read-only dir)."""
        if not self.read_only:
            return schema.connect(self.path, readonly=True)
        try:  # mode=ro still needs to create -shm for a WAL index; immutable does not
            db = schema.connect(readonly_uri(self.path), readonly=True, uri=True)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            return schema.connect(readonly_uri(self.path, immutable=True), readonly=True, uri=True)

    # -- noticing and repairing -----------------------------------------------------------
    def replaced(self) -> bool:
        """Was the index file deleted or replaced since we opened it?"""
        return not self.read_only and file_identity(self.path) != self.identity

    def repair(self, why: str, exc: BaseException | None = None) -> None:
        """Reopen on a new, empty index; ``why`` is 'corrupt' (the file is moved aside first)
        or 'replaced' (deleted or swapped). The caller re-reads the transcripts into it."""
        with self.lock:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            if why == "replaced" and not self.path.exists():
                for suffix in ("-wal", "-shm"):  # the deleted file's: never replay them onto a new one
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            if why == "corrupt":
                self._set_aside(exc)
            else:
                self.say(f"the index {self.path} was deleted or replaced; rebuilding it")
                self._note("rebuilt", f"the index file was {why}")
            self.db = self._open_writable()
            self.generation += 1

    def _set_aside(self, exc: BaseException | None) -> None:
        moved = quarantine(self.path)
        reason = f" ({' '.join(str(exc).split())})" if exc is not None else ""
        self.say(f"the index {self.path} is damaged{reason}; moved it to {moved} and rebuilding it")
        self._note("rebuilt", f"the index was damaged{reason}; the bad file is {moved}")

    def _note(self, state: str, message: str) -> None:
        self.state = "rebuilding"  # until the update that refills it succeeds (agtaild.index.upkeep)
        self.message = message
        self.events = [*self.events, {"at": time.time(), "event": state, "message": message}][-_KEPT_EVENTS:]

    def quick_check(self) -> BaseException | None:
        """``PRAGMA quick_check`` (a full pass over the file) on a new connection, so that
        pages cached by the long-lived ones do not hide damage on disk: the error, or None."""
        try:
            db = schema.connect(self.path, readonly=True)
        except sqlite3.DatabaseError as exc:
            return exc
        try:
            rows = db.execute("PRAGMA quick_check(1)").fetchall()
        except sqlite3.DatabaseError as exc:
            return exc
        finally:
            db.close()
        if rows and rows[0][0] != "ok":
            return sqlite3.DatabaseError(f"quick_check: {rows[0][0]}")
        return None

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "read_only": self.read_only,
            "message": self.message,
            "path": str(self.path),
            "repairs": list(self.events),
        }

    def close(self) -> None:
        with self.lock:
            self.db.close()
