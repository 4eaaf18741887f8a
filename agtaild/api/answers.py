"""Encoded stats answers, kept while nothing they depend on has changed.

A stats answer is a pure function of the index, the price table and the parameters — except
for a relative time bound ("7d", "today"), whose meaning moves with the clock. The viewer and
the scripts that poll it ask the same stats again and again between two index updates, so the
API keeps the encoded body of the last few, each under the service's ``data_version()`` token
taken *before* the answer was computed: any commit to the index, a new index file or another
price table makes a new token, and the next request computes the answer again. Computing it is
fast on its own (issue #13 figure 5 is measured without this cache); this saves the repeats.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

#: The methods whose answers are kept.
CACHED = frozenset({"stats"})
#: Time bounds that mean the same whenever they are asked: a calendar day.
_FIXED_BOUND = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Answers kept, and their bytes at most (by session is ~0.5 MB on the 200 MB corpus, ~10×
#: that at 2 GB); an answer over a quarter of the bytes is not kept.
SIZE = 16
BYTES = 32 << 20

Key = tuple[Any, ...]


def answer_key(method: str, ok: bool, params: dict[str, Any]) -> Key | None:
    """What identifies an answer, or None when it must be computed every time."""
    if method not in CACHED:
        return None
    items = []
    for name, value in sorted(params.items()):
        if value is not None and not isinstance(value, (str, int, float)):
            return None
        if name in ("since", "until") and value is not None and not _FIXED_BOUND.fullmatch(str(value)):
            return None
        items.append((name, type(value).__name__, value))  # 1, True and "1" are three answers
    return (method, ok, tuple(items))


class Answers:
    """The last :data:`SIZE` encoded answers, each with the version token it was computed at."""

    def __init__(self, size: int = SIZE, max_bytes: int = BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._bytes = 0
        self._items: OrderedDict[Key, tuple[Any, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        #: Answers served from here / computed, since the start (for tests and /health).
        self.hits = 0
        self.misses = 0

    def get(self, key: Key, version: Any) -> bytes | None:
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] != version:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[1]

    def put(self, key: Key, version: Any, body: bytes) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            if len(body) * 4 > self.max_bytes:
                return
            self._items[key] = (version, body)
            self._bytes += len(body)
            while len(self._items) > self.size or self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= len(dropped)
