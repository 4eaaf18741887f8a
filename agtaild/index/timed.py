"""Reading each unit under a time budget, so that no unit can hold the writer.

Adapters open only regular files (agtaild.adapters.kit.files) and bound their database reads
(agtaild.adapters.kit.sqlite_open), but a read can still block where nothing in Python can
interrupt it — a file on a mount that stopped answering, an adapter gone wrong — and the
single writer waits for every unit it stores. So units are read on a helper thread, one at a
time, and the writer waits :data:`UNIT_SECONDS` for each: past that the unit is an error of
this update ("not read within …": what the index holds of it stays, and the next update tries
again), the thread is left to finish (or not) on its own, and the next unit is read on a new
thread. While a left thread still reads a unit, later updates do not start it again.

The same reader runs in this process (small updates, the first units of a big one) and in
each reading worker process (:func:`run_jobs`): a worker with a stuck thread still reads the
rest of its batches.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

import msgspec

from agtaild.fsnames import to_text, unit_real
from agtaild.index import prepare as _prepare
from agtaild.index.prepare import Job, Prepared

#: How long one unit's read may take before the writer goes on without it.
UNIT_SECONDS = 120.0

_msgpack = msgspec.msgpack.Encoder()
_jobs = msgspec.msgpack.Decoder(list[Job])
#: Units (text paths) still being read by a thread that was left behind: path → since when.
_stuck: dict[str, float] = {}
_stuck_lock = threading.Lock()


class _Helper:
    """One reading thread and its two queues."""

    def __init__(self, read: Callable[[Job], Prepared]) -> None:
        self.inbox: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue[Prepared] = queue.SimpleQueue()
        self.left = False
        self.current: str | None = None
        self.thread = threading.Thread(target=self._loop, args=(read,), name="agtail-read", daemon=True)
        self.thread.start()

    def _loop(self, read: Callable[[Job], Prepared]) -> None:
        while (job := self.inbox.get()) is not None:
            result = read(job)
            with _stuck_lock:
                if self.left:  # the writer went on without this unit: nobody waits for it
                    _stuck.pop(self.current or "", None)
                    return
                self.outbox.put(result)


class TimedReader:
    """``reader(job)``: the unit read by ``read`` (:func:`agtaild.index.prepare.prepare`), or
    an error once it has taken :data:`UNIT_SECONDS`. Close it when done."""

    def __init__(self, read: Callable[[Job], Prepared] | None = None) -> None:
        self._read = read or (lambda job: _prepare.prepare(job))
        self._helper: _Helper | None = None

    def __call__(self, job: Job) -> Prepared:
        path = to_text(job.unit.path)
        budget = UNIT_SECONDS
        with _stuck_lock:
            since = _stuck.get(path)
        if since is not None:
            return Prepared(
                path=path,
                error=f"still being read since {time.time() - since:.0f} s ago (not read within {budget:g} s); "
                "what the index holds of it is kept",
            )
        if self._helper is None:
            self._helper = _Helper(self._read)
        helper = self._helper
        helper.current = path
        helper.inbox.put(job)
        try:
            return helper.outbox.get(timeout=budget)
        except queue.Empty:
            pass
        with _stuck_lock:
            try:  # it may have finished just now
                return helper.outbox.get_nowait()
            except queue.Empty:
                helper.left = True
                _stuck[path] = time.time()
        self._helper = None
        return Prepared(
            path=path,
            error=f"not read within {budget:g} s; left to finish on its own, what the index holds of it "
            "is kept and it is read again at the next update",
        )

    def close(self) -> None:
        """End the helper thread (waited for: a process that forks reading workers later
        forks best with no other thread running)."""
        if self._helper is not None:
            self._helper.inbox.put(None)
            self._helper.thread.join(1.0)
            self._helper = None


#: The reader of this worker process (made in the process that uses it: threads do not
#: survive a fork).
_worker: tuple[int, TimedReader] | None = None


def run_jobs(raw: bytes) -> bytes:
    """The worker-process entry point: a msgpack list of Jobs in, a list of Prepared out (in
    the same order), each unit read under the budget."""
    global _worker
    if _worker is None or _worker[0] != os.getpid():
        _worker = (os.getpid(), TimedReader())
    reader = _worker[1]
    jobs = _jobs.decode(raw)
    return _msgpack.encode([_prepare.encoded(reader(msgspec.structs.replace(job, unit=unit_real(job.unit)))) for job in jobs])
