"""The archive: a compressed, append-only mirror of every native file agtaild indexes.

Agents delete their own transcripts (Claude Code prunes sessions older than
``cleanupPeriodDays``, 30 by default). After the index has read a native unit, its files are
stored compressed in the archive's store (agtaild.store.archive.blobs: zstd frames under
``<data dir>/archive/.zstore/<agent>/<path>.zst`` plus a catalog). When the agent deletes a
file, agtaild.store.archive.view writes it back, byte for byte, to
``<data dir>/archive/<agent>/<path relative to the session root>`` — the layout the same
adapter reads — so its session stays listed and searchable (tagged ``archived``, never
resumable). Only this package knows the store's format.

A file that grew gets only its new bytes appended as new frames: the bytes at the boundary
must match first (the file was appended to, not rewritten), and the store checks each new
frame against the bytes it was made from. Anything else — a new file, a rewritten one, an SQLite
store (copied consistently with the backup API) — is stored whole (temp file, verified,
renamed). When the archived bytes are no longer the start of the native file — it shrank, or
an append-only log was rewritten in place (same inode, truncated, then regrown with other
content) — the archived copy is kept beside the new one as ``NAME.agtail-conflict-…``:
history is never lost.

During an index update the mirror (on the update's after-read thread, or for a big update in
a process of its own: agtaild.store.archive.hook) *defers* durability
(agtaild.store.archive.blobs): the blobs of a batch are fsynced together and their catalog
rows committed in one transaction, every BATCH_SECONDS / BATCH_BYTES and when the update ends
(the hook's ``flush``). A file is marked archived (in the hash cache, which skips it next
time) only after its row is committed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from agtaild.adapters.kit.files import open_regular
from agtaild.errors import AgtailError
from agtaild.fsnames import from_text, to_text
from agtaild.store.archive.blobs import STORE_DIR, ZStore
from agtaild.store.archive.ends import BOUNDARY_WINDOW
from agtaild.store.archive.framing import FRAME_RAW, ArchiveDamaged
from agtaild.store.archive.lock import WriterLock
from agtaild.store.archive.pinned import LEFT_SUFFIX
from agtaild.store.archive.pinned import pending as pending_pins
from agtaild.store.archive.pins import PINS_DIR
from agtaild.store.archive.view import convert_legacy_file
from agtaild.sync.directory import conflict_name
from agtaild.sync.manifest import HashCache, stat_key, sync_state_dir
from agtaild.sync.native import SQLITE_MAGIC, LocalFile, LocalFilesSource, native_files
from agtaild.sync.safety import check_not_native, path_problem

log = logging.getLogger(__name__)

_RECORD = "archived:"
#: Files agents only ever append to: any other change to their archived bytes is a rewrite.
APPEND_ONLY_SUFFIXES = (".jsonl", ".ndjson")
#: A deferred batch is flushed (its blobs fsynced, its rows committed) at least this often and
#: once it holds this many new bytes: it bounds what a crash sends back to be stored again,
#: and how long the catalog's write lock is held.
BATCH_SECONDS = 2.0
BATCH_BYTES = 64 << 20


def empty_report() -> dict[str, Any]:
    """What a mirror reports: files stored or grown, their new bytes, appends, whole copies,
    conflict copies kept, and one error per file that could not be archived."""
    return {"files": 0, "bytes": 0, "appended": 0, "copied": 0, "kept": [], "errors": []}


def merge_report(into: dict[str, Any], report: dict[str, Any]) -> None:
    """Add a mirror report to another: counts summed, lists joined."""
    for key, value in report.items():
        if isinstance(value, list):
            into.setdefault(key, []).extend(value)
        else:
            into[key] = into.get(key, 0) + value


class TextKeyHashCache(HashCache):
    """The sync hash cache, keyed by the text form of paths (agtaild.fsnames): a native file
    whose name is not UTF-8 is archived like any other."""

    def get(self, path: str, key: str) -> str | None:
        return super().get(to_text(path), key)

    def put(self, path: str, key: str, digest: str) -> None:
        super().put(to_text(path), key, digest)

    def put_many(self, entries: list[tuple[str, str, str]]) -> None:
        super().put_many([(to_text(path), key, digest) for path, key, digest in entries])


class Archiver:
    """Mirrors native files into the archive; one per data dir (it keeps a hash cache)."""

    def __init__(self, config: Any, cache: HashCache | None = None) -> None:
        self.config = config
        self.root = Path(config.archive_dir)
        self.cache = cache if cache is not None else TextKeyHashCache(sync_state_dir(config.data_dir) / "hashes.sqlite3")
        self.store = ZStore(self.root)
        #: Held from this archiver's first write until its batch is durable (archive_lock).
        self.writer_lock = WriterLock(self.store.root)
        self._root_text = str(self.root)
        self._lock = threading.RLock()
        #: (source, stat key, store batch) of the files mirrored in the open batch: marked
        #: archived once their batch is committed, never before (nor when it was rolled back).
        self._unmarked: list[tuple[str, str, int]] = []
        self._batch_bytes = 0
        self._batch_started = 0.0
        self._real: dict[str, str] = {}
        #: (path, size, first bytes, last bytes) of the archived copy _boundary_matches last
        #: found equal to the native file's: the append after it starts its ends' digests there.
        self._checked: tuple[str, int, bytes, bytes] | None = None
        native = [r.path for r in config.roots if r.kind == "native"]
        self.problem: str | None = None
        try:
            check_not_native(self.root, native)
        except AgtailError as exc:
            self.problem = exc.message

    def mirror_units(self, units: Iterable[Any]) -> dict[str, Any]:
        """Mirror the native files of ``units`` (Unit objects; archive/import units are ignored)."""
        from agtaild.adapters import get_adapter

        return self.mirror_pairs((get_adapter(u.agent), u) for u in units)

    def mirror_pairs(self, units: Iterable[tuple[Any, Any]], *, defer: bool = False) -> dict[str, Any]:
        """Mirror the native files of (adapter, unit) pairs whose unit lies under a native root.

        With ``defer`` (the index's hook) what is written may stay in the open batch until a
        later call or :meth:`flush`; without, everything is durable when this returns."""
        report = empty_report()
        if not archive_enabled(self.config):
            return report
        if self.problem is not None:
            report["errors"].append({"path": str(self.root), "message": self.problem})
            return report
        return self.mirror_files(self.files_of(units), defer=defer, report=report)

    def files_of(self, units: Iterable[tuple[Any, Any]]) -> list[tuple[LocalFile, str]]:
        """The native files to mirror of (adapter, unit) pairs, each with the archive path of its
        unit's main file: only units under a native root, not archived by their agent."""
        native_roots = {self._realpath(r.path) for r in self.config.roots if r.kind == "native"}
        pairs = [
            (adapter, unit)
            for adapter, unit in units
            if not getattr(unit, "archived", False) and self._realpath(unit.root) in native_roots
        ]
        return list(_files_with_units(self.config, pairs))

    def mirror_files(
        self,
        files: Iterable[tuple[LocalFile, str]],
        *,
        defer: bool = False,
        read_from: dict[str, BinaryIO] | None = None,
        report: dict[str, Any] | None = None,
        damaged: bool = False,
    ) -> dict[str, Any]:
        """Mirror ``files`` (from :meth:`files_of`). ``read_from``: native path -> the same file
        already open (by its pin: agtaild.store.archive.pins, opened without following a
        symlink and checked), for a file its agent may have deleted meanwhile; the archive
        still records the native path as its source. ``damaged``: their archived copies are
        known to be damaged (stored anew)."""
        if report is None:
            report = empty_report()
        with self._lock:
            self.writer_lock.acquire()
            for local, unit in files:
                try:
                    readable = read_from.get(local.source) if read_from else None
                    self._mirror_file(local, report, unit, readable, damaged=damaged)
                except (AgtailError, OSError) as exc:
                    msg = exc.message if isinstance(exc, AgtailError) else str(exc)
                    log.warning("archive: %s: %s", to_text(local.path), msg)
                    report["errors"].append({"path": to_text(local.path), "message": to_text(msg)})
            full = self._batch_bytes >= BATCH_BYTES or (
                self._batch_started > 0 and time.monotonic() - self._batch_started >= BATCH_SECONDS
            )
            if not defer or full:
                self._flush_into(report)
        return report

    def _realpath(self, root: str) -> str:
        """The real path of a root (asked per unit: resolved once per batch, not per unit)."""
        real = self._real.get(root)
        if real is None:
            real = self._real[root] = os.path.realpath(root)
        return real

    def flush(self) -> dict[str, Any]:
        """Make the open batch durable (see :meth:`mirror_pairs`); its errors in a report."""
        report: dict[str, Any] = {"errors": []}
        with self._lock:
            if self.writer_lock.held:
                self._flush_into(report)
        return report

    def _flush_into(self, report: dict[str, Any]) -> None:
        unmarked, self._unmarked = self._unmarked, []
        self._real.clear()  # a root moved or relinked meanwhile is resolved anew
        self._batch_bytes = 0
        self._batch_started = 0.0
        try:
            self.store.flush()
        except (OSError, sqlite3.Error) as exc:
            # Nothing of the batch was recorded: its files are stored again next time.
            log.warning("archive: %s", exc)
            report["errors"].append({"path": str(self.root), "message": f"could not make the archive durable: {exc}"})
        lost = self.store.lost_batches
        try:
            self.cache.put_many([(_RECORD + source, key, "1") for source, key, batch in unmarked if batch not in lost])
        finally:
            self.writer_lock.release()  # nothing of ours is open in the store now

    def restore_damaged(self, path: str) -> bool:
        """Store the archived file ``path`` (catalog text form) again from its native file, when
        that still exists: for a copy found damaged (``agtail doctor --verify-archive``); the
        damaged bytes are not kept. True when it was stored again."""
        row = self.store.get(from_text(path))
        if row is None or not row.source or not os.path.isfile(from_text(row.source)):
            return False
        local = LocalFile(path=from_text(row.path), source=from_text(row.source), agent=row.path.split("/", 1)[0])
        report = self.mirror_files([(local, row.unit or row.path)], damaged=True)
        return not report["errors"] and report["files"] > 0

    def _mirror_file(
        self, local: LocalFile, report: dict[str, Any], unit: str, opened: BinaryIO | None = None, *,
        damaged: bool = False,
    ) -> None:
        """Archive one file, read from its native path or from ``opened`` (``damaged``: its
        archived copy is known to be damaged: stored anew)."""
        st = os.fstat(opened.fileno()) if opened is not None else os.stat(local.source)
        key = stat_key(st)
        if not damaged and self.cache.get(_RECORD + local.source, key) is not None:
            return
        row = self.store.get(local.path)
        if row is None and os.path.isfile(os.path.join(self._root_text, local.path)):
            row = convert_legacy_file(self, local.path, local.source, unit)
        elif row is not None and (row.source != to_text(local.source) or row.unit != unit):
            self.store.set_source(local.path, to_text(local.source), unit)
        have = -1 if row is None or damaged else row.size
        # Opened once (a regular file only, never a FIFO or a device): its head, its boundary, its bytes.
        with contextlib.nullcontext(opened) if opened is not None else open_regular(local.source) as src:
            src.seek(0)
            sqlite = src.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
            if sqlite and opened is not None:  # not so when pinned: it was rewritten since
                raise AgtailError(f"{to_text(local.source)} is an SQLite store now; it is mirrored from its native file")
            try:
                appendable = 0 < have < st.st_size and not sqlite and self._boundary_matches(src, local.path, have)
            except ArchiveDamaged:
                # The archived copy is damaged and the native file is still here: store it anew
                # (damaged bytes are not kept as history; doctor --verify-archive reports them).
                log.warning("archive: %s: damaged; stored again from the native file", to_text(local.path))
                have, appendable = -1, False
            if appendable:
                added = self._append(src, local, have, st.st_size, st.st_mtime_ns)
                report["appended"] += 1
            else:
                added = self._copy_whole(src, local, have, st.st_size, st.st_mtime_ns, unit, report, sqlite)
        if added:
            report["files"] += 1
            report["bytes"] += added
        if self.store.pending():
            self._unmarked.append((local.source, key, self.store.batch))
            self._batch_bytes += added
            if not self._batch_started:
                self._batch_started = time.monotonic()
        else:
            self.cache.put(_RECORD + local.source, key, "1")

    def _boundary_matches(self, src: BinaryIO, path: str, have: int) -> bool:
        """Do the archived ``have`` bytes still begin the source (open as ``src``)? Checked on
        the first and the last BOUNDARY_WINDOW bytes (an append leaves both as they were; a
        file rewritten in place — truncated, then written anew — changes its head, or the
        bytes where the old end was) against the digests the catalog keeps of the archived
        ones (agtaild.store.archive.ends): an append costs the appended bytes and two windows
        of the source, nothing decompressed. A row written before the catalog kept them is
        compared with its archived bytes, read back, and gains them with the append."""
        self._checked = None
        window = min(have, BOUNDARY_WINDOW)
        src.seek(0)
        first = src.read(window)
        last = first
        if have > window:
            src.seek(have - window)
            last = src.read(window)
        same = self.store.check_ends(path, have, first, last)
        if same is None:
            same = first == b"".join(self.store.read(path, 0, window)) and last == b"".join(
                self.store.read(path, have - window, window)
            )
        if same:
            self._checked = (path, have, first, last)
        return same

    def _append(self, src: BinaryIO, local: LocalFile, have: int, size: int, mtime_ns: int) -> int:
        """Append ``source[have:size]`` (the source open as ``src``) to the archived copy
        (verified by the store), which keeps the digests of its new ends, made from the
        windows :meth:`_boundary_matches` just checked."""
        checked, self._checked = self._checked, None
        ends = (have, checked[2], checked[3]) if checked is not None and checked[:2] == (local.path, have) else None
        src.seek(have)
        row = self.store.append(
            local.path, _read_blocks(src, size - have, None), mtime_ns, defer=True, checked=ends
        )
        return row.size - have

    def _copy_whole(self, src: BinaryIO, local: LocalFile, have: int, size: int, mtime_ns: int, unit: str,
                    report: dict[str, Any], sqlite: bool) -> int:
        """Store the whole file (open as ``src``): its bytes as they are, or for SQLite a
        consistent snapshot (backup API); nothing when the archive already holds exactly these bytes."""
        snapshots = (
            LocalFilesSource([local], self.cache, origin=None, origin_name=None, where="archive") if sqlite else None
        )
        try:
            readable = snapshots.readable(local.path) if snapshots is not None else local.source
            if sqlite:
                size = os.path.getsize(readable)
                if have == size and self.store.matches(local.path, readable):
                    return 0
            elif have == size and self.store.matches_file(local.path, src, size):
                return 0
            # The archived bytes are not a prefix of the new file: it shrank, or an append-only
            # log was rewritten with other content. They are history, kept beside the new copy.
            # (A JSON document that grew is rewritten whole by its agent at every save and
            # holds what it held before: keeping each version would only multiply it.)
            rewritten_log = have > 0 and local.source.endswith(APPEND_ONLY_SUFFIXES)
            keep = (have > size or rewritten_log) and not sqlite
            kept_as = None
            if keep:
                parent, _, name = local.path.rpartition("/")
                folder = to_text(parent) + "/"
                taken = {from_text(r.path[len(folder):]) for r in self.store.rows() if r.path.startswith(folder)}
                kept_as = f"{parent}/{conflict_name(name, taken)}"
            src.seek(0)
            with open(readable, "rb") if snapshots is not None else contextlib.nullcontext(src) as fh:
                row = self.store.put_whole(local.path, _read_blocks(fh, size, readable), source=to_text(local.source),
                                           unit=unit, mtime_ns=mtime_ns, keep_as=kept_as, defer=True)
        finally:
            if snapshots is not None:
                snapshots.close()
        report["copied"] += 1
        if kept_as:
            report["kept"].append(kept_as)
        return row.size


def _read_blocks(fh: BinaryIO, size: int, name: str | None) -> Iterator[bytes]:
    """The next ``size`` bytes of ``fh`` (what its stat said: bytes appended meanwhile wait for
    the next round), read FRAME_RAW at a time so that each block is one frame, uncopied. With
    ``name``, a file that shrank meanwhile is an error, retried next time; without, its bytes
    end there (an append stores what there is)."""
    left = size
    while left > 0:
        block = fh.read(min(FRAME_RAW, left))
        if not block:
            if name is not None:
                raise AgtailError(f"{to_text(name)} shrank while being archived; it will be retried")
            return
        left -= len(block)
        yield block


def _files_with_units(config: Any, pairs: list[tuple[Any, Any]]) -> Iterator[tuple[LocalFile, str]]:
    """Each native file of ``pairs`` with the archive path of its unit's main file (when the
    agent deletes the main file, the unit's other archived files are written back with it)."""
    for adapter, unit in pairs:
        files = native_files(config, units=[(adapter, unit)])
        main = next((f.path for f in files if f.source == unit.path), files[0].path if files else "")
        for local in files:
            yield local, to_text(main)


def archive_enabled(config: Any) -> bool:
    """On unless the config says off or ``AGTAIL_ARCHIVE`` is 0/off/false/no."""
    env = os.environ.get("AGTAIL_ARCHIVE", "1").strip().lower()
    return bool(getattr(config, "archive", True)) and env not in {"0", "off", "false", "no"}


_archivers: OrderedDict[str, Archiver] = OrderedDict()
_archivers_lock = threading.Lock()
#: Archivers kept open (each holds its data dir's hash cache); a daemon needs one.
_ARCHIVERS_KEPT = 4


def archiver_for(config: Any) -> Archiver:
    with _archivers_lock:
        key = f"{config.data_dir}|{sorted((r.agent, r.path) for r in config.roots if r.kind == 'native')}"
        arch = _archivers.get(key)
        if arch is None:
            arch = _archivers[key] = Archiver(config)
            while len(_archivers) > _ARCHIVERS_KEPT:
                _, old = _archivers.popitem(last=False)
                with old._lock:
                    old.cache.close()
                    old.store.close()
        else:
            arch.config = config
            _archivers.move_to_end(key)
        return arch


def mirror_units(config: Any, units: Iterable[Any]) -> dict[str, Any]:
    """Mirror the native files of ``units`` into the archive (no-op when archive is off).

    Called by the index after it has read units; never raises for one bad file.
    """
    if not archive_enabled(config):
        return empty_report()
    return archiver_for(config).mirror_units(units)


def archive_usage(config: Any) -> dict[str, Any]:
    """Size of the archive, for `agtail doctor`: ``files``/``bytes`` on disk (compressed
    blobs, catalog, written-back copies), ``archived_files``/``archived_bytes`` what they hold."""
    root = Path(config.archive_dir)
    files = size = 0
    agents: dict[str, int] = {}
    store_dir = os.path.join(root, STORE_DIR)
    if root.is_dir():
        for dirpath, dirs, names in os.walk(root, followlinks=False):
            if dirpath == store_dir and PINS_DIR in dirs:
                dirs.remove(PINS_DIR)  # other names of native files: counted as pending below
            for name in names:
                try:
                    n = os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
                files += 1
                size += n
                parts = os.path.relpath(dirpath, root).split(os.sep)
                rel = parts[1] if parts[0] == STORE_DIR and len(parts) > 1 else parts[0]
                if rel != STORE_DIR and path_problem(f"{rel}/x") is None:
                    agents[rel] = agents.get(rel, 0) + n
    from agtaild.store.archive import losses

    problems, recent = losses.recent(store_dir)
    try:
        left = sum(1 for n in os.listdir(os.path.join(store_dir, PINS_DIR)) if n.endswith(LEFT_SUFFIX))
    except OSError:
        left = 0
    archived = archived_bytes = 0
    store = ZStore(root)
    if store.exists():
        try:
            archived, archived_bytes = store.totals()
        except (sqlite3.Error, OSError) as exc:  # e.g. a read-only data dir: the sizes on disk still say
            log.warning("archive: cannot read the catalog: %s", exc)
        finally:
            store.close()
    return {"dir": str(root), "enabled": archive_enabled(config), "files": files,
            "bytes": size, "by_agent": agents, "archived_files": archived, "archived_bytes": archived_bytes,
            "pending_files": pending_pins(store_dir), "pin_problem_count": problems, "pin_problems": recent,
            "pin_sets_left": left}


def read_archived(config: Any, path: str) -> bytes:
    """The archived bytes of ``agent/rel`` ``path`` (each frame checked)."""
    return b"".join(archiver_for(config).store.read(path))
