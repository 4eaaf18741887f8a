"""The index file on disk, and what to do when it is damaged, gone, read-only or out of room.

The index is a disposable derivative of the transcripts: any damage to it is repaired by
rebuilding it, never by giving up. This module holds the pieces Service uses for that:

* :func:`check_data_dir` — a data dir that is a regular file is a usage error, said plainly.
* :func:`is_writable` — a data dir (or index) we cannot write is opened read-only: queries
  still answer, updates are skipped with a warning.
* :func:`problem_of` — which SQLite errors mean "corrupt", "gone" or "disk full".
* :func:`quarantine` — a damaged index is moved aside (with its -wal and -shm) as
  ``index.sqlite3.corrupt-<time>``, never deleted, so it can still be looked at.
* :func:`disk_full_message` — one line naming the data dir and the space needed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from agtaild.errors import AgtailError, UsageError

# SQLite primary result codes (sqlite3.Error.sqlite_errorcode & 0xff).
SQLITE_READONLY = 8
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_NOTADB = 26
_SIDE_FILES = ("-wal", "-shm")


class DiskFull(AgtailError):
    """The disk holding the data dir is full; the index is left as it was before the update."""


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (``BEGIN IMMEDIATE``) on a connection in autocommit mode: committed
    when the block ends, rolled back when it raises. A COMMIT that SQLITE_FULL failed has rolled
    back already: its error is the one raised, not a failed ROLLBACK's."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def check_data_dir(data_dir: Path) -> None:
    """Refuse a data dir that exists but is not a directory (a clear error, exit 2)."""
    if data_dir.exists() and not data_dir.is_dir():
        raise UsageError(f"the data dir {data_dir} is not a directory; pass --data-dir a directory (or a new path)")


def is_writable(data_dir: Path, index_path: Path) -> bool:
    """Can this process create and change the index (the dir for -wal/-shm, and the file)?"""
    if not data_dir.exists():
        parent = data_dir.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        return os.access(parent, os.W_OK | os.X_OK)
    if not os.access(data_dir, os.W_OK | os.X_OK):
        return False
    return not index_path.exists() or os.access(index_path, os.R_OK | os.W_OK)


def problem_of(exc: BaseException) -> str | None:
    """'corrupt', 'missing', 'full', 'readonly' or None for an error the index can't fix."""
    if not isinstance(exc, sqlite3.Error):
        return None
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    text = str(exc).lower()
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB) or "malformed" in text or "not a database" in text:
        return "corrupt"
    if code == SQLITE_FULL or "database or disk is full" in text:
        return "full"
    if code == SQLITE_READONLY or "readonly database" in text:
        return "readonly"
    if "no such table" in text:
        return "missing"
    return None


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the index file, or None when it is gone: a change means someone
    deleted or replaced it under us."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def quarantine(path: Path) -> Path | None:
    """Move a damaged index (and its -wal/-shm) aside; returns the new name of the main file."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    moved = None
    for suffix in ("", *_SIDE_FILES):
        src = Path(f"{path}{suffix}")
        if src.exists():
            os.replace(src, f"{target}{suffix}")
            if not suffix:
                moved = target
    return moved


def disk_full_message(data_dir: Path, needed: int) -> str:
    """One line: which dir is full, how much is free, and about how much the index needs."""
    try:
        free = shutil.disk_usage(data_dir).free
    except OSError:
        free = 0
    return (
        f"the disk holding the data dir {data_dir} is full ({_mb(free)} free); the index needs about "
        f"{_mb(max(needed, 1 << 20))} more. What it stored before is intact; free some space and run "
        "the command again (agtaild retries by itself)"
    )


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def readonly_uri(path: Path, *, immutable: bool = False) -> str:
    """A URI that opens the index read-only (immutable when even -shm can't be created)."""
    from urllib.parse import quote

    return f"file:{quote(str(path))}?mode=ro" + ("&immutable=1" if immutable else "")
