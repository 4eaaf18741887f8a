"""The change feed between the one writer and every live stream.

The writer publishes each index update's changed sessions here; `changes` streams replay them
and `follow` streams wake up when their session is among them. Records carry ids of the form
``<boot>-<n>``: a reconnecting client sends the last one as ``Last-Event-ID`` and gets what it
missed, as long as it is still in the ring buffer and the daemon has not restarted; otherwise
it is told to reset (re-list) instead of silently missing changes.

Everything here runs on the event loop: no locks, only an asyncio.Condition.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

RING_SIZE = 20_000


@dataclass(frozen=True)
class Change:
    n: int
    agent: str
    id: str
    path: str
    action: str  # added | updated | removed

    def event_id(self, boot: str) -> str:
        return f"{boot}-{self.n}"

    def as_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "id": self.id, "path": self.path, "action": self.action}


class ChangeHub:
    def __init__(self, ring_size: int = RING_SIZE) -> None:
        self.boot = secrets.token_hex(4)
        self._ring: deque[Change] = deque(maxlen=ring_size)
        self._n = 0
        self._cond = asyncio.Condition()
        self.closed = False
        self.subscribers = 0

    @property
    def last(self) -> int:
        return self._n

    async def publish(self, changed: Iterable[dict[str, Any]]) -> int:
        """Record an update's changed sessions and wake every waiting stream."""
        count = 0
        for c in changed:
            self._n += 1
            count += 1
            self._ring.append(
                Change(
                    self._n,
                    str(c.get("agent") or ""),
                    str(c.get("id") or ""),
                    str(c.get("path") or ""),
                    str(c.get("action") or "updated"),
                )
            )
        if count:
            async with self._cond:
                self._cond.notify_all()
        return count

    async def close(self) -> None:
        """Wake every stream so it can end (daemon shutdown)."""
        self.closed = True
        async with self._cond:
            self._cond.notify_all()

    def since(self, n: int) -> tuple[list[Change], bool]:
        """Changes after ``n``, and whether some were lost (older than the ring buffer)."""
        if n >= self._n:
            return [], False
        oldest = self._ring[0].n if self._ring else self._n + 1
        lost = n + 1 < oldest
        return [c for c in self._ring if c.n > n], lost

    def parse_event_id(self, value: str | None) -> int | None:
        """``Last-Event-ID`` → position in this boot's feed; None when it is from another boot
        or not one of ours (the client must reset)."""
        if not value:
            return None
        boot, _, n = value.strip().rpartition("-")
        if boot != self.boot or not n.isdigit():
            return None
        pos = int(n)
        return pos if pos <= self._n else None

    async def wait(self, after: int, timeout: float) -> bool:
        """Wait until something newer than ``after`` is published (True) or the timeout (False)."""
        if self._n > after or self.closed:
            return True
        async with self._cond:
            try:
                await asyncio.wait_for(self._cond.wait_for(lambda: self._n > after or self.closed), timeout)
            except TimeoutError:
                return False
        return True
