"""Watching the session roots: watchdog observers handed over to asyncio, with a polling fallback.

Observers run on their own threads. Their events are coalesced there into a set of paths and
handed to the event loop with one ``loop.call_soon_threadsafe`` per batch (not per event: an
agent appending fast produces thousands of IN_MODIFY events). Only events that can change a
transcript are subscribed to — never "opened", or our own reads would wake us forever.

Watchers miss events (queue overflows, network filesystems, inotify limits), so the writer
also rescans everything every few minutes. When inotify runs out of watches — at the root,
or silently below it, which watchdog swallows — that root falls back to a PollingObserver and
``status()`` says so (GET /api/v1/health shows it). Roots that do not exist yet are
re-checked on the writer's timer and watched once they appear.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from agtaild.fsnames import at_or_below

log = logging.getLogger("agtaild.daemon.watcher")

EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
MODES = ("auto", "native", "polling", "off")

#: sink(paths, vanished_dirs) runs on the event loop.
Sink = Callable[[set[str], set[str]], None]


@dataclass
class WatchRoot:
    """One watched place. A file root (an agent's SQLite DB) is watched through its parent
    directory, filtered to the file and its -wal/-journal companions."""

    path: str
    agent: str = ""
    mode: str = "pending"  # native | polling | missing | off | pending
    reason: str | None = None
    observer: BaseObserver | None = field(default=None, repr=False)
    is_file: bool = False

    def status(self) -> dict[str, Any]:
        return {"path": self.path, "agent": self.agent, "mode": self.mode, "reason": self.reason}


class _Collector:
    """Coalesces paths on the observer threads; drains them on the loop in one callback."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sink: Sink) -> None:
        self._loop = loop
        self._sink = sink
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._gone_dirs: set[str] = set()
        self._scheduled = False

    def add(self, paths: Iterable[str], gone_dirs: Iterable[str] = ()) -> None:
        with self._lock:
            self._paths.update(paths)
            self._gone_dirs.update(gone_dirs)
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:
            pass  # the loop is closing: the daemon is stopping

    def _drain(self) -> None:
        with self._lock:
            paths, self._paths = self._paths, set()
            gone, self._gone_dirs = self._gone_dirs, set()
            self._scheduled = False
        self._sink(paths, gone)


class _Handler(FileSystemEventHandler):
    def __init__(self, collector: _Collector, only: str | None = None) -> None:
        self._collector = collector
        self._only = only  # file root: only events for this file (and -wal/-journal)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type == "modified":
            return
        paths = [os.fsdecode(event.src_path)]
        if event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        if self._only is not None:
            paths = [p for p in paths if p.startswith(self._only)]
            if not paths:
                return
        gone = [paths[0]] if event.is_directory and event.event_type in ("deleted", "moved") else []
        self._collector.add(paths, gone)


def _watched_dirs(observer: BaseObserver) -> int | None:
    """How many directories inotify really watches (None when not knowable): watchdog drops
    watches it could not add below the root without telling anyone."""
    total = 0
    for emitter in list(observer.emitters):
        group = getattr(emitter, "_inotify", None)
        active = getattr(group, "_active_callbacks_by_path", None)
        if active is None:
            return None
        total += len(active)
    return total


def _count_dirs(path: str, limit: int = 1_000_000) -> int:
    count = 0
    for _dirpath, dirnames, _files in os.walk(path):
        count += 1
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(_dirpath, d))]
        if count >= limit:
            break
    return count


class Watcher:
    """Every root under watch; ``sink`` receives changed paths on the event loop."""

    def __init__(
        self,
        roots: Iterable[tuple[str, str]],
        sink: Sink,
        loop: asyncio.AbstractEventLoop,
        *,
        mode: str = "auto",
        poll_interval: float = 10.0,
        native_observer: Callable[[], BaseObserver] = Observer,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"watch mode must be one of {', '.join(MODES)}")
        self.mode = mode
        self.poll_interval = poll_interval
        self._native = native_observer
        self._collector = _Collector(loop, sink)
        self.roots = [WatchRoot(path=p, agent=a) for a, p in _outermost(roots)]
        self._lock = threading.Lock()

    # -- lifecycle (blocking: call from a thread, never on the loop) ------------------------
    def start(self) -> None:
        for root in self.roots:
            self._arm(root)

    def stop(self) -> None:
        with self._lock:
            observers = [r.observer for r in self.roots if r.observer is not None]
            for r in self.roots:
                r.observer = None
        for obs in observers:
            obs.stop()
        for obs in observers:
            obs.join(timeout=5)

    def recheck(self) -> list[str]:
        """Watch roots that appeared since; fall back to polling where inotify died.
        Returns the roots newly armed (the caller should scan them)."""
        appeared = []
        for root in self.roots:
            if root.mode == "missing" and os.path.exists(root.path):
                self._arm(root)
                if root.mode != "missing":
                    appeared.append(root.path)
            elif root.mode == "native" and root.observer is not None:
                dead = [e for e in list(root.observer.emitters) if not e.is_alive()]
                if dead or not root.observer.is_alive():
                    self._fallback(root, "the native watcher stopped unexpectedly")
                    appeared.append(root.path)
        return appeared

    def status(self) -> dict[str, Any]:
        modes = {r.mode for r in self.roots if r.mode not in ("missing",)}
        overall = "off" if self.mode == "off" else (modes.pop() if len(modes) == 1 else ("mixed" if modes else "idle"))
        reasons = sorted({r.reason for r in self.roots if r.mode == "polling" and r.reason})
        return {
            "mode": overall,
            "requested": self.mode,
            "poll_interval": self.poll_interval,
            "fallback_reason": "; ".join(reasons) or None,
            "roots": [r.status() for r in self.roots],
        }

    # -- one root -----------------------------------------------------------------------
    def _arm(self, root: WatchRoot) -> None:
        if self.mode == "off":
            root.mode, root.reason = "off", "watching is turned off (--watch off): periodic rescans only"
            return
        if not os.path.exists(root.path):
            root.mode, root.reason = "missing", "does not exist yet; checked again periodically"
            return
        root.is_file = not os.path.isdir(root.path)
        if self.mode == "polling":
            self._start(root, PollingObserver(timeout=self.poll_interval), "polling", "polling was requested (--watch polling)")
            return
        try:
            observer = self._native()
            self._schedule(root, observer)
            observer.start()
        except OSError as err:
            observer.stop()
            reason = _why(err)
            if self.mode == "native":
                root.mode, root.reason = "off", f"native watching failed: {reason}"
                log.error("cannot watch %s: %s", root.path, reason)
                return
            self._fallback(root, reason)
            return
        with self._lock:
            root.observer, root.mode, root.reason = observer, "native", None
        if not root.is_file:
            watched = _watched_dirs(observer)
            if watched is not None:
                expected = _count_dirs(root.path)
                if watched < expected:
                    time.sleep(0.2)  # a directory created meanwhile gets its watch a moment later
                    watched = _watched_dirs(observer) or 0
                if watched < expected:
                    self._fallback(
                        root,
                        f"inotify watch limit reached ({watched} of {expected} directories watched; "
                        "raise fs.inotify.max_user_watches)",
                    )

    def _fallback(self, root: WatchRoot, reason: str) -> None:
        log.warning("watching %s by polling every %ss: %s", root.path, self.poll_interval, reason)
        with self._lock:
            old, root.observer = root.observer, None
        if old is not None:
            old.stop()
        self._start(root, PollingObserver(timeout=self.poll_interval), "polling", reason)

    def _start(self, root: WatchRoot, observer: BaseObserver, mode: str, reason: str | None) -> None:
        self._schedule(root, observer)
        observer.start()
        with self._lock:
            root.observer, root.mode, root.reason = observer, mode, reason

    def _schedule(self, root: WatchRoot, observer: BaseObserver) -> None:
        if root.is_file:
            handler = _Handler(self._collector, only=root.path)
            observer.schedule(handler, str(Path(root.path).parent), recursive=False, event_filter=EVENT_FILTER)
        else:
            observer.schedule(_Handler(self._collector), root.path, recursive=True, event_filter=EVENT_FILTER)


def _why(err: OSError) -> str:
    if err.errno == errno.ENOSPC:
        return "inotify watch limit reached (raise fs.inotify.max_user_watches)"
    if err.errno == errno.EMFILE:
        return "inotify instance limit reached (raise fs.inotify.max_user_instances)"
    return f"{err.strerror or err}"


def _outermost(roots: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop roots inside other roots (a recursive watch already covers them), keep order."""
    items = []
    seen: set[str] = set()
    for agent, path in roots:
        norm = os.path.normpath(path)
        if norm not in seen:
            seen.add(norm)
            items.append((agent, norm))
    dirs = [p for _a, p in items]
    out = []
    for agent, path in items:
        if any(other != path and at_or_below(path, other) for other in dirs):
            continue
        out.append((agent, path))
    return out
