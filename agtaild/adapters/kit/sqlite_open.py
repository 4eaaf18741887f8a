"""Opening an agent's SQLite database strictly read-only, leaving no trace in its folder.

Nothing but a regular file that starts with the SQLite header is handed to SQLite (a FIFO
named ``sessions.db`` would hang the open: agtaild.adapters.kit.files), and its ``-wal``,
``-shm`` and ``-journal`` must be regular files too, or absent. Then the way in depends on what
the agent left (the header says whether the database is in WAL mode):

* **shared** — a rollback-journal database, or a WAL database whose ``-wal`` and ``-shm`` are
  both there (the agent has it open): ``mode=ro``, a reader like any other, which sees the
  rows still in the WAL and creates no file (SQLite creates ``-wal``/``-shm`` only when they
  are missing). Where that fails because the folder is read-only, the snapshot below is read.
* **immutable** — a WAL database with no ``-wal`` (or an empty one) and no ``-shm``: closed
  cleanly, every row in the main file. ``mode=ro`` would create both files in the agent's
  folder (and could not in a read-only one), so it is opened ``immutable=1``: no lock, no WAL,
  no file. Immutable means "nobody writes now", which nobody promises, so the file's identity,
  size and mtime are compared after the read; a change (the agent started and checkpointed
  meanwhile) makes the read an error for this pass, read again at the next update.
* **snapshot** — a WAL database whose ``-wal`` holds rows but has no ``-shm`` (the agent was
  killed, or the folder was copied while it ran): the WAL cannot be shared without creating a
  ``-shm`` there. The database and its ``-wal`` are copied into a private folder (0700, in the
  temp dir), checked unchanged while copied, the WAL folded in on the copy, and the copy opened
  ``immutable=1``. Copies are kept (at most :data:`SNAPSHOTS`) while their source is unchanged.

Every read transaction has a deadline (:data:`READ_SECONDS`, SQLite's progress handler), and a
busy timeout rides out the agent's short write locks; a database that stays locked, is damaged,
is not a database, or cannot be read is one :class:`AgtailError` naming it and saying why. A
database that just stayed locked past the busy timeout is not waited for again during the next
:data:`LOCKED_SECONDS` (each of its sessions would wait in turn): it is tried without waiting.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import quote

from agtaild.adapters.kit.files import NotRegularFile, kind_of, open_regular
from agtaild.errors import AgtailError, NotFound

#: The 16 bytes every SQLite 3 database file starts with.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long a read waits for an agent's write lock before giving up on this pass.
BUSY_TIMEOUT_SECONDS = 2.0
#: How long one read transaction (a discovery's listing, one session's read) may run.
READ_SECONDS = 60.0
#: Virtual-machine steps between two looks at the clock.
_STEPS = 20_000
#: Private copies kept for WAL databases that cannot be shared.
SNAPSHOTS = 8
#: After a database stayed locked past the busy timeout, it is tried without waiting this long.
LOCKED_SECONDS = 30.0
#: Databases (absolute paths) that stayed locked, and when.
_locked: dict[str, float] = {}
SIBLINGS = ("-wal", "-shm", "-journal")


def database_at(path: str | os.PathLike[str]) -> bool:
    """Is anything but a directory at ``path``? A database, or whatever stands in its place:
    the shared discovery opens only what :func:`check_database` accepts and reports the rest.
    A path that cannot be looked at (EACCES, EIO) counts too, so that it is reported."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return False
    except OSError:
        return True


def is_sqlite_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file that starts with the SQLite header (nothing else is
    opened)."""
    try:
        with open_regular(path) as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _header(path: str) -> bytes:
    """The database header; AgtailError when ``path`` cannot be an SQLite database (NotFound
    when nothing is there)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(100)
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such database file") from exc
    except NotRegularFile as exc:
        raise AgtailError(f"{path}: {exc.strerror}: never opened") from exc
    except OSError as exc:
        raise AgtailError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not head:
        raise AgtailError(f"{path}: not a readable SQLite database (an empty file)")
    if not head.startswith(SQLITE_MAGIC):
        raise AgtailError(f"{path}: not a readable SQLite database (it does not begin with the SQLite header)")
    return head


def _sibling(path: str) -> os.stat_result | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise AgtailError(f"{path}: cannot be looked at ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(st.st_mode):
        raise AgtailError(f"{path}: not a regular file ({kind_of(st)}): the database is never opened beside it")
    return st


def _key(st: os.stat_result | None) -> tuple[int, int, int, int] | None:
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _stat_key(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _key(os.stat(path))
    except OSError:
        return None


def plan(path: str) -> str:
    """How ``path`` is opened: "shared", "immutable" or "snapshot" (see the module doc)."""
    head = _header(path)
    siblings = {suffix: _sibling(path + suffix) for suffix in SIBLINGS}
    if head[18] != 2 and head[19] != 2:
        return "shared"  # a rollback journal: a read-only reader creates nothing
    wal, shm = siblings["-wal"], siblings["-shm"]
    if wal is not None and shm is not None:
        return "shared"
    if wal is not None and wal.st_size > 0:
        return "snapshot"
    return "immutable"


def describe(db: str, exc: sqlite3.Error, *, after: float | None = None) -> AgtailError:
    """One sentence for an sqlite3 error of ``db`` (``after``: the deadline, in seconds, that
    stopped the read)."""
    text = str(exc)
    if after is not None:
        return AgtailError(f"{db}: reading took longer than {after:g} s; given up for now")
    if "locked" in text or "busy" in text:
        _locked[db] = time.monotonic()
        return AgtailError(f"{db}: the database stayed locked by another process; it will be read again later")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return AgtailError(f"{db}: not a readable SQLite database ({text})")
    if "unable to open" in text or "readonly" in text or "read-only" in text:
        return AgtailError(f"{db}: cannot be opened read-only ({text})")
    if "no such table" in text or "no such column" in text:
        return AgtailError(f"{db}: not the expected schema ({text})")
    return AgtailError(f"{db}: {text}")


def _connect(uri: str, path: str, busy_timeout: float) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise describe(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        # Touch the schema now so that "not a database" surfaces here, not mid-read.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise describe(path, exc) from exc
    return conn


def _uri(path: str, immutable: bool) -> str:
    return f"file:{quote(path)}?mode=ro" + ("&immutable=1" if immutable else "")


class _Snapshots:
    """Private copies of WAL databases whose WAL cannot be shared, kept while unchanged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dir: str | None = None
        self._owner = 0
        self._copies: OrderedDict[str, tuple[object, str]] = OrderedDict()
        self._made = 0

    def _folder(self) -> str:
        """This process's folder (a forked reading worker makes its own), removed when the
        process ends: at exit, and as a reading worker ends (multiprocessing's finalizers run
        there, atexit handlers do not)."""
        if self._dir is None or self._owner != os.getpid():
            from multiprocessing import util

            self._dir = tempfile.mkdtemp(prefix="agtail-read-")  # 0700
            self._owner = os.getpid()
            self._copies.clear()
            atexit.register(self._remove, self._dir, self._owner)
            util.Finalize(None, self._remove, args=(self._dir, self._owner), exitpriority=0)
        return self._dir

    @staticmethod
    def _remove(folder: str, owner: int) -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    def copy_of(self, path: str) -> str:
        """A private, WAL-free copy of ``path`` and its ``-wal``, as they are now."""
        key = (_stat_key(path), _stat_key(path + "-wal"))
        with self._lock:
            try:
                folder = self._folder()
            except OSError as exc:
                raise AgtailError(f"{path}: its WAL cannot be read here and a private copy failed ({exc})") from exc
            known = self._copies.get(path)
            if known is not None and known[0] == key and os.path.exists(known[1]):
                self._copies.move_to_end(path)
                return known[1]
            self._made += 1
            dest = os.path.join(folder, f"{self._made}.sqlite3")
            try:
                for suffix in ("", "-wal"):
                    with open_regular(path + suffix) as src, open(dest + suffix, "wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
                if (_stat_key(path), _stat_key(path + "-wal")) != key:
                    raise AgtailError(f"{path}: changed while being copied; it will be read again later")
                fold = sqlite3.connect(dest, isolation_level=None)
                try:
                    fold.execute("PRAGMA journal_mode=DELETE")  # the WAL's rows into the copy
                finally:
                    fold.close()
            except (OSError, sqlite3.Error) as exc:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    try:
                        os.unlink(dest + suffix)
                    except OSError:
                        pass
                if isinstance(exc, sqlite3.Error):
                    raise describe(path, exc) from exc
                raise AgtailError(f"{path}: its WAL cannot be read here and a private copy failed ({exc})") from exc
            if known is not None:
                self._drop(known[1])
            self._copies[path] = (key, dest)
            while len(self._copies) > SNAPSHOTS:
                _old, (_k, copy) = self._copies.popitem(last=False)
                self._drop(copy)
            return dest

    @staticmethod
    def _drop(copy: str) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(copy + suffix)
            except OSError:
                pass


_snapshots = _Snapshots()


def open_ro(
    db: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_SECONDS
) -> tuple[sqlite3.Connection, Callable[[], None]]:
    """(a read-only connection, a check to call once the reads are done: it raises AgtailError
    when an immutable read may have seen the file change). See the module doc."""
    path = os.path.abspath(os.fspath(db))
    how = plan(path)
    since = _locked.get(path)
    if since is not None and time.monotonic() - since < LOCKED_SECONDS:
        busy_timeout = 0.0  # locked just now: its other sessions do not each wait again
    if how == "shared":
        try:
            return _connect(_uri(path, False), path, busy_timeout), lambda: None
        except AgtailError:
            if not (path_in_wal_mode(path) and _read_only_folder(path)):
                raise
            how = "snapshot"  # a read-only folder whose -shm cannot be used: read a copy
    if how == "snapshot":
        return _connect(_uri(_snapshots.copy_of(path), True), path, busy_timeout), lambda: None
    before = _stat_key(path)
    conn = _connect(_uri(path, True), path, busy_timeout)

    def unchanged() -> None:
        if _stat_key(path) != before:
            raise AgtailError(f"{path}: changed while being read; it will be read again later")

    return conn, unchanged


def path_in_wal_mode(path: str) -> bool:
    try:
        head = _header(path)
    except AgtailError:
        return False
    return head[18] == 2 or head[19] == 2


def _read_only_folder(path: str) -> bool:
    return not os.access(os.path.dirname(path) or ".", os.W_OK) or _on_read_only_mount(path)


def _on_read_only_mount(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def connect_ro(db: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> sqlite3.Connection:
    """A read-only connection (see :func:`open_ro`; without the after-read check: use
    :func:`reading` for reads that must be consistent). Raises AgtailError."""
    conn, _check = open_ro(db, busy_timeout=busy_timeout)
    return conn


@contextmanager
def reading(
    db: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT_SECONDS, seconds: float | None = None
) -> Iterator[sqlite3.Connection]:
    """Open ``db`` read-only and hold one read transaction (a consistent snapshot) for the
    block, under a deadline of ``seconds`` (:data:`READ_SECONDS`). Any sqlite3 error inside
    the block becomes an AgtailError naming the database; so does a database that changed
    under an immutable read (raised when the block ends)."""
    path = os.path.abspath(os.fspath(db))
    conn, check = open_ro(path, busy_timeout=busy_timeout)
    limit = READ_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + limit
    expired = False

    def past_deadline() -> int:
        nonlocal expired
        expired = time.monotonic() > deadline
        return 1 if expired else 0

    conn.set_progress_handler(past_deadline, _STEPS)
    try:
        conn.execute("BEGIN")
        yield conn
    except sqlite3.Error as exc:
        raise describe(path, exc, after=limit if expired else None) from exc
    finally:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        conn.close()
    check()
    _locked.pop(path, None)


def check_database(path: str | os.PathLike[str]) -> None:
    """Raise AgtailError (NotFound when nothing is there) unless ``path`` can be opened as an
    SQLite database: a regular file with the SQLite header and regular (or no) siblings."""
    plan(os.path.abspath(os.fspath(path)))
