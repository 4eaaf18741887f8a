"""Finding what changed on disk, reading it, and handing it to the single writer.

An update discovers the units under the configured roots (all of them, or — for the
watcher's ``only_paths`` — every root of the agents those paths belong to; when every path is
a stored unit's main file grown in place, only those units: agtaild.index.targets), compares each
unit's file fingerprints (dev, inode, size, mtime) with the stored ones, reads only what
changed (an append costs the appended bytes: the adapter continues from its saved state; a
shrunk or replaced file is read again from the start — the adapter decides, and says so with
``reset``), and removes units that are gone — only those whose file is known to be gone,
never on a read error (agtaild.index.discovery).

Reading is the CPU-heavy part, so big updates run it in worker processes while this process
inserts; a window of in-flight jobs bounds memory. Small updates read in-process.

Units are read newest first (by their files' mtime), and the first commits come soon and then
ever less often (``FIRST_COMMIT_SECONDS`` doubling up to ``COMMIT_SECONDS``): on a cold index
the sessions a person is likely to open are readable within the first second, while the
total time stays that of a few large transactions. The update's progress (units and bytes
done and left, rate, ETA, phase: agtaild.index.progress) goes to the ``progress`` callback.

File paths are stored in their lossless text form (agtaild.fsnames): a file name that is not
UTF-8 is indexed like any other.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.config import Config, RootSpec
from agtaild.fsnames import at_or_below, to_text
from agtaild.index.checkpoints import BackgroundCheckpoints
from agtaild.index.discovery import Candidate, Discovery, gone
from agtaild.index.prepare import Job, Prepared
from agtaild.index.progress import IndexProgress, Progress
from agtaild.index.readers import ReadingPool, pool_size
from agtaild.index.schema import connect
from agtaild.index.targets import appended_units
from agtaild.index.totals import totals
from agtaild.index.writer import UnitInfo, Writer

#: An update with more than this many bytes to read checkpoints the index's log on a thread of
#: its own (agtaild.index.checkpoints).
CHECKPOINT_THREAD_BYTES = 16 << 20
#: Commit at least this often during a long update (readers see progress; a crash loses little).
COMMIT_SECONDS = 5.0
#: The first commit of an update comes this soon (the newest sessions become visible); each
#: later interval doubles, up to COMMIT_SECONDS.
FIRST_COMMIT_SECONDS = 0.25
#: ... and once this many units are stored: a first page of `agtail list` (its default limit).
FIRST_PAGE = 50
#: Called after each native unit was read and stored: (adapter, unit, root). The archive
#: mirror registers here (Service.after_native_read) to copy the native files it just read.
#: A hook with a ``begin(nbytes)`` method is told the bytes the update will read before it
#: reads, one with a ``flush()`` method is called once the update's reads are done.
AfterRead = Callable[[Adapter, Unit, RootSpec], None]

_msgpack = msgspec.msgpack.Encoder()
_fingerprint_type = list[tuple[str, int, int, int, int]]


class Stored(NamedTuple):
    id: int
    agent: str
    root: str
    kind: str
    collection: str | None
    fingerprint: bytes
    settled: int
    size: int | None


def fingerprint(
    files: list[str], known: dict[str, os.stat_result] | None = None, side_key: str = ""
) -> tuple[bytes, tuple[int, int, int, int], float]:
    """(encoded fingerprint, main file's (dev, ino, size, mtime_ns), newest mtime).
    ``known``: ``stat`` results discovery took moments ago (agtaild.index.discovery), each
    taken out as it is used (an update holds the results of every file discovery saw only until
    its fingerprints are made: a file listed twice is looked at again);
    ``side_key``: what the unit's side files say of it (``Unit.sidecar_key``), kept last."""
    parts: _fingerprint_type = []
    newest = 0.0
    main = (0, 0, -1, 0)
    for path in files:
        try:
            st = known.pop(path, None) if known else None
            if st is None:
                st = os.stat(path)
            entry = (to_text(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            if st.st_mtime > newest:
                newest = st.st_mtime
        except OSError:
            entry = (to_text(path), 0, 0, -1, 0)
        if not parts:
            main = entry[1:]
        parts.append(entry)
    if side_key:
        parts.append((f"sidecars:{side_key}", 0, 0, -1, 0))
    return _msgpack.encode(parts), main, newest


def _root_contains(root: str, path: str) -> bool:
    return at_or_below(path, root) or at_or_below(root, path)


class Updater:
    def __init__(
        self,
        db: Any,
        config: Config,
        *,
        workers: int | None = None,
        after_native_read: list[AfterRead] | None = None,
        before_discovery: list[Callable[..., None]] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.db = db
        self.config = config
        #: Worker processes for a big update (0: read in this process). ``workers`` counts the
        #: processes that read: 1 is this one alone, N ≥ 2 a pool of N. By default the writer
        #: keeps a core of its own and the others read (see pool_size).
        self.readers = ReadingPool(
            pool_size(os.cpu_count() or 1) if workers is None else (workers if workers >= 2 else 0)
        )
        self.after_native_read = after_native_read if after_native_read is not None else []
        #: Called with the roots, the error list and the files discovery found under the
        #: other roots (and, as ``unreadable``, the session stores it could not read) before it
        #: walks the archive roots (the archive writes back the files agents deleted, and its
        #: copies of unreadable stores, so the archive roots hold them); not before an update of
        #: appended units, which discovers nothing (agtaild.index.targets).
        self.before_discovery = before_discovery or []
        self.log = log or (lambda msg: print(f"agtaild: {msg}", file=sys.stderr))
        self.errors: list[dict[str, str]] = []
        #: Bytes of transcripts the running update has not committed yet (what a full disk is
        #: short of, roughly: the index holds about as much as it reads).
        self.bytes_left = 0
        #: Bytes of transcripts the last update read (0: it found nothing to read).
        self.read_bytes = 0

    # -- discovery ------------------------------------------------------------------------
    def _cwd_candidates(self, roots: list[RootSpec], found: Discovery | None = None) -> list[Candidate]:
        """Units of agents that keep sessions in project folders (``uses_known_cwds``), found
        from the working directories of the sessions already indexed — no crawl: the adapter
        only looks in (and just above) each directory — and by the adapter's own bounded
        search of this machine (``roots_nearby``: Aider's shell history and project folders).
        Each such root is walked by ``found`` (what it cannot read is recorded like any root's)."""
        walker = found if found is not None else Discovery([])
        from agtaild.adapters import all_adapters

        in_scope = {r.agent for r in roots}
        adapters = [a for a in all_adapters() if a.uses_known_cwds and a.id in in_scope]
        if not adapters:
            return []
        cwds = [row[0] for row in self.db.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL")]
        home = Path(os.environ.get("HOME") or Path.home())
        out: list[Candidate] = []
        for adapter in adapters:
            configured = {r.path for r in roots if r.agent == adapter.id}
            try:
                nearby = {
                    str(p): p
                    for p in [*adapter.roots_for_cwds(cwds), *adapter.roots_nearby(os.environ, home)]
                }
                for path in nearby.values():
                    if str(path) in configured:
                        continue
                    out.extend(walker.walk(RootSpec(agent=adapter.id, path=str(path))))
            except Exception as exc:
                self.errors.append({"path": "", "agent": adapter.id, "error": f"known cwds: {exc}"})
        return out

    def _scope(self, only_paths: Iterable[str] | None) -> tuple[list[RootSpec], set[str] | None]:
        """The roots to scan, and the agents whose stored units are in scope (None: all)."""
        roots = list(self.config.roots)
        if only_paths is None:
            return roots, None
        paths = [os.path.abspath(p) for p in only_paths]
        agents = {r.agent for r in roots for p in paths if _root_contains(r.path, p)}
        return [r for r in roots if r.agent in agents], agents

    # -- the update -----------------------------------------------------------------------
    def run(
        self,
        *,
        full: bool = False,
        only_paths: Iterable[str] | None = None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        self.read_bytes = 0  # the sum over both passes (see below)
        try:
            report = self._run_once(full=full, only_paths=only_paths, progress=progress)
        finally:
            self.readers.drop_early()
        if not self.config.known_cwds or not report.get("read"):
            return report
        # Sessions read just now may name working directories that hold sessions of agents
        # kept in project folders (Aider): pick those up in the same update.
        roots, _ = self._scope(only_paths)
        found = self._cwd_candidates(roots)
        if not found:
            return report
        known = {row[0] for row in self.db.execute("SELECT path FROM files")}
        if all(c.unit.path in known for c in found):
            return report
        errors = self.errors
        again = self._run_once(only_paths=only_paths, progress=progress)
        again["read"] += report["read"]
        again["changed"] = fold_moves(report["changed"] + again["changed"])
        again["errors"] = errors + again["errors"]
        again["seconds"] = round(again["seconds"] + report["seconds"], 3)
        return again

    def _run_once(
        self,
        *,
        full: bool = False,
        only_paths: Iterable[str] | None = None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        self.errors = []
        tracker = IndexProgress("rebuild" if full else ("update" if only_paths is None else "paths"))
        if progress is not None:
            progress(tracker)
        found = Discovery(self.errors)
        db = self.db
        writer = Writer(db)
        if full:
            writer.begin()
            writer.wipe()
            writer.commit()
        roots, agents = self._scope(only_paths)
        # The watcher's appends: read the stored units straight away (agtaild.index.targets).
        targets = None
        if only_paths is not None and not full:
            targets = appended_units(db, [os.path.abspath(p) for p in only_paths], list(self.config.roots))
        stored: dict[str, Stored] = {}
        if targets is not None:
            candidates = [c for c, _row in targets]
            stored = {to_text(c.unit.path): Stored(*row) for c, row in targets}
        else:
            if (
                not full
                and only_paths is None
                and db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None
            ):
                self.readers.fork_early()
            candidates = found.candidates(
                roots, before_archive=lambda present: self._before(roots, present, found.unreadable)
            )
            if self.config.known_cwds:
                listed = {c.unit.path for c in candidates}
                candidates += [c for c in self._cwd_candidates(roots, found) if c.unit.path not in listed]
            for row in db.execute(
                "SELECT path, id, agent, root, kind, collection, fingerprint, settled, size FROM files"
            ):
                if agents is None or row[2] in agents:
                    stored[row[0]] = Stored(*row[1:])
            candidates = found.hide_kept(candidates, lambda agent, rel: self._keeps_native(found, agent, rel))

        jobs: list[tuple[UnitInfo, Job, int]] = []
        newest_of: dict[str, float] = {}
        unchanged: set[str] = set()
        now = time.time()
        places: dict[int, tuple[str, str, str, str | None]] = {}  # id(root) -> where it stores
        for c in candidates:
            key = to_text(c.unit.path)
            # What the side files say of the unit is fingerprinted with its files: a change to
            # its entry re-reads it (agtaild.adapters.kit.sidecars).
            fp, main, newest = fingerprint(c.unit.files or [c.unit.path], found.stats, c.unit.sidecar_key)
            old = stored.get(key)
            place = places.get(id(c.root))
            if place is None:
                place = places[id(c.root)] = (
                    c.root.agent,
                    to_text(c.root.path),
                    c.root.kind,
                    c.root.collection,
                )
            same_place = old is not None and (old.agent, old.root, old.kind, old.collection) == place
            if same_place and old is not None and old.fingerprint == fp and old.settled:
                unchanged.add(key)
                continue
            state = None
            if same_place and old is not None:  # continue where the last read stopped
                state = db.execute("SELECT state FROM files WHERE id = ?", (old.id,)).fetchone()[0]
            # A file written in the last seconds may be mid-write: read it again next time
            # even if it does not change (its last line may then be complete, or truncated).
            info = UnitInfo(
                path=key,
                agent=c.root.agent,
                root=place[1],
                kind=c.root.kind,
                collection=c.root.collection,
                rel="",  # these three are filled from the candidate when it is stored (UnitInfo.fill)
                files=[],
                fingerprint=fp,
                main=main,
                unit=b"",
                read_at=now,
                settled=now - newest >= SETTLE_SECONDS,
                file_id=old.id if old is not None else None,
                new=old is None,
                source=c,
            )
            cost = max(main[2], 0) if state is None or old is None else max(main[2] - (old.size or 0), 0)
            info.cost = cost
            jobs.append((info, Job(c.root.agent, c.unit, state, c.root.kind, c.root.collection, now), cost))
            newest_of[key] = newest
        # Newest first: the sessions a person is likely to look at are indexed (and committed,
        # see FIRST_COMMIT_SECONDS) before the old ones. The sort is stable: ties keep their
        # discovery order.
        jobs.sort(key=lambda j: -newest_of[j[0].path])

        seen = {info.path for info, _job, _cost in jobs} | unchanged
        gone = [
            (path, old.id, old.agent)
            for path, old in stored.items()
            if path not in seen and found.known_gone(path, old.agent, old.fingerprint, old.root)
        ]
        # What discovery kept of every file and unit is not needed past this point: dropped
        # now, not when the update ends (on a cold index the jobs are the only copy left, and
        # the readers free each as it is read: see ReadingPool.read_all).
        del candidates, seen, unchanged, stored
        newest_of.clear()
        found.stats.clear()
        found.seen.files.clear()
        changed: list[dict[str, Any]] = []

        if not jobs and not gone:  # nothing changed: no write transaction at all
            report = totals(db)
            report.update(
                seconds=round(time.perf_counter() - started, 3), read=0, changed=[], errors=self.errors
            )
            return report
        # The after-read hooks (the archive mirror: copying and hashing files) run on their own
        # thread, overlapping the inserts; the update waits for them before it reports.
        hooks = (
            ThreadPoolExecutor(1, thread_name_prefix="agtail-after-read") if self.after_native_read else None
        )
        to_read = sum(cost for _info, _job, cost in jobs)
        self.read_bytes += to_read
        # A big update checkpoints on a thread of its own (agtaild.index.checkpoints), started
        # at the first commit: a thread started before the worker pool forks would make the
        # pool start its workers the slow way (see _read_in_pool).
        big = to_read >= CHECKPOINT_THREAD_BYTES
        checkpoints: BackgroundCheckpoints | None = None
        writer.begin()
        last_commit = time.perf_counter()
        interval = min(FIRST_COMMIT_SECONDS, COMMIT_SECONDS)
        try:
            for path, file_id, agent in gone:
                sid = db.execute("SELECT sid FROM sessions WHERE file_id = ?", (file_id,)).fetchone()
                collection = db.execute("SELECT collection FROM files WHERE id = ?", (file_id,)).fetchone()
                writer.remove(file_id)
                changed.append(
                    {
                        "agent": agent,
                        "id": sid[0] if sid else None,
                        "path": path,
                        "action": "removed",
                        "collection": collection[0] if collection else None,
                    }
                )
            total = len(jobs)  # read_all empties the list as it goes
            self.bytes_left = to_read
            tracker.reading(total, to_read)
            if progress is not None:
                progress(tracker)
            if hooks is not None:
                self._call_hooks("begin", to_read)
            for info, prep in self.readers.read_all(jobs):
                if tracker.files_done == 0:  # the commit clock starts with the first unit read
                    last_commit = time.perf_counter()
                cost = info.cost
                to_read -= cost
                self._store(writer, info, prep, changed)
                if hooks is not None and info.kind == "native" and prep.error is None and not prep.missing:
                    hooks.submit(self._after_read, info.source)
                tracker.stored(cost)
                if progress is not None:
                    progress(tracker)
                if time.perf_counter() - last_commit > interval or tracker.files_done == FIRST_PAGE:
                    writer.commit()
                    if big and checkpoints is None:
                        checkpoints = BackgroundCheckpoints.start(db, connect)
                        big = checkpoints is not None
                    if checkpoints is not None:
                        checkpoints.committed()
                    self.bytes_left = to_read
                    writer.begin()
                    last_commit = time.perf_counter()
                    interval = min(interval * 2, COMMIT_SECONDS)
            tracker.finishing()
            if progress is not None:
                progress(tracker)
            writer.commit(final=True)
        except BaseException:
            writer.rollback()
            raise
        finally:
            if checkpoints is not None:
                checkpoints.close()
            if hooks is not None:
                hooks.submit(self._call_hooks, "flush")
                hooks.shutdown(wait=True)
        report = totals(db)
        report["seconds"] = round(time.perf_counter() - started, 3)
        report["read"] = total
        report["changed"] = fold_moves(changed)
        report["errors"] = self.errors
        return report

    def _before(self, roots: list[RootSpec], present: set[str], unreadable: set[str]) -> None:
        for before in self.before_discovery:
            before(roots, self.errors, present, unreadable=unreadable)

    def _keeps_native(self, found: Discovery, agent: str, rel: str) -> bool:
        """Does the index keep a native unit of ``agent`` at ``rel`` that discovery could not
        read now? (then the archive's copy of it is not listed beside it)"""
        rows = self.db.execute(
            "SELECT path, fingerprint, root FROM files WHERE agent = ? AND rel = ? AND kind = 'native'",
            (agent, rel),
        )
        return any(found.keeps(path, fp, root) for path, fp, root in rows)

    def _store(self, writer: Writer, info: UnitInfo, prep: Prepared, changed: list[dict[str, Any]]) -> None:
        info.fill()
        if prep.error is not None:
            self.errors.append({"path": info.path, "agent": info.agent, "error": prep.error})
            self.log(f"could not read {info.path}: {prep.error}")
            return
        if prep.missing and not gone(info.files[0] if info.files else info.path):
            # The read met ENOENT, but the unit's own file is there (a sidecar vanished, a
            # race): keep what is stored; the next update reads it again.
            self.errors.append(
                {"path": info.path, "agent": info.agent, "error": "a file vanished while read"}
            )
            return
        if prep.missing or prep.session is None:
            row = self.db.execute("SELECT id FROM files WHERE path = ?", (info.path,)).fetchone()
            if row is not None:
                sid = self.db.execute("SELECT sid FROM sessions WHERE file_id = ?", (row[0],)).fetchone()
                writer.remove(row[0])
                changed.append(
                    {
                        "agent": info.agent,
                        "id": sid[0] if sid else None,
                        "path": info.path,
                        "action": "removed",
                        "collection": info.collection,
                    }
                )
            return
        action = writer.apply(info, prep)
        changed.append(
            {
                "agent": info.agent,
                "id": prep.session.sid,
                "path": info.path,
                "action": action,
                "collection": info.collection,
            }
        )

    def _after_read(self, c: Candidate) -> None:
        for hook in self.after_native_read:
            try:
                hook(c.adapter, c.unit, c.root)
            except Exception as exc:
                self.errors.append(
                    {"path": c.unit.path, "agent": c.root.agent, "error": f"after read: {exc}"}
                )

    def _call_hooks(self, method: str, *args: Any) -> None:
        """Call ``method`` on the after-read hooks that have it: ``begin(nbytes)`` before the
        update reads (the archive mirror moves a big update's copying into a process of its
        own), ``flush()`` once its last unit is read (the mirror makes its copies durable
        together, before the update reports)."""
        for hook in self.after_native_read:
            call = getattr(hook, method, None)
            if call is None:
                continue
            try:
                call(*args)
            except Exception as exc:
                self.errors.append({"path": "", "agent": "", "error": f"after read: {exc}"})


def fold_moves(changed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per session that moved within an update: a session removed at one path and
    added at another (of the same agent, id and collection) is "updated" at its new path, with
    ``from`` its old one — never "removed" then "added". That happens when an agent's store
    could not be read and the archive's copy stood in for it (agtaild.store.archive.view), and
    when it reads again; a consumer of the changes (the viewer, a script following
    /api/v1/changes) would otherwise drop the session and add it back. Entries go out without
    their collection (the change's document is agent, id, path, action)."""

    def key(c: dict[str, Any]) -> tuple[Any, Any, Any]:
        return c["agent"], c["id"], c.get("collection")

    added = {key(c): c for c in changed if c["action"] == "added" and c["id"] is not None}
    moved = {key(c) for c in changed if c["action"] == "removed" and key(c) in added}
    out: list[dict[str, Any]] = []
    for c in changed:
        k = key(c)
        entry = {f: v for f, v in c.items() if f != "collection"}
        if k in moved and c["action"] == "removed":
            continue
        if k in moved and c["action"] == "added":
            gone = next(r for r in changed if r["action"] == "removed" and key(r) == k)
            entry.update(action="updated", **{"from": gone["path"]})
        out.append(entry)
    return out
