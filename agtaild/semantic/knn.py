"""Exact nearest neighbours over the vector store, in memory with numpy.

The int8 matrix is read once and then only its new rows (the store's chunk ids grow); a
deletion (the store's ``generation`` moved) reloads it. Scores are int8 · query × scale, done
in blocks so a large store never needs a float copy of itself (measured in bench/RESULTS.md).
"""

from __future__ import annotations

import threading
from typing import Any

from agtaild.semantic.store import VectorStore

#: Rows converted to float32 at a time: a block that stays in the cache (1024: 17 ms for 200k
#: rows here, against 480 ms converting 65536 at a time).
BLOCK = 1024


class Matrix:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.generation = -1
        self.last_id = 0
        self.vectors: Any = None  # int8, chunks × dimension
        self.scales: Any = None
        self.events: Any = None  # int64 event id of each row

    def refresh(self, store: VectorStore, dimension: int) -> None:
        import numpy as np

        with self._lock:
            generation = store.generation
            if generation != self.generation or self.vectors is None or self.vectors.shape[1] != dimension:
                self.generation, self.last_id = generation, 0
                self.vectors = np.zeros((0, dimension), dtype=np.int8)
                self.scales = np.zeros(0, dtype=np.float32)
                self.events = np.zeros(0, dtype=np.int64)
            rows = store.rows_after(self.last_id)
            if not rows:
                return
            blob = b"".join(r[3] for r in rows)
            new = np.frombuffer(blob, dtype=np.int8).reshape(len(rows), dimension)
            self.vectors = np.concatenate([self.vectors, new])
            self.scales = np.concatenate([self.scales, np.array([r[2] for r in rows], dtype=np.float32)])
            self.events = np.concatenate([self.events, np.array([r[1] for r in rows], dtype=np.int64)])
            self.last_id = rows[-1][0]

    def nearest_events(self, query: Any, want: int) -> list[tuple[int, float]]:
        """Up to ``want`` (event id, cosine) pairs, best first; an event scores by its best chunk."""
        import numpy as np

        with self._lock:
            vectors, scales, events = self.vectors, self.scales, self.events
        if vectors is None or not len(vectors):
            return []
        q = np.asarray(query, dtype=np.float32)
        scores = np.empty(len(vectors), dtype=np.float32)
        buf = np.empty((BLOCK, vectors.shape[1]), dtype=np.float32)
        for start in range(0, len(vectors), BLOCK):
            block = vectors[start : start + BLOCK]
            n = len(block)
            np.copyto(buf[:n], block, casting="unsafe")
            np.dot(buf[:n], q, out=scores[start : start + n])
        scores *= scales
        take = min(len(scores), max(want * 4, want + 16))
        while True:
            top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")]
            best: dict[int, float] = {}
            for i in top:
                eid = int(events[i])
                if eid not in best:
                    best[eid] = float(scores[i])
            if len(best) >= want or take >= len(scores):
                return list(best.items())[:want]
            take = min(len(scores), take * 4)
