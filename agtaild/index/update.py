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

import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, NamedTuple

import msgspec

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.config import Config, RootSpec
from agtaild.fsnames import at_or_below, to_text, unit_text
from agtaild.index.checkpoints import BackgroundCheckpoints
from agtaild.index.discovery import Candidate, Discovery, gone
from agtaild.index.prepare import Job, Prepared, decode_prepared_batch, encode_jobs, prepare, run_jobs
from agtaild.index.progress import IndexProgress, Progress
from agtaild.index.schema import connect
from agtaild.index.targets import appended_units
from agtaild.index.totals import totals
from agtaild.index.writer import UnitInfo, Writer

#: Read in worker processes when an update has more than this many bytes to read.
POOL_THRESHOLD_BYTES = 16 << 20
#: An update with more than this many bytes to read checkpoints the index's log on a thread of
#: its own (agtaild.index.checkpoints).
CHECKPOINT_THREAD_BYTES = 16 << 20
#: Read in-process while the worker processes start: at most this many units, this many bytes.
HEAD_UNITS = 50
HEAD_BYTES = 2 << 20
#: Units go to the worker processes in batches of consecutive units, up to this many bytes
#: to read (a bigger unit goes alone) and this many units: fewer round trips (see
#: agtaild.index.prepare.encode_jobs), while the newest units still come back first.
BATCH_BYTES = 1 << 20
BATCH_UNITS = 64
#: Batches in flight per worker process. New batches are handed out only when the writer takes
#: a result, and the writer is busy storing for ~0.1 s at a time: with two per worker the
#: workers ran dry and idled half the time (measured, 200 MB cold index: both workers at ~45%
#: of a core); six keep them fed (wall 5.0–5.5 s → 4.2–4.5 s; the writer's RSS +10 MB, more
#: gained nothing and cost memory: twelve +25 MB, twenty-four +50 MB). With many workers the
#: writer is the bottleneck and results would only wait in its memory: at most WINDOW_MAX in
#: flight, but never fewer than two per worker.
WINDOW_PER_WORKER = 6
WINDOW_MAX = 12
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
    files: list[str], known: dict[str, os.stat_result] | None = None
) -> tuple[bytes, tuple[int, int, int, int], float]:
    """(encoded fingerprint, main file's (dev, ino, size, mtime_ns), newest mtime).
    ``known``: ``stat`` results discovery took moments ago (agtaild.index.discovery)."""
    parts: _fingerprint_type = []
    newest = 0.0
    main = (0, 0, -1, 0)
    for path in files:
        try:
            st = known.get(path) if known else None
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
        before_discovery: list[Callable[[list[RootSpec], list[dict[str, str]], set[str]], None]] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.db = db
        self.config = config
        #: Worker processes for a big update (0: read in this process). ``workers`` counts the
        #: processes that read: 1 is this one alone, N ≥ 2 a pool of N. By default the writer
        #: keeps a core of its own and the others read (see pool_size).
        self.pool = pool_size(os.cpu_count() or 1) if workers is None else (workers if workers >= 2 else 0)
        self.after_native_read = after_native_read if after_native_read is not None else []
        #: Called with the roots, the error list and the files discovery found under the
        #: other roots before it walks the archive roots (the archive writes back the files
        #: agents deleted, so the archive roots hold them); not before an update of appended
        #: units, which discovers nothing (agtaild.index.targets).
        self.before_discovery = before_discovery or []
        self.log = log or (lambda msg: print(f"agtaild: {msg}", file=sys.stderr))
        self.errors: list[dict[str, str]] = []
        #: Bytes of transcripts the running update has not committed yet (what a full disk is
        #: short of, roughly: the index holds about as much as it reads).
        self.bytes_left = 0
        #: A first index's worker pool, forked before discovery (see _fork_early).
        self._early_pool: Any = None

    # -- discovery ------------------------------------------------------------------------
    def _cwd_candidates(self, roots: list[RootSpec]) -> list[Candidate]:
        """Units of agents that keep sessions in project folders (``uses_known_cwds``), found
        from the working directories of the sessions already indexed — no crawl: the adapter
        only looks in (and just above) each directory."""
        from agtaild.adapters import all_adapters

        in_scope = {r.agent for r in roots}
        adapters = [a for a in all_adapters() if a.uses_known_cwds and a.id in in_scope]
        if not adapters:
            return []
        cwds = [row[0] for row in self.db.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL")]
        out: list[Candidate] = []
        for adapter in adapters:
            configured = {r.path for r in roots if r.agent == adapter.id}
            try:
                paths = adapter.roots_for_cwds(cwds)
                for path in paths:
                    if str(path) in configured:
                        continue
                    spec = RootSpec(agent=adapter.id, path=str(path))
                    out.extend(Candidate(adapter=adapter, unit=u, root=spec) for u in adapter.discover(path))
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
        try:
            report = self._run_once(full=full, only_paths=only_paths, progress=progress)
        finally:
            self._drop_early_pool()
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
        again["changed"] = report["changed"] + again["changed"]
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
            if not full and only_paths is None and db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
                self._fork_early()
            candidates = found.candidates(roots, before_archive=lambda present: self._before(roots, present))
            if self.config.known_cwds:
                listed = {c.unit.path for c in candidates}
                candidates += [c for c in self._cwd_candidates(roots) if c.unit.path not in listed]
            for row in db.execute(
                "SELECT path, id, agent, root, kind, collection, fingerprint, settled, size FROM files"
            ):
                if agents is None or row[2] in agents:
                    stored[row[0]] = Stored(*row[1:])

        jobs: list[tuple[UnitInfo, Job, int]] = []
        newest_of: dict[str, float] = {}
        by_path: dict[str, Candidate] = {}  # the candidates to read, by their key
        unchanged: set[str] = set()
        now = time.time()
        places: dict[int, tuple[str, str, str, str | None]] = {}  # id(root) -> where it stores
        for c in candidates:
            key = to_text(c.unit.path)
            fp, main, newest = fingerprint(c.unit.files or [c.unit.path], found.stats)
            old = stored.get(key)
            place = places.get(id(c.root))
            if place is None:
                place = places[id(c.root)] = (c.root.agent, to_text(c.root.path), c.root.kind, c.root.collection)
            same_place = old is not None and (old.agent, old.root, old.kind, old.collection) == place
            if same_place and old is not None and old.fingerprint == fp and old.settled:
                unchanged.add(key)
                continue
            state = None
            if same_place and old is not None:  # continue where the last read stopped
                state = db.execute("SELECT state FROM files WHERE id = ?", (old.id,)).fetchone()[0]
            # A file written in the last seconds may be mid-write: read it again next time
            # even if it does not change (its last line may then be complete, or truncated).
            text_unit = unit_text(c.unit)
            info = UnitInfo(
                path=key,
                agent=c.root.agent,
                root=to_text(c.root.path),
                kind=c.root.kind,
                collection=c.root.collection,
                rel=to_text(c.rel_path()),
                files=list(text_unit.files or [key]),
                fingerprint=fp,
                main=main,
                unit=_msgpack.encode(text_unit),
                read_at=now,
                settled=now - newest >= SETTLE_SECONDS,
                file_id=old.id if old is not None else None,
                new=old is None,
            )
            cost = max(main[2], 0) if state is None or old is None else max(main[2] - (old.size or 0), 0)
            jobs.append((info, Job(c.root.agent, c.unit, state, c.root.kind, c.root.collection, now), cost))
            newest_of[key] = newest
            by_path[key] = c
        # Newest first: the sessions a person is likely to look at are indexed (and committed,
        # see FIRST_COMMIT_SECONDS) before the old ones. The sort is stable: ties keep their
        # discovery order.
        jobs.sort(key=lambda j: -newest_of[j[0].path])

        seen = {info.path for info, _job, _cost in jobs} | unchanged
        gone = [
            (path, old.id, old.agent)
            for path, old in stored.items()
            if path not in seen and found.known_gone(path, old.agent, old.fingerprint)
        ]
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
                writer.remove(file_id)
                changed.append(
                    {"agent": agent, "id": sid[0] if sid else None, "path": path, "action": "removed"}
                )
            total = len(jobs)
            self.bytes_left = to_read
            costs = {info.path: cost for info, _job, cost in jobs}
            tracker.reading(total, to_read)
            if progress is not None:
                progress(tracker)
            if hooks is not None:
                self._call_hooks("begin", to_read)
            for info, prep in self._read_all(jobs):
                if tracker.files_done == 0:  # the commit clock starts with the first unit read
                    last_commit = time.perf_counter()
                cost = costs.get(info.path, 0)
                to_read -= cost
                self._store(writer, info, prep, changed)
                if hooks is not None and info.kind == "native" and prep.error is None and not prep.missing:
                    hooks.submit(self._after_read, by_path[info.path])
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
        report["read"] = len(jobs)
        report["changed"] = changed
        report["errors"] = self.errors
        return report

    def _before(self, roots: list[RootSpec], present: set[str]) -> None:
        for before in self.before_discovery:
            before(roots, self.errors, present)

    def _store(self, writer: Writer, info: UnitInfo, prep: Prepared, changed: list[dict[str, Any]]) -> None:
        if prep.error is not None:
            self.errors.append({"path": info.path, "agent": info.agent, "error": prep.error})
            self.log(f"could not read {info.path}: {prep.error}")
            return
        if prep.missing and not gone(info.files[0] if info.files else info.path):
            # The read met ENOENT, but the unit's own file is there (a sidecar vanished, a
            # race): keep what is stored; the next update reads it again.
            self.errors.append({"path": info.path, "agent": info.agent, "error": "a file vanished while read"})
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
                    }
                )
            return
        action = writer.apply(info, prep)
        changed.append({"agent": info.agent, "id": prep.session.sid, "path": info.path, "action": action})

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

    # -- reading --------------------------------------------------------------------------
    def _fork_early(self) -> None:
        """A first index forks its reading workers before discovery. Forked after it, each
        worker starts as big as this process then is — with every discovered unit and the jobs
        made of them — and counts those pages in its RSS: 65 MB at the fork on the 2 GB bench
        corpus against 29 MB before discovery. Only where the pool would fork (one thread, Linux);
        an update that turns out small shuts it down unused (_read_all)."""
        if self.pool == 0 or _start_method() != "fork":
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=self.pool, mp_context=multiprocessing.get_context("fork"))
        gc.freeze()  # as in _read_in_pool: the workers never walk (nor write to) the parent's heap
        try:
            pool.submit(os.getpid).result()  # the first submit forks every worker
        except Exception:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        finally:
            gc.unfreeze()
        self._early_pool = pool

    def _drop_early_pool(self) -> None:
        pool, self._early_pool = self._early_pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _read_all(self, jobs: list[tuple[UnitInfo, Job, int]]) -> Iterator[tuple[UnitInfo, Prepared]]:
        work = sum(cost for _, _, cost in jobs)
        if self.pool == 0 or len(jobs) < 2 or work < POOL_THRESHOLD_BYTES:
            self._drop_early_pool()
            for info, job, _ in jobs:
                yield info, prepare(job)
            return
        yield from self._read_in_pool(jobs)

    def _read_in_pool(self, jobs: list[tuple[UnitInfo, Job, int]]) -> Iterator[tuple[UnitInfo, Prepared]]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor  # imported here: ~15 ms a process start

        pool, self._early_pool = self._early_pool, None  # forked already, before discovery
        method = "early"
        if pool is None:
            method = _start_method()
            if method == "forkserver":
                _preload_reading_code()
            pool = ProcessPoolExecutor(max_workers=self.pool, mp_context=multiprocessing.get_context(method))
        # In the order given (newest first): results come back roughly in it, within the window.
        # The workers take a while to start (forkserver: a fresh interpreter, then imports), so
        # the first few small units are read here meanwhile: the newest sessions are stored
        # (and committed) before the first worker has answered.
        head, rest = head_start(jobs)
        window = max(2 * self.pool, min(WINDOW_PER_WORKER * self.pool, WINDOW_MAX))
        with pool:
            pending: dict[Future[bytes], list[UnitInfo]] = {}
            queue = iter(batches(rest))

            def submit_next() -> None:
                for batch in queue:
                    pending[pool.submit(run_jobs, encode_jobs([job for _, job, _ in batch]))] = [
                        info for info, _, _ in batch
                    ]
                    return

            # Forked workers inherit this process's heap (the discovered units, the caches):
            # frozen, their collections never walk it (and never write to its pages).
            frozen = method == "fork"
            if frozen:
                gc.freeze()
            try:
                for _ in range(window):
                    submit_next()  # the first submit forks every worker
            finally:
                if frozen:
                    gc.unfreeze()
            for info, job, _cost in head:
                yield info, prepare(job)
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    infos = pending.pop(fut)
                    submit_next()
                    try:
                        preps = decode_prepared_batch(fut.result())
                        if len(preps) != len(infos):
                            raise ValueError(f"{len(preps)} results for {len(infos)} units")
                    except Exception as exc:  # a worker died: report, keep going
                        preps = [Prepared(path=info.path, error=f"worker failed: {exc!r}") for info in infos]
                    yield from zip(infos, preps, strict=True)


def _start_method() -> str:
    """How reading workers start: fork is cheapest, but forking a process that runs other
    threads (the daemon) can inherit a held lock; forkserver forks from a clean
    single-threaded server instead; spawn where neither exists."""
    import multiprocessing

    method = "fork" if threading.active_count() == 1 and sys.platform == "linux" else "forkserver"
    return method if method in multiprocessing.get_all_start_methods() else "spawn"


def pool_size(cores: int) -> int:
    """Worker processes for a machine with ``cores`` CPUs: one core stays the writer's. The
    writer (SQLite and FTS5 through one connection) is the slowest stage of a big update, and
    with a worker per core the scheduler gave it only 2/3 of a core on a 2-core machine
    (three busy processes on two cores)."""
    return max(1, cores - 1) if cores >= 2 else 0


def batches(jobs: list[tuple[UnitInfo, Job, int]]) -> Iterator[list[tuple[UnitInfo, Job, int]]]:
    """Consecutive jobs grouped up to BATCH_BYTES of reading and BATCH_UNITS units (a job
    bigger than BATCH_BYTES is a batch of its own), in the order given."""
    batch: list[tuple[UnitInfo, Job, int]] = []
    size = 0
    for item in jobs:
        cost = item[2]
        if batch and (size + cost > BATCH_BYTES or len(batch) >= BATCH_UNITS):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += cost
    if batch:
        yield batch


def _preload_reading_code() -> None:
    """The forkserver imports the reading code once; every worker forked from it starts with
    it loaded (instead of importing it, and the caller's main module, itself)."""
    import multiprocessing

    multiprocessing.get_context("forkserver").set_forkserver_preload(["agtaild.index.prepare"])


def start_workers_early() -> None:
    """Start the server that worker processes are forked from, now, when the first update will
    read in worker processes (a new index): it starts its interpreter and imports the reading
    code while the daemon itself starts, instead of after the first update has begun."""
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" in multiprocessing.get_all_start_methods():
        _preload_reading_code()
        forkserver.ensure_running()


def head_start(
    jobs: list[tuple[UnitInfo, Job, int]],
) -> tuple[list[tuple[UnitInfo, Job, int]], list[tuple[UnitInfo, Job, int]]]:
    """(the units read in-process while the pool starts, the rest): among the first
    HEAD_UNITS, the small ones, up to HEAD_BYTES in all. A big newest file (a long session
    being written) goes to the pool: reading it here would keep the results waiting."""
    head: list[tuple[UnitInfo, Job, int]] = []
    rest: list[tuple[UnitInfo, Job, int]] = []
    budget = HEAD_BYTES
    for i, item in enumerate(jobs):
        cost = item[2]
        if i < HEAD_UNITS and cost <= HEAD_BYTES // 4 and cost <= budget:
            head.append(item)
            budget -= cost
        else:
            rest.append(item)
    return head, rest
