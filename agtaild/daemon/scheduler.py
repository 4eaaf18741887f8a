"""The one writer: turns watched paths into index updates, one at a time, off the event loop.

Paths arrive from the watcher (on the loop) and wait here, debounced per path: a path is
re-read once it has been quiet for ``debounce`` seconds, or ``max_delay`` after its first
change if it never goes quiet (an agent streaming a long answer). All due paths go to the
service in one ``update_index(only_paths=…)`` call on a dedicated thread, so a burst of a
thousand new files costs one transaction, not a thousand. A full scan of every root runs at
start, after a directory vanishes (its files are not reported one by one) and every
``rescan_interval`` seconds: watchers miss events, and this is the safety net.

Each update's changed sessions go to the change hub (SSE `changes`, and `follow` wake-ups).
While an update runs, :meth:`IndexWriter.progress` is its progress (units and bytes done and
left, rate, ETA, phase: agtaild.index.progress), which /health reports; None when idle.
On shutdown the update in flight is finished, so what it wrote is committed, and nothing
new starts.

When the writer is idle and the last update left events its secrets pass did not reach (a
first index: agtaild.index.findings), it runs the pass in short steps, each after any due
update; /health reports the pass (``index.secrets``: scanned, findings, pending).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from agtaild.api.hub import ChangeHub
from agtaild.index.memory import BIG_UPDATE_BYTES

log = logging.getLogger("agtaild.daemon.scheduler")

MAX_EXPANDED = 200_000
RETRY_AFTER_ERROR = 30.0
#: Seconds of one step of the background secrets pass (agtaild.index.findings): between steps
#: the writer looks at what the watcher noted first, so a first index's scan never holds up
#: an append.
SECRETS_STEP_SECONDS = 0.5


class Indexer(Protocol):
    def update_index(
        self, *, full: bool = False, only_paths: Iterable[str] | None = None, progress: Any = None
    ) -> dict[str, Any]: ...


class _Stop(Exception):
    """Raised from the progress callback to end a long update early at shutdown."""


class IndexWriter:
    def __init__(
        self,
        service: Indexer,
        hub: ChangeHub,
        *,
        debounce: float = 0.1,
        max_delay: float = 1.0,
        rescan_interval: float = 600.0,
        on_tick: Callable[[], list[str]] | None = None,
        tick_interval: float = 30.0,
        count_agents: Callable[[], dict[str, int]] | None = None,
    ) -> None:
        self.service = service
        self.hub = hub
        #: Called (on the loop, cheap calls only) after an update that changed sessions: search
        #: by meaning's embedder is woken here.
        self.after_update: list[Callable[[], None]] = []
        self.debounce = debounce
        self.max_delay = max_delay
        self.rescan_interval = rescan_interval
        self.on_tick = on_tick
        self.tick_interval = tick_interval
        #: Sessions per agent in the index, for the line the log gets when the first scan is done.
        self.count_agents = count_agents
        self._pending: dict[str, tuple[float, float]] = {}  # path → (first seen, last seen)
        self._scan: str | None = "scan"  # None | "scan" (every root) | "rebuild" (from scratch)
        self._waiters: list[asyncio.Future[dict[str, Any]]] = []
        self._wake = asyncio.Event()
        self._stopping = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agtaild-write")
        self._task: asyncio.Task[None] | None = None
        self.busy: str | None = None
        self.updates = 0
        self.errors = 0
        self.last_error: str | None = None
        self.last_update: float | None = None
        self.last_scan: float | None = None
        self.last_report: dict[str, Any] | None = None
        self._progress: Any = None  # the running update's IndexProgress (set on its thread)
        #: The secrets pass as the last update or step left it ({scanned, findings, pending}).
        self.secrets: dict[str, Any] | None = None

    # -- inputs (event loop only) ---------------------------------------------------------
    def note(self, paths: Iterable[str], gone_dirs: Iterable[str] = ()) -> None:
        """Paths that changed (from the watcher). A vanished directory asks for a full scan."""
        now = time.monotonic()
        for p in paths:
            first = self._pending.get(p, (now, now))[0]
            self._pending[p] = (first, now)
        if any(True for _ in gone_dirs):
            self._scan = self._scan or "scan"
        self._wake.set()

    async def request(self, *, full: bool = False) -> dict[str, Any]:
        """Run a scan of every root (``full``: rebuild from scratch) and return its report."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._scan = "rebuild" if full or self._scan == "rebuild" else "scan"
        self._wake.set()
        return await fut

    # -- the task -------------------------------------------------------------------------
    def start(self, *, after: asyncio.Event | None = None) -> None:
        """Start the task; its first scan waits for ``after`` when given (see daemon.local_parts)."""
        self._task = asyncio.get_running_loop().create_task(self._run(after), name="agtaild-writer")

    async def stop(self) -> None:
        """Finish the update in flight (so it is committed), then end."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await self._task
        for fut in self._waiters:
            if not fut.done():
                fut.set_exception(RuntimeError("the daemon is stopping"))
        await asyncio.to_thread(self._pool.shutdown, True)

    async def _run(self, after: asyncio.Event | None = None) -> None:
        if after is not None:
            await self._until(after)
        loop = asyncio.get_running_loop()
        next_full = time.monotonic() + self.rescan_interval
        next_tick = time.monotonic() + self.tick_interval
        while not self._stopping:
            now = time.monotonic()
            if self.on_tick is not None and now >= next_tick:
                next_tick = now + self.tick_interval
                appeared = await loop.run_in_executor(None, self.on_tick)
                if appeared:
                    self._scan = self._scan or "scan"
            if now >= next_full:
                self._scan = self._scan or "scan"
            if self._scan is not None:
                kind, self._scan = self._scan, None
                waiters, self._waiters = self._waiters, []
                started = time.monotonic()
                first_scan = self.last_scan is None
                report = await self._update(full=kind == "rebuild", paths=None)
                if first_scan and report is not None:
                    await self._log_first_scan(report)
                # Paths noted before the scan began are covered by it.
                self._pending = {p: t for p, t in self._pending.items() if t[1] >= started}
                next_full = time.monotonic() + self.rescan_interval
                if report is None:
                    next_full = min(next_full, time.monotonic() + RETRY_AFTER_ERROR)
                self._answer(waiters, report)
                # Not kept until the next scan: a first index's report lists every session it
                # read (65,509 changes at 10 GB), and the idle daemon would hold them all.
                del report, waiters
                continue
            # Paths almost due ride along: one transaction for a burst, not one per straggler.
            horizon = now + self.debounce / 2
            due = [
                p
                for p, (first, last) in self._pending.items()
                if min(last + self.debounce, first + self.max_delay) <= now
            ]
            if due:
                due = [
                    p
                    for p, (first, last) in self._pending.items()
                    if min(last + self.debounce, first + self.max_delay) <= horizon
                ]
            if due:
                for p in due:
                    del self._pending[p]
                if await self._update(full=False, paths=due) is None:
                    next_full = min(next_full, time.monotonic() + RETRY_AFTER_ERROR)
                continue
            if self._secrets_due():
                await self._secrets_step()
                continue
            wake_at = min(next_full, next_tick if self.on_tick else next_full)
            for first, last in self._pending.values():
                wake_at = min(wake_at, first + self.max_delay, last + self.debounce)
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), max(0.0, wake_at - time.monotonic()))
            except TimeoutError:
                pass

    def _answer(self, waiters: list[asyncio.Future[dict[str, Any]]], report: dict[str, Any] | None) -> None:
        """Give the scan's report (None: it failed) to those who asked for it."""
        for fut in waiters:
            if not fut.done():
                if report is None:
                    fut.set_exception(RuntimeError(self.last_error or "the update failed"))
                else:
                    fut.set_result(report)

    def _secrets_due(self) -> bool:
        s = self.secrets
        return bool(s and s.get("pending")) and hasattr(self.service, "scan_secrets") and not self._stopping

    async def _secrets_step(self) -> None:
        """One step of the background secrets pass on the writer thread."""
        self.busy = "secrets"
        loop = asyncio.get_running_loop()
        scan = self.service.scan_secrets  # type: ignore[attr-defined]
        try:
            step = await loop.run_in_executor(self._pool, lambda: scan(max_seconds=SECRETS_STEP_SECONDS))
        except Exception as err:
            self.last_error = f"secrets pass: {type(err).__name__}: {err}"
            log.exception("secrets pass failed")
            self.secrets = None  # tried again after the next update
            return
        finally:
            self.busy = None
        total = self.secrets or {}
        self.secrets = {
            "scanned": int(total.get("scanned") or 0) + int(step.get("scanned") or 0),
            "findings": int(total.get("findings") or 0) + int(step.get("findings") or 0),
            "pending": step.get("pending"),
        }
        release = getattr(self.service, "release_memory", None)
        if release is not None and not step.get("pending") and self.secrets["scanned"]:
            # The pass that follows a big update is over: the daemon idles from here, and what
            # the pass read (the writer connection's pages, the scanner's batches) goes back.
            await loop.run_in_executor(self._pool, release)

    async def _log_first_scan(self, report: dict[str, Any]) -> None:
        """One line when the daemon's first scan is done: until then a new install's lists are
        still filling, and the log should say when they are whole and how much they hold."""
        per_agent: dict[str, int] = {}
        if self.count_agents is not None:
            try:
                per_agent = await asyncio.get_running_loop().run_in_executor(self._pool, self.count_agents)
            except Exception as err:  # the line is for people; the index itself is fine
                log.debug("could not count the sessions per agent: %s", err)
        held = sorted(((n, a) for a, n in per_agent.items() if n), reverse=True)
        agents = f" of {len(held)} agent{'' if len(held) == 1 else 's'}" if per_agent else ""
        detail = f" ({', '.join(f'{a} {n}' for n, a in held)})" if held else ""
        sessions = int(report.get("sessions") or 0)
        log.info(
            "first index done: %d session%s%s%s in %.1f s",
            sessions,
            "" if sessions == 1 else "s",
            agents,
            detail,
            float(report.get("seconds") or 0.0),
        )

    async def _until(self, event: asyncio.Event) -> None:
        """Wait for ``event``, or for stop() (a daemon that failed to bind never sets it)."""
        while not event.is_set() and not self._stopping:
            self._wake.clear()
            waits = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(self._wake.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    async def _update(self, *, full: bool, paths: list[str] | None) -> dict[str, Any] | None:
        """One update_index on the writer thread; its changes go to the hub."""
        self.busy = "rebuild" if full else ("scan" if paths is None else "paths")
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(self._pool, self._update_blocking, full, paths)
        except _Stop:
            log.info("index update stopped early for shutdown")
            return None
        except Exception as err:
            self.errors += 1
            self.last_error = f"{type(err).__name__}: {err}"
            log.exception("index update failed")
            return None
        finally:
            self.busy = None
            self._progress = None
        self.updates += 1
        self.last_update = time.time()
        if paths is None:
            self.last_scan = self.last_update
        if isinstance(report.get("secrets"), dict):
            self.secrets = report["secrets"]
        changed = report.get("changed") or []
        self.last_report = {k: v for k, v in report.items() if k != "changed"} | {"changed": len(changed)}
        await self.hub.publish(changed)
        if changed:
            for after in self.after_update:
                after()
        return report

    def _update_blocking(self, full: bool, paths: list[str] | None) -> dict[str, Any]:
        def progress(tracker: Any = None, *_args: Any) -> None:
            if tracker is not None:
                self._progress = tracker
            if self._stopping:
                raise _Stop()

        only = None if paths is None else expand_dirs(paths)
        report: dict[str, Any] = self.service.update_index(full=full, only_paths=only, progress=progress)
        tracker = self._progress
        release = getattr(self.service, "release_memory", None)
        if release is not None and tracker is not None and tracker.bytes_total >= BIG_UPDATE_BYTES:
            release()  # an idle daemon is not as big as its first index (agtaild.index.memory)
        return report

    def progress(self) -> dict[str, Any] | None:
        """The running update's progress (/health ``progress``), or None when idle."""
        tracker = self._progress
        if tracker is None or self.busy is None:
            return None
        snapshot: dict[str, Any] = tracker.snapshot()
        return snapshot

    def status(self) -> dict[str, Any]:
        return {
            "state": self.busy or "idle",
            "pending_paths": len(self._pending),
            "updates": self.updates,
            "errors": self.errors,
            "last_error": self.last_error,
            "last_update": self.last_update,
            "last_scan": self.last_scan,
            "rescan_interval": self.rescan_interval,
            "last_report": self.last_report,
            "secrets": self.secrets,
        }


def expand_dirs(paths: Iterable[str]) -> list[str]:
    """A directory that appeared (created or moved in) stands for every file below it."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, _dirs, files in os.walk(p):
                out.extend(os.path.join(dirpath, f) for f in files)
                if len(out) > MAX_EXPANDED:
                    break
        else:
            out.append(p)
    return sorted(set(out))
