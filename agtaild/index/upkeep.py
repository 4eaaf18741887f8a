"""Keeping the index usable: updates that survive a vanished, damaged, full or read-only index.

Service.update_index and Service.call come here when the index file is not what it should be.
The rules: a read-only index is never written (the update reports why instead); an index that
was deleted, replaced or found damaged is rebuilt before the update goes on (the keeper moves
a damaged file aside); a full disk rolls the update back and raises DiskFull with one line
naming the data dir and the space needed — the next update goes on from the last commit.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.index.progress import Progress
from agtaild.index.storage import DiskFull, disk_full_message, immediate, problem_of


def update(
    svc: Any, *, full: bool, only_paths: Iterable[str] | None, progress: Progress | None
) -> dict[str, Any]:
    """Service.update_index. Collections that appeared in the import store since the roots
    were resolved become roots first (agtaild.store.imports), so a long-running daemon reads
    them without a restart."""
    keeper = svc.index
    if keeper.read_only:
        if full:
            raise AgtailError(f"cannot rebuild the index: {keeper.message}")
        return not_updated(svc)
    with svc._write_lock:
        if keeper.replaced():
            keeper.repair("replaced")
            check_timezone(svc._db)
        elif full and (bad := keeper.quick_check()) is not None:
            keeper.repair("corrupt", bad)
            check_timezone(svc._db)
        try:
            return run(svc, full=full, only_paths=only_paths, progress=progress)
        except sqlite3.DatabaseError as exc:
            replaced = keeper.replaced()
            if not (problem_of(exc) == "corrupt" or replaced):
                raise
            keeper.repair("replaced" if replaced else "corrupt", exc)
            check_timezone(svc._db)
            return run(svc, full=False, only_paths=None, progress=progress)


def repair(svc: Any, why: str, exc: BaseException | None = None) -> None:
    """A new index in place of a damaged or vanished one (called by Service.call when a query
    met the damage), then filled from the transcripts: by the daemon's writer when it runs
    (``svc.on_repaired``), else here."""
    with svc._write_lock:
        if why == "replaced" and not svc.index.replaced():
            return  # another thread repaired it while we waited
        svc.index.repair(why, exc)
        check_timezone(svc._db)
        if svc.on_repaired is None:
            run(svc, full=False, only_paths=None, progress=None)
    if svc.on_repaired is not None:
        svc.on_repaired()


def run(
    svc: Any, *, full: bool, only_paths: Iterable[str] | None, progress: Progress | None
) -> dict[str, Any]:
    """One update under the write lock; a full disk becomes DiskFull (the index is left as
    the last commit wrote it, and the next update goes on from there)."""
    from agtaild.index.update import Updater
    from agtaild.store.imports import adopt_new_collections

    adopt_new_collections(svc.config)
    updater = Updater(
        svc._db,
        svc.config,
        workers=svc.workers,
        after_native_read=svc.after_native_read,
        before_discovery=svc.before_discovery,
    )
    keeper = svc.index
    try:
        report: dict[str, Any] = updater.run(full=full, only_paths=only_paths, progress=progress)
    except sqlite3.OperationalError as exc:
        if problem_of(exc) != "full":
            raise
        message = disk_full_message(
            Path(svc.config.data_dir), updater.bytes_left + _size(svc.config.index_path) // 4
        )
        keeper.state, keeper.message = "disk_full", message
        raise DiskFull(message) from None
    report["secrets"] = scan_secrets_inline(svc, read_bytes=updater.read_bytes)
    if keeper.state == "disk_full":
        keeper.state, keeper.message = "ok", "space was freed; the index is up to date again"
    elif keeper.state == "rebuilding":
        keeper.state = "ok"
    return report


def scan_secrets_inline(svc: Any, *, read_bytes: int = 0) -> dict[str, Any]:
    """The secrets pass after an update, within its inline budget (agtaild.index.findings):
    an append is scanned whole; an update that read ``read_bytes`` ≥ BIG_UPDATE_BYTES (a first
    index) scans nothing inline and leaves the whole pass for later ones."""
    from agtaild.index import findings

    try:
        if read_bytes >= findings.BIG_UPDATE_BYTES:
            # Not even the scanner is imported or built (≈ 0.35 s of CPU: re2, its rules).
            return {"scanned": 0, "findings": 0, "pending": findings.pending(svc._db)}
        from agtaild.secrets import default_scanner

        return findings.scan_pass(svc._db, default_scanner(), max_chars=findings.INLINE_BUDGET_CHARS)
    except sqlite3.OperationalError as exc:
        if problem_of(exc) != "full":
            raise
        return {"scanned": 0, "findings": 0, "pending": None, "error": "the disk is full"}


def not_updated(svc: Any) -> dict[str, Any]:
    """The report of an update that could not run (a read-only index), with the reason."""
    from agtaild.index.totals import totals

    report = totals(svc._reader())
    report.update(
        seconds=0.0,
        read=0,
        changed=[],
        errors=[{"path": svc.config.data_dir, "agent": "", "error": svc.index.message or "read-only"}],
    )
    return report


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def check_timezone(db: sqlite3.Connection) -> None:
    """Usage rows store their local calendar day; a new time zone recomputes them."""
    zone = f"{time.tzname}|{time.timezone}|{time.altzone}|{os.environ.get('TZ', '')}"
    row = db.execute("SELECT value FROM meta WHERE key = 'tz'").fetchone()
    if row is not None and row[0] == zone:
        return
    from agtaild.index.prepare import local_day

    db.create_function("agtail_local_day", 1, local_day)
    with immediate(db):
        if row is not None:
            from agtaild.index import week
            from agtaild.index.usage import refresh_rollup

            db.execute("UPDATE usage SET day = coalesce(agtail_local_day(epoch), '')")
            refresh_rollup(db, None)
            week.rebuild(db)  # the zone's offsets of every quarter of the week
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tz', ?)", (zone,))
