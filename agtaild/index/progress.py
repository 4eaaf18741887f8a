"""How far a running index update is: what /health, the viewer and `agtail index` show.

The updater (agtaild.index.update) owns one :class:`IndexProgress` per update and hands it to
its ``progress`` callback at each phase change and after every unit it stores. The callback
runs on the updater's thread; other threads (the daemon's /health) read :meth:`snapshot`,
which copies plain numbers, so no lock is needed: a reader may see a unit counted in
``files_done`` a moment before its bytes, never a torn value.

Phases: ``scanning`` (listing the roots and comparing fingerprints), ``reading`` (reading the
changed units and storing them, newest first) and ``finishing`` (the last commit, which also
re-counts usage). Counts are of units (one transcript, with its sidecar files) and of the
bytes to read (an append counts only the appended bytes).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

#: The rate is measured over the reading phase; before this many seconds of it, no ETA.
MIN_RATE_SECONDS = 0.5
#: The rate is that of the last quarter of the reading so far (at least RECENT_MIN_SECONDS of
#: it), not of all of it: a shared machine's load moves, and an ETA from the whole average kept
#: the speed of the start. Measured on the 10 GB bench corpus (bench/RESULTS.md), the load
#: falling from ~10 to ~2 during the index: at half way the whole average said 778 s for the
#: 550 s left (+41 %); the last quarter, replayed on the same samples, 562 s (+2 %).
RECENT_SHARE = 0.25
RECENT_MIN_SECONDS = 5.0


class IndexProgress:
    """Counters of one update (see the module docstring)."""

    def __init__(self, kind: str = "update") -> None:
        #: "update", "rebuild" (reindex) or "paths" (the watcher's changed files).
        self.kind = kind
        self.phase = "scanning"
        self.started = time.time()
        self._t0 = time.monotonic()
        self._reading_since: float | None = None
        self.files_done = 0
        self.files_total = 0
        self.bytes_done = 0
        self.bytes_total = 0
        #: (monotonic time, bytes done) after a stored unit, at most one a second: the rate's window.
        self._times: list[float] = []
        self._bytes: list[int] = []

    def reading(self, files_total: int, bytes_total: int) -> None:
        self.files_total, self.bytes_total = files_total, bytes_total
        self._reading_since = time.monotonic()
        self.phase = "reading"

    def stored(self, cost: int) -> None:
        """One more unit read and stored; ``cost`` its bytes."""
        self.bytes_done += cost
        self.files_done += 1
        now = time.monotonic()
        if not self._times or now - self._times[-1] >= 1.0:
            self._times.append(now)
            self._bytes.append(self.bytes_done)

    def finishing(self) -> None:
        self.phase = "finishing"

    def rate(self) -> float | None:
        """Bytes per second over the last quarter of the reading so far (see RECENT_SHARE;
        None before it means anything)."""
        if self._reading_since is None:
            return None
        now = time.monotonic()
        elapsed = now - self._reading_since
        if elapsed < MIN_RATE_SECONDS or self.bytes_done <= 0:
            return None
        since = now - max(RECENT_MIN_SECONDS, RECENT_SHARE * elapsed)
        at = bisect.bisect_left(self._times, since)
        if (
            since > self._reading_since
            and at < len(self._times)
            and now - self._times[at] >= MIN_RATE_SECONDS
        ):
            done = self.bytes_done - self._bytes[at]
            if done > 0:
                return done / (now - self._times[at])
        return self.bytes_done / elapsed

    def snapshot(self) -> dict[str, Any]:
        """The /health ``progress`` object (docs/api.md)."""
        rate = self.rate()
        left = max(self.bytes_total - self.bytes_done, 0)
        eta = None
        if self.phase == "reading" and rate:
            eta = round(left / rate, 1)
        elif self.phase == "finishing":
            eta = 0.0
        return {
            "kind": self.kind,
            "phase": self.phase,
            "files_done": self.files_done,
            "files_total": self.files_total,
            "bytes_done": self.bytes_done,
            "bytes_total": self.bytes_total,
            "rate_bytes_per_second": None if rate is None else round(rate),
            "eta_seconds": eta,
            "elapsed_seconds": round(time.monotonic() - self._t0, 3),
            "started": round(self.started, 3),
        }


#: The updater's callback: called with the update's progress at each change of it.
Progress = Callable[[IndexProgress], None]
