"""The index's after-read hook: each native unit the index stores is mirrored into the archive.

On the update's after-read thread (agtaild.index.update) the hook hands each unit to the
archive with deferred durability (agtaild.store.archive.archiver); a big update (a first index) pins
its units' files instead, and the finisher archives them once the update is done
(agtaild.store.archive.pins, agtaild.store.archive.finish): the index does not wait for the
archive's hashing and compressing. The update calls ``begin`` with the bytes it
will read, before reading, and ``flush`` when its reads are done: every copy is durable when
``flush`` returns. Meanwhile the update is marked open (agtaild.store.archive.catchup), so a
process killed before its copies were durable is made up for by the next update.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.store.archive.archiver import archive_enabled, archiver_for
from agtaild.store.archive.blobs import STORE_DIR
from agtaild.store.archive.catchup import catch_up, close_mark, open_mark
from agtaild.store.archive.finish import kick as kick_finisher
from agtaild.store.archive.view import prepare_view
from agtaild.sync.native import LocalFile, native_files

log = logging.getLogger(__name__)


class AfterReadHook:
    """The index's after-native-read hook: mirror the unit just read into the archive, in
    the open batch; :meth:`flush` (the update calls it when its reads are done) makes the
    batch durable. :meth:`begin` (called with the bytes the update will read) sets a big
    update up to pin its files instead (agtaild.store.archive.pins), archived after the
    update by the finisher (agtaild.store.archive.finish); a unit whose files cannot be
    pinned goes to a mirror process of its own (agtaild.store.archive.mirror_proc).

    The hook and ``flush`` raise (so the index lists it among its errors) when a file could
    not be archived.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self._proc: Any = None
        self._pins: Any = None
        self._big = False
        #: What was sent to the mirror process: mirrored here if that process fails.
        self._sent: list[tuple[Any, Any]] = []
        self._lost = 0
        self._opened = False

    def begin(self, nbytes: int) -> None:
        from agtaild.store.archive import mirror_proc  # a process of its own: imported when one is started

        self._proc = None
        self._pins = None
        self._big = False
        self._sent = []
        if not archive_enabled(self.config):
            return
        archiver = archiver_for(self.config)
        if archiver.problem is not None:
            return  # the hook reports it, file by file
        self._big = nbytes >= mirror_proc.PROCESS_BYTES and (os.cpu_count() or 1) > 1
        self._lost = len(archiver.store.lost_batches)
        open_mark(archiver, durable=self._big)
        self._opened = True
        if self._big:
            self._open_pins(archiver, "mirroring in a process of its own")

    def _mirror_process(self) -> Any:
        """The big update's mirror process, started at the first unit that needs it."""
        from agtaild.store.archive import mirror_proc  # a process of its own: imported when one is started

        if self._proc is None:
            try:
                self._proc = mirror_proc.MirrorProcess(self.config)
            except Exception as exc:  # no process to be had (limits, no fork): mirror on the thread
                log.warning("archive: cannot start the mirror process (%s); mirroring in-process", exc)
                self._big = False
        return self._proc

    def __call__(self, adapter: Any, unit: Any, root: Any) -> None:
        if getattr(root, "kind", "native") != "native" or not archive_enabled(self.config):
            return
        if self._pins is not None and self._pins.pin(adapter, unit):
            return
        if self._big and self._mirror_process() is not None:
            self._proc.send(adapter.id, unit, root)
            self._sent.append((adapter, unit))
            return
        archiver = archiver_for(self.config)
        # Another process writes the archive (the finisher of a first index, most likely): a
        # small update pins its files for that finisher instead of waiting for it (the daemon's
        # append would wait for the finisher's batch, at the finisher's low priority).
        busy = self._pins is None and not archiver.writer_lock.acquire(wait=False)
        if busy and self._open_pins(archiver, "waiting for the archive") and self._pins.pin(adapter, unit):
            return
        _raise_errors(archiver.mirror_pairs([(adapter, unit)], defer=True))

    def _open_pins(self, archiver: Any, otherwise: str) -> bool:
        """A set of pins for this update (agtaild.store.archive.pins); False, saying what is done
        ``otherwise``, when none can be made."""
        from agtaild.store.archive.pins import PinSet

        try:
            self._pins = PinSet.create(archiver, self.config)
        except OSError as exc:
            log.warning("archive: cannot pin files (%s); %s", exc, otherwise)
            return False
        return True

    def flush(self) -> None:
        proc, self._proc = self._proc, None
        pins, self._pins = self._pins, None
        sent, self._sent = self._sent, []
        report = proc.finish() if proc is not None else {"errors": []}
        durable = False
        sealed = pins is None
        try:
            if pins is not None:
                try:
                    if pins.count:
                        pins.seal(durable=self._big)
                    else:
                        pins.abandon()
                    sealed = True
                except OSError as exc:  # the update stays open: the next one catches up
                    report["errors"].append({"path": str(pins.folder), "message": f"cannot seal the pinned files: {exc}"})
            if archive_enabled(self.config):
                archiver = archiver_for(self.config)
                if report.get("stopped"):
                    # The mirror process died: what it had not made durable is not marked
                    # archived, and the index will not read these units again until they
                    # change, so mirror them here (what the process did archive is skipped:
                    # the hash cache says so).
                    log.warning("archive: %s; mirroring in-process", report["errors"][0]["message"])
                    report["errors"] = archiver.mirror_pairs(sent, defer=True)["errors"]
                report["errors"] += archiver.flush()["errors"]
                durable = sealed and not report.get("lost") and len(archiver.store.lost_batches) == self._lost
        finally:
            if self._opened:
                self._opened = False
                close_mark(archiver_for(self.config), durable=durable)
        if pins is not None and pins.count and sealed:
            kick_finisher(archiver_for(self.config).store.root)
        _raise_errors(report)


def _raise_errors(report: dict[str, Any]) -> None:
    if report["errors"]:
        raise AgtailError("; ".join(f"{e['path']}: {e['message']}" for e in report["errors"]))


def after_read_hook(config: Any) -> Any:
    """The index's after-native-read hook (:class:`AfterReadHook`)."""
    return AfterReadHook(config)


def before_discovery_hook(config: Any) -> Callable[..., None]:
    """The index's before-discovery hook: when an update scans an archive root, first write
    back the archived files whose native copy is gone (agtaild.store.archive.view), and start
    the finisher if files pinned by an earlier update still wait for it (a finisher killed
    midway: agtaild.store.archive.finish).
    ``present``: native files the update's discovery just found (no need to look again);
    ``unreadable``: native session stores it could not read (their copies are written back)."""

    def hook(
        roots: list[Any],
        errors: list[dict[str, str]],
        present: Collection[str] | None = None,
        unreadable: Collection[str] = (),
    ) -> None:
        if not any(r.kind == "archive" for r in roots) or not Path(config.archive_dir).is_dir():
            return
        try:
            if archive_enabled(config):
                catch_up(archiver_for(config), errors)
            kick_finisher(Path(config.archive_dir) / STORE_DIR)
            agents = {r.agent for r in roots if r.kind == "archive"}
            prepare_view(
                archiver_for(config),
                errors,
                convert=archive_enabled(config),
                agents=agents,
                present=present,
                unreadable=unreadable,
            )
        except Exception as exc:  # the update goes on; the archive says what went wrong
            log.warning("archive: %s", exc)
            errors.append({"path": str(config.archive_dir), "agent": "", "error": f"archive: {exc}"})

    return hook


def sendable_files(config: Any, agents: Iterable[str] | None = None) -> list[LocalFile]:
    """The files sync sends from this machine: every native file, and the files of sessions
    kept only by the archive (written back first, so they are plain files like the rest)."""
    if Path(config.archive_dir).is_dir():
        errors: list[dict[str, str]] = []
        before_discovery_hook(config)(list(config.roots), errors)
        for e in errors:
            log.warning("archive: %s: %s", e["path"], e["error"])
    return native_files(config, agents, kinds=("native", "archive"))
