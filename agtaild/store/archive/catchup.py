"""Updates whose archive copies may not all be durable yet, and the catch-up after one died.

The index commits the units it reads while the archive makes their copies durable in batches
(agtaild.store.archive.archiver) — in a process of its own for a big update. A process killed in
between leaves units indexed, which the index will not read again until they change, whose
copies were never recorded. So an update marks itself open before its first read
(``.zstore/open-<pid>``; fsynced for a big update, whose batches are the ones worth losing)
and removes the mark once its copies are durable. Before the next update's discovery, a mark
whose process is gone — or this process's own, left by an update whose copies could not all
be made durable — starts a catch-up: every native file under the configured roots is
mirrored, which for a file already archived costs a stat and a hash-cache lookup.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from agtaild.store.archive.durable import create_marker

log = logging.getLogger(__name__)

MARK_PREFIX = "open-"


def _mark(archiver: Any) -> Path:
    return Path(archiver.store.root) / f"{MARK_PREFIX}{os.getpid()}"


#: Updates of this process between open_mark and close_mark (its mark is theirs meanwhile).
_open_here = 0
_open_lock = threading.Lock()


def open_mark(archiver: Any, *, durable: bool) -> None:
    """Mark this process's update open (before it reads anything)."""
    global _open_here
    with _open_lock:
        _open_here += 1
    mark = _mark(archiver)
    if mark.exists():
        return
    mark.parent.mkdir(parents=True, exist_ok=True)
    create_marker(mark, durable=durable)


def close_mark(archiver: Any, *, durable: bool) -> None:
    """This process's update has ended; ``durable``: every copy it made is durable (else the
    mark stays, and the next update catches up)."""
    global _open_here
    with _open_lock:
        _open_here = max(0, _open_here - 1)
        if durable and _open_here == 0:
            _mark(archiver).unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's process, alive
        return True
    return True


def stale_marks(archiver: Any) -> list[Path]:
    """Marks of updates that ended without making their copies durable."""
    root = Path(archiver.store.root)
    try:
        names = [n for n in os.listdir(root) if n.startswith(MARK_PREFIX)]
    except OSError:
        return []
    stale = []
    for name in names:
        try:
            pid = int(name[len(MARK_PREFIX):])
        except ValueError:
            continue
        if (pid == os.getpid() and not _open_here) or (pid != os.getpid() and not process_alive(pid)):
            stale.append(root / name)
    return stale


def catch_up(archiver: Any, errors: list[dict[str, str]]) -> int:
    """After an update that died: mirror every native file not archived; the files stored."""
    marks = stale_marks(archiver)
    if not marks:
        return 0
    from agtaild.adapters import get_adapter

    pairs: list[tuple[Any, Any]] = []
    for spec in archiver.config.roots:
        if spec.kind != "native" or not os.path.exists(spec.path):
            continue
        try:
            adapter = get_adapter(spec.agent)
            pairs.extend((adapter, unit) for unit in adapter.discover(Path(spec.path)))
        except Exception as exc:  # this root's files wait for the next change; the rest go on
            errors.append({"path": spec.path, "agent": spec.agent, "error": f"archive catch-up: {exc}"})
    log.info("archive: an update ended before its copies were durable; checking %d units", len(pairs))
    lost = len(archiver.store.lost_batches)
    report = archiver.mirror_pairs(pairs)
    for e in report["errors"]:
        errors.append({"path": e["path"], "agent": "", "error": f"archive: {e['message']}"})
    if len(archiver.store.lost_batches) == lost:  # per-file errors are reported once, not retried
        for mark in marks:
            mark.unlink(missing_ok=True)
    return int(report["files"])
