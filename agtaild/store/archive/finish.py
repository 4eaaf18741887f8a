"""The finisher: archives the files a first index pinned (agtaild.store.archive.pins), after it.

A big update seals its pins when its reads are done and :func:`kick` starts this module as a
process of its own, in a session of its own (``python -m agtaild.store.archive.finish STORE``),
at low priority: the index is complete and searchable without waiting for it, and the CLI's
``agtail index`` returns — as ``git gc --auto`` goes on in the background. The finisher
archives each pinned file as the mirror would (reading the pin, recording the native path),
makes each batch durable, then removes the batch's pins; the set's folder goes once all of it
is archived. When it is done it touches ``pins/finished``: the daemon's writer sees it and
scans the roots (:class:`Completions`), so that the index is whole without waiting for a change.

Each pin is opened without following a symlink and must still be the inode pinned and hold
the bytes the index read (agtaild.store.archive.pinned). A pin replaced meanwhile is not
archived as the session: its native file is, when that is still the inode pinned; else the
loss is recorded. A pin rewritten in place is archived as it is now (what can be kept) and
the loss of what the index read recorded (agtaild.store.archive.losses: the log and doctor).

One finisher at a time per archive (an exclusive ``flock`` on ``pins/finisher.lock``); it
takes the archive's writer lock (agtaild.store.archive.lock) one batch at a time, so the
daemon's own small mirrors wait at most one batch. Killed midway, it leaves the pins it had
not archived: the next update (its before-discovery hook calls :func:`kick`) or the daemon's
start starts another, which skips what was archived (the hash cache says so) and goes on.
Whatever goes wrong with one set — an error, an exception of any kind, a stray folder in it —
stays with that set: the others are finished all the same, and a set that fails three times
is removed and reported in ``pins/finisher.log`` (its files are still mirrored by the next
update that sees them change, from their native copies; while pinned, the view served them).
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from agtaild.errors import AgtailError
from agtaild.store.archive import losses
from agtaild.store.archive import pinned as archive_pinned
from agtaild.store.archive.durable import NOFOLLOW
from agtaild.store.archive.lock import WriterLock
from agtaild.store.archive.pins import open_pins_dir, pins_root
from agtaild.sync.safety import open_regular

log = logging.getLogger(__name__)

LOCK_NAME = "finisher.lock"
LOG_NAME = "finisher.log"
#: Touched by a finisher that finished sets (read by :class:`Completions`).
DONE_NAME = "finished"
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
    """The finisher lock, held; None when another finisher holds it (OSError when the pins
    folder cannot be used: a symlink, say)."""
    lock = WriterLock(pins_root(store_root), LOCK_NAME)
    return lock if lock.acquire(wait=False) else None


def running(store_root: Path | str) -> bool:
    """Is a finisher at work on this archive?"""
    try:
        lock = _lock(Path(store_root))
    except OSError:
        return False  # no finisher can work there
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
    report["pin_problems"] = 0
    tried: set[Path] = set()  # a set that failed is tried again by the next finisher, not by this one
    while True:
        try:
            lock = _lock(store_root)
        except OSError as exc:
            log.warning("archive: %s: %s; pinned files are not finished", pins_root(store_root), exc)
            return report
        if lock is None:
            return report
        try:
            for folder in [f for f in archive_pinned.sets(store_root) if f not in tried]:
                tried.add(folder)
                _finish_set(store_root, folder, report)
                report["sets"] += 1
        finally:
            lock.release()
        # Checked after the lock is dropped: a set sealed while it was held either is seen
        # here, or its kick found the lock free and started the next finisher.
        if not any(f not in tried for f in archive_pinned.sets(store_root)):
            if report["sets"]:
                _touch_done(store_root)
            return report


def _finish_set(store_root: Path, folder: Path, report: dict[str, Any]) -> None:
    """Finish one set; whatever fails is this set's failure (never raised to the others)."""
    try:
        failed = _archive_set(store_root, folder, report)
    except Exception as exc:  # any kind: the three-attempts rule applies to it as to the rest
        failed = [{"path": str(folder), "message": f"pinned set {folder.name}: {type(exc).__name__}: {exc}"}]
        report["errors"] += failed
    if not failed:
        _remove(folder)
        return
    attempts = MAX_ATTEMPTS
    try:
        with archive_pinned.OpenSet(folder) as s:
            attempts = s.attempts() + 1
            for e in failed[:20]:
                log.warning("archive: %s: %s (pinned set %s, attempt %d)", e["path"], e["message"], folder.name, attempts)
            if attempts < MAX_ATTEMPTS:
                s.write_attempts(attempts)
                return
    except (OSError, AgtailError) as exc:  # the folder went, or cannot be opened: nothing left to retry
        log.warning("archive: pinned set %s: %s", folder.name, getattr(exc, "message", exc))
    log.warning("archive: giving up pinned set %s (attempt %d of %d)", folder.name, attempts, MAX_ATTEMPTS)
    _remove(folder)


def _remove(folder: Path) -> None:
    left = archive_pinned.remove(folder)
    if left:
        log.warning("archive: pinned set %s holds what agtail did not write (%s): left as it is, moved aside as %s%s",
                    folder.name, ", ".join(sorted(left)[:10]), folder.name, archive_pinned.LEFT_SUFFIX)


def _archive_set(store_root: Path, folder: Path, report: dict[str, Any]) -> list[dict[str, str]]:
    """Archive a set's pinned files; the failures (retried by the next finisher)."""
    from agtaild.store.archive.archiver import Archiver, merge_report

    try:
        s = archive_pinned.OpenSet(folder)
    except FileNotFoundError:
        return []  # another finisher removed it meanwhile
    with s:
        try:
            config, items = s.read()
        except (OSError, ValueError, AgtailError) as exc:  # msgspec's errors are ValueErrors
            msg = getattr(exc, "message", None) or str(exc)
            log.warning("archive: pinned set %s unreadable (%s); its pins go", folder.name, msg)
            report["errors"].append({"path": str(folder), "message": f"unreadable pinned set: {msg}"})
            return []
        archiver = Archiver(config)
        failed: list[dict[str, str]] = []
        try:
            if archiver.problem is not None:
                failed.append({"path": str(archiver.root), "message": archiver.problem})
                report["errors"] += failed
                return failed
            for start in range(0, len(items), BATCH_FILES):
                opened = _open_batch(store_root, s, items[start : start + BATCH_FILES], report, failed)
                try:
                    part = archiver.mirror_files(  # durable when it returns
                        [(p.local, p.main) for p, _fh, _pin in opened],
                        read_from={p.local.source: fh for p, fh, _pin in opened},
                    )
                    merge_report(report, part)
                    if part["errors"]:
                        failed += part["errors"]
                        continue
                    for p, fh, from_pin in opened:  # in the archive now
                        if from_pin:
                            s.unlink_pin(p, fh)
                finally:
                    for _p, fh, _pin in opened:
                        fh.close()
        finally:
            archiver.cache.close()
            archiver.store.close()
    return failed


def _open_batch(
    store_root: Path, s: archive_pinned.OpenSet, batch: list[archive_pinned.Pinned], report: dict[str, Any],
    failed: list[dict[str, str]],
) -> list[tuple[archive_pinned.Pinned, BinaryIO, bool]]:
    """Each pinned file of ``batch`` open for reading — from its pin, or when the pin was
    replaced from its native file if that is still the inode pinned — with True when it is
    the pin (removed once archived). What is not what was pinned is recorded."""
    opened: list[tuple[archive_pinned.Pinned, BinaryIO, bool]] = []
    for p in batch:
        try:
            fh = s.open_pin(p)
            from_pin = True
        except archive_pinned.PinProblem as exc:
            native = _native_if_pinned(p)
            report["pin_problems"] += 1
            if native is None:
                losses.record(store_root, p.local.path, f"not archived: {exc}, and its native file is gone or is "
                              "another file now: the bytes the index read are lost")
                continue
            losses.record(store_root, p.local.path, f"{exc}; archived from its native file, the inode pinned")
            fh, from_pin = native, False
        except FileNotFoundError:
            continue  # removed meanwhile: archived by another finisher
        except OSError as exc:
            failed.append({"path": p.local.path, "message": f"cannot open its pin: {exc}"})
            report["errors"].append(failed[-1])
            continue
        problem = archive_pinned.still_as_pinned(fh, p)
        if problem is not None:
            report["pin_problems"] += 1
            losses.record(store_root, p.local.path, problem)
        opened.append((p, fh, from_pin))
    return opened


def _native_if_pinned(p: archive_pinned.Pinned) -> BinaryIO | None:
    """The native file, open, when it is still the regular file pinned (device and inode)."""
    if not p.ino:
        return None  # a set written before pins recorded their inode: nothing to compare
    try:
        fd = os.open(p.local.source, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (p.dev, p.ino):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def _touch_done(store_root: Path) -> None:
    try:
        folder = open_pins_dir(store_root, create=False)
    except (OSError, AgtailError):
        return
    try:
        fd = os.open(DONE_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, 0o600, dir_fd=folder)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{time.time_ns()}\n")
    except OSError as exc:
        log.warning("archive: cannot say the finisher is done: %s", exc)
    finally:
        os.close(folder)


class Completions:
    """Has a finisher finished since the last look? (the daemon's writer asks at each tick and
    scans the roots when one has: agtaild.daemon.main)"""

    def __init__(self, store_root: Path | str) -> None:
        self.store_root = Path(store_root)
        self._seen = self._stamp()

    def _stamp(self) -> bytes | None:
        """What ``pins/finished`` says (the time of the last finish), None when there is none."""
        try:
            folder = open_pins_dir(self.store_root, create=False)
        except (OSError, AgtailError):
            return None
        try:
            with os.fdopen(open_regular(folder, DONE_NAME), "rb") as fh:
                return fh.read(64)
        except (OSError, AgtailError):
            return None
        finally:
            os.close(folder)

    def changed(self) -> bool:
        stamp = self._stamp()
        if stamp == self._seen:
            return False
        self._seen = stamp
        return stamp is not None


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
    if not any(True for _ in archive_pinned.sets(store_root)) or running(store_root):
        return None
    new = spawn(store_root)
    if new is not None:
        _started[store_root] = (new, time.monotonic())
    return new


def spawn(store_root: Path) -> subprocess.Popen[bytes] | None:
    """The finisher as a process of its own, in a session of its own (it outlives an
    ``agtail index`` that started it); its warnings go to ``pins/finisher.log``."""
    try:
        folder = open_pins_dir(store_root, create=True)
    except (OSError, AgtailError) as exc:
        log.warning("archive: cannot start the finisher (%s)", getattr(exc, "message", exc))
        return None
    try:
        try:
            if os.lstat(LOG_NAME, dir_fd=folder).st_size > LOG_LIMIT:
                os.unlink(LOG_NAME, dir_fd=folder)
        except OSError:
            pass
        err = os.open(LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600, dir_fd=folder)
    except OSError as exc:
        log.warning("archive: cannot start the finisher (%s); the next update will", exc)
        return None
    finally:
        os.close(folder)
    try:
        return subprocess.Popen(
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
    finally:
        os.close(err)


def wait(store_root: Path | str, timeout: float) -> bool:
    """Wait until no pinned set is left (True) or ``timeout`` seconds have passed (False)."""
    deadline = time.monotonic() + timeout
    while any(True for _ in archive_pinned.sets(store_root)) or running(store_root):
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
