"""Reading units in worker processes: the CPU-heavy half of a big update.

A big update (more than POOL_THRESHOLD_BYTES to read) hands its units to a pool of worker
processes in batches, a window of them in flight, while the updater's process stores what
comes back (agtaild.index.update); a small one reads in-process. A first index forks the
workers before discovery, while the process is still small (:meth:`ReadingPool.fork_early`).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, TypeVar

from agtaild.index.prepare import Job, Prepared, decode_prepared_batch, encode_jobs, prepare
from agtaild.index.timed import TimedReader, run_jobs
from agtaild.index.writer import UnitInfo

#: Read in worker processes when an update has more than this many bytes to read.
POOL_THRESHOLD_BYTES = 16 << 20
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


class ReadingPool:
    """The worker processes of one updater: ``size`` of them (0: read in this process)."""

    def __init__(self, size: int) -> None:
        self.size = size
        #: A first index's worker pool, forked before discovery (see fork_early).
        self._early: Any = None

    def fork_early(self) -> None:
        """A first index forks its reading workers before discovery. Forked after it, each
        worker starts as big as this process then is — with every discovered unit and the jobs
        made of them — and counts those pages in its RSS: 65 MB at the fork on the 2 GB bench
        corpus against 29 MB before discovery. Only where the pool would fork (one thread, Linux);
        an update that turns out small shuts it down unused (read_all)."""
        if self.size == 0 or start_method() != "fork":
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=self.size, mp_context=multiprocessing.get_context("fork"))
        gc.freeze()  # as in _read_in_pool: the workers never walk (nor write to) the parent's heap
        try:
            pool.submit(os.getpid).result()  # the first submit forks every worker
        except Exception:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        finally:
            gc.unfreeze()
        self._early = pool

    def drop_early(self) -> None:
        pool, self._early = self._early, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def read_all(self, jobs: list[tuple[UnitInfo, Job, int]]) -> Iterator[tuple[UnitInfo, Prepared]]:
        """Each unit read, roughly in the order given. ``jobs`` is emptied as its units are
        handed out: a unit's job (and its description, once stored) is freed when it has been
        read rather than at the end of the update (a cold index holds every discovered unit
        at its start: ~2.5 KB each, ~150 MB at 10 GB)."""
        work = sum(cost for _, _, cost in jobs)
        if self.size == 0 or len(jobs) < 2 or work < POOL_THRESHOLD_BYTES:
            self.drop_early()
            reader = _reader()  # each unit under its time budget (agtaild.index.timed)
            try:
                for info, job, _ in drain(jobs):
                    yield info, reader(job)
            finally:
                reader.close()
            return
        yield from self._read_in_pool(jobs)

    def _read_in_pool(self, jobs: list[tuple[UnitInfo, Job, int]]) -> Iterator[tuple[UnitInfo, Prepared]]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor  # imported here: ~15 ms a process start

        pool, self._early = self._early, None  # forked already, before discovery
        method = "early"
        if pool is None:
            method = start_method()
            if method == "forkserver":
                preload_reading_code()
            pool = ProcessPoolExecutor(max_workers=self.size, mp_context=multiprocessing.get_context(method))
        # In the order given (newest first): results come back roughly in it, within the window.
        # The workers take a while to start (forkserver: a fresh interpreter, then imports), so
        # the first few small units are read here meanwhile: the newest sessions are stored
        # (and committed) before the first worker has answered.
        head, rest = head_start(jobs)
        jobs.clear()
        window = max(2 * self.size, min(WINDOW_PER_WORKER * self.size, WINDOW_MAX))
        with pool:
            pending: dict[Future[bytes], list[UnitInfo]] = {}
            queue = iter(batches(drain(rest)))

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
            reader = _reader()
            try:
                for info, job, _cost in drain(head):
                    yield info, reader(job)
            finally:
                reader.close()
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


def _reader() -> TimedReader:
    """The in-process reader: :func:`prepare` (looked up when called) under the budget."""
    return TimedReader(lambda job: prepare(job))


def start_method() -> str:
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


_T = TypeVar("_T")


def drain(items: list[_T]) -> Iterator[_T]:
    """The items of ``items`` in order, each taken out of the list as it is handed out (the
    list holds only those still to come)."""
    items.reverse()
    while items:
        yield items.pop()


def batches(jobs: Iterable[tuple[UnitInfo, Job, int]]) -> Iterator[list[tuple[UnitInfo, Job, int]]]:
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


def preload_reading_code() -> None:
    """The forkserver imports the reading code once; every worker forked from it starts with
    it loaded (instead of importing it, and the caller's main module, itself)."""
    import multiprocessing

    multiprocessing.get_context("forkserver").set_forkserver_preload(["agtaild.index.timed"])


def start_workers_early() -> None:
    """Start the server that worker processes are forked from, now, when the first update will
    read in worker processes (a new index): it starts its interpreter and imports the reading
    code while the daemon itself starts, instead of after the first update has begun."""
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" in multiprocessing.get_all_start_methods():
        preload_reading_code()
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
