"""The finisher: archives the files a first index pinned (agtaild.store.archive.pins), after it.

A big update seals its pins when its reads are done and :func:`kick` starts this module as a
process of its own, in a session of its own (``python -m agtaild.store.archive.finish STORE``),
at low priority: the index is complete and searchable without waiting for it, and the CLI's
``agtail index`` returns — as ``git gc --auto`` goes on in the background. The finisher
archives each pinned file as the mirror would (reading the pin, recording the native path),
makes each batch durable, then removes the batch's pins; the set's folder goes once all of it
is archived.

One finisher at a time per archive (an exclusive ``flock`` on ``pins/finisher.lock``); it
takes the archive's writer lock (agtaild.store.archive.lock) one batch at a time, so the
daemon's own small mirrors wait at most one batch. Killed midway, it leaves the pins it had
not archived: the next update (its before-discovery hook calls :func:`kick`) or the daemon's
start starts another, which skips what was archived (the hash cache says so) and goes on. A
set that fails the same way three times is removed and reported in ``pins/finisher.log``: its
files are still mirrored by the next update that sees them change, from their native copies.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agtaild.store.archive import pins as archive_pins
from agtaild.store.archive.lock import WriterLock

log = logging.getLogger(__name__)

LOCK_NAME = "finisher.lock"
LOG_NAME = "finisher.log"
ATTEMPTS_NAME = "attempts"
#: A set that failed this many times is given up (see the module docstring).
MAX_ATTEMPTS = 3
#: Pinned files archived between two flushes (each flush makes them durable, removes their
#: pins and lets the daemon's mirror in).
BATCH_FILES = 32
#: The finisher's niceness (as the mirror process's: agtaild.store.archive.mirror_proc.NICENESS).
NICENESS = 10
#: The log is started anew past this size.
LOG_LIMIT = 1 << 20


def _lock(store_root: Path) -> WriterLock | None:
    """The finisher lock, held; None when another finisher holds it."""
    lock = WriterLock(archive_pins.pins_root(store_root), LOCK_NAME)
    return lock if lock.acquire(wait=False) else None


def running(store_root: Path | str) -> bool:
    """Is a finisher at work on this archive?"""
    lock = _lock(Path(store_root))
    if lock is None:
        return True
    lock.release()
    return False


def finish(store_root: Path | str) -> dict[str, Any]:
    """Archive every pinned set there is (returns at once when another finisher runs); what
    was stored, in a mirror report. The sets sealed while this one worked are taken too."""
    from agtaild.store.archive.archiver import empty_report

    store_root = Path(store_root)
    report = empty_report()
    report["sets"] = 0
    tried: set[Path] = set()  # a set that failed is tried again by the next finisher, not by this one
    while True:
        lock = _lock(store_root)
        if lock is None:
            return report
        try:
            for folder in [f for f in archive_pins.sets(store_root) if f not in tried]:
                tried.add(folder)
                _finish_set(folder, report)
                report["sets"] += 1
        finally:
            lock.release()
        # Checked after the lock is dropped: a set sealed while it was held either is seen
        # here, or its kick found the lock free and started the next finisher.
        if not any(f not in tried for f in archive_pins.sets(store_root)):
            return report


def _finish_set(folder: Path, report: dict[str, Any]) -> None:
    from agtaild.store.archive.archiver import Archiver, merge_report

    try:
        config, pinned = archive_pins.read_set(folder)
    except (OSError, ValueError) as exc:  # msgspec's errors are ValueErrors
        log.warning("archive: pinned set %s unreadable (%s); removed", folder.name, exc)
        report["errors"].append({"path": str(folder), "message": f"unreadable pinned set: {exc}"})
        archive_pins.remove(folder)
        return
    archiver = Archiver(config)
    failed: list[dict[str, str]] = []
    try:
        if archiver.problem is not None:
            failed.append({"path": str(archiver.root), "message": archiver.problem})
            report["errors"] += failed
        else:
            for start in range(0, len(pinned), BATCH_FILES):
                batch = pinned[start : start + BATCH_FILES]
                part = archiver.mirror_files(  # durable when it returns
                    [(p.local, p.main) for p in batch], read_from={p.local.source: p.pin for p in batch}
                )
                merge_report(report, part)
                if part["errors"]:
                    failed += part["errors"]
                    continue
                for p in batch:  # in the archive now
                    Path(p.pin).unlink(missing_ok=True)
    finally:
        archiver.cache.close()
        archiver.store.close()
    if not failed:
        archive_pins.remove(folder)
        return
    attempts = _attempts(folder) + 1
    for e in failed[:20]:
        log.warning("archive: %s: %s (pinned set %s, attempt %d)", e["path"], e["message"], folder.name, attempts)
    if attempts >= MAX_ATTEMPTS:
        log.warning("archive: giving up pinned set %s after %d attempts", folder.name, attempts)
        archive_pins.remove(folder)
    else:
        try:
            (folder / ATTEMPTS_NAME).write_text(str(attempts))
        except OSError as exc:  # the folder went meanwhile: nothing left to retry
            log.warning("archive: pinned set %s: %s", folder.name, exc)


def _attempts(folder: Path) -> int:
    try:
        return int((folder / ATTEMPTS_NAME).read_text())
    except (OSError, ValueError):
        return 0


#: After a finisher this process started failed, the next is started no sooner than this
#: (a daemon kicks at every update; a finisher that cannot even start must not be retried
#: every few seconds).
RETRY_SECONDS = 60.0
#: The last finisher this process started per archive, and when (reaped by the next kick).
_started: dict[Path, tuple[subprocess.Popen[bytes], float]] = {}


def kick(store_root: Path | str) -> subprocess.Popen[bytes] | None:
    """Start a finisher when there are pinned sets and none runs; the process, or None."""
    store_root = Path(store_root)
    last = _started.get(store_root)
    if last is not None:
        proc, when = last
        code = proc.poll()  # reaps it once it has ended
        if code is not None and code != 0 and time.monotonic() - when < RETRY_SECONDS:
            return None
    # One still running but past its lock (about to exit) may not see a set sealed now: the
    # lock, not the process, says whether a finisher is at work.
    if not any(True for _ in archive_pins.sets(store_root)) or running(store_root):
        return None
    new = spawn(store_root)
    if new is not None:
        _started[store_root] = (new, time.monotonic())
    return new


def spawn(store_root: Path) -> subprocess.Popen[bytes] | None:
    """The finisher as a process of its own, in a session of its own (it outlives an
    ``agtail index`` that started it); its warnings go to ``pins/finisher.log``."""
    root = archive_pins.pins_root(store_root)
    log_path = root / LOG_NAME
    try:
        if log_path.stat().st_size > LOG_LIMIT:
            log_path.unlink()
    except OSError:
        pass
    try:
        with open(log_path, "ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "agtaild.store.archive.finish", str(store_root)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                close_fds=True,
                cwd="/",
            )
    except OSError as exc:  # the pins stay; the next update's kick tries again
        log.warning("archive: cannot start the finisher (%s); the next update will", exc)
        return None
    return proc


def wait(store_root: Path | str, timeout: float) -> bool:
    """Wait until no pinned set is left (True) or ``timeout`` seconds have passed (False)."""
    deadline = time.monotonic() + timeout
    while any(True for _ in archive_pins.sets(store_root)) or running(store_root):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main(argv: list[str]) -> int:
    from agtaild.dirs import private_umask

    private_umask()  # a process of its own: its blobs and catalog are 0600 whoever started it
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    if len(argv) != 1:
        print("usage: python -m agtaild.store.archive.finish ARCHIVE_STORE_DIR", file=sys.stderr)
        return 2
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    report = finish(argv[0])
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
