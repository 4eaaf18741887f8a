"""Nearest neighbours over the vector store, in memory with numpy.

The int8 matrix is read once (in pages, into arrays that grow by doubling) and then only its
new rows (the store's chunk ids grow); a deletion (the store's ``generation`` moved) reloads
it. Scores are int8 · query × scale, done in blocks so a large store never needs a float copy
of itself.

Up to ``PARTITION_MIN_ROWS`` rows every search is exact. Above, once :meth:`Matrix.refresh` is
asked to ``partition`` (the daemon's embedder does, after a build, at low priority; a one-shot
CLI search never pays for it), the rows are split into ``≈ √rows`` lists by spherical k-means
(an inverted file), the matrix is rearranged in list order, and a search scores only the rows
of the lists whose centroids are nearest the query, plus every row added since the lists were
made. Measured against the exact search
on the 2 GB corpus in bench/RESULTS.md (speed and recall).
"""

from __future__ import annotations

import math
import threading
from typing import Any

from agtaild.semantic.store import VectorStore

#: Rows converted to float32 at a time: a block that stays in the cache (1024: 17 ms for 200k
#: rows here, against 480 ms converting 65536 at a time).
BLOCK = 1024
#: Rows read from the store at a time while loading.
PAGE = 65536
#: Below this many rows a search is exact (200k rows: 17–43 ms here).
PARTITION_MIN_ROWS = 150_000
#: The share of the lists a search reads (their nearest centroids first).
PROBE_SHARE = 1 / 16
#: Rows added since the lists were made, as a share of those in them, before they are made again.
REBUILD_SHARE = 0.25
KMEANS_ROUNDS = 6
KMEANS_SAMPLE_PER_LIST = 48


class Partition:
    """An inverted file: unit centroids, and the matrix rows of each centroid's list. Once it
    is in use the matrix's first ``rows`` rows are kept in list order, so that list ``i`` is
    the contiguous rows ``starts[i]:starts[i + 1]`` (a search reads slices, never gathers)."""

    def __init__(self, centroids: Any, order: Any, starts: Any, rows: int) -> None:
        self.centroids = centroids  # float32, lists × dimension
        self.order = order  # the rows, grouped by list: the rearrangement to apply to the matrix
        self.starts = starts  # list i holds order[starts[i]:starts[i + 1]]
        self.rows = rows  # the matrix rows it covers: 0 … rows-1

    @property
    def lists(self) -> int:
        return len(self.centroids)

    def spans(self, q: Any, total_rows: int) -> list[tuple[int, int]]:
        """(start, stop) row ranges to score for the query ``q``, in a matrix in list order:
        the nearest lists and every newer row."""
        import numpy as np

        probe = max(1, math.ceil(self.lists * PROBE_SHARE))
        near = np.sort(np.argpartition(-(self.centroids @ q), probe - 1)[:probe])
        spans: list[tuple[int, int]] = []
        for a, b in zip(self.starts[near].tolist(), self.starts[near + 1].tolist(), strict=True):
            if b <= a:
                continue
            if spans and spans[-1][1] == a:  # neighbouring lists: one span (one scoring call)
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
        if total_rows > self.rows:
            spans.append((self.rows, total_rows))
        return spans


def _int8_dots() -> Any:
    """numkong's SIMD int8 dot products (the ``semantic`` extra), or None: then numpy."""
    global _NUMKONG
    if _NUMKONG is None:
        try:
            import numkong

            _NUMKONG = numkong
        except ImportError:  # an install without it: the numpy blocks below
            _NUMKONG = False
    return _NUMKONG or None


_NUMKONG: Any = None


def _scores(vectors: Any, scales: Any, spans: list[tuple[int, int]], q: Any, *, exact: bool) -> Any:
    """The cosine of ``q`` with every row of ``spans``, in span order.

    With numkong, the query is rounded to int8 too and the rows' int8 products are summed in
    integers (no float copy of the rows: 0.9 against 3.3 ms for 59k rows here); ``exact``
    keeps the float query (numpy, in blocks)."""
    import numpy as np

    total = sum(b - a for a, b in spans)
    scores = np.empty(total, dtype=np.float32)
    nk = None if exact else _int8_dots()
    peak = float(np.abs(q).max()) if len(q) else 0.0
    if nk is not None and peak > 0:
        step = peak / 127.0
        qi = np.clip(np.rint(q / step), -127, 127).astype(np.int8)[None, :]
        at = 0
        for a, b in spans:
            n = b - a
            scores[at : at + n] = np.asarray(nk.cdist(qi, vectors[a:b], metric="dot")).reshape(n)
            scores[at : at + n] *= scales[a:b]
            at += n
        scores *= step
        return scores
    buf = np.empty((BLOCK, vectors.shape[1]), dtype=np.float32)
    at = 0
    for a, b in spans:
        for start in range(a, b, BLOCK):
            n = min(BLOCK, b - start)
            np.copyto(buf[:n], vectors[start : start + n], casting="unsafe")
            np.dot(buf[:n], q, out=scores[at : at + n])
            scores[at : at + n] *= scales[start : start + n]
            at += n
    return scores


def _unit_rows(block: Any) -> Any:
    import numpy as np

    out = block.astype(np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out /= norms
    return out


def _nearest_centroid(vectors: Any, centroids: Any, start: int, stop: int) -> Any:
    import numpy as np

    out = np.empty(stop - start, dtype=np.int32)
    step = 16384
    ct = np.ascontiguousarray(centroids.T)
    for s in range(start, stop, step):
        e = min(stop, s + step)
        out[s - start : e - start] = np.argmax(vectors[s:e].astype(np.float32) @ ct, axis=1)
    return out


def _grouped(centroids: Any, assign: Any, rows: int) -> Partition:
    import numpy as np

    order = np.argsort(assign, kind="stable").astype(np.int64)
    starts = np.searchsorted(assign[order], np.arange(len(centroids) + 1)).astype(np.int64)
    return Partition(centroids, order, starts, rows)


def build_partition(vectors: Any, *, seed: int = 1) -> Partition:
    """Spherical k-means over a sample of the rows (deterministic for a given matrix), then
    every row to its nearest centroid."""
    import numpy as np

    rows, dim = vectors.shape
    lists = max(16, min(4096, int(math.sqrt(rows))))
    rng = np.random.default_rng(seed)
    sample_n = min(rows, lists * KMEANS_SAMPLE_PER_LIST)
    sample = _unit_rows(vectors[np.sort(rng.choice(rows, sample_n, replace=False))])
    centroids = sample[rng.choice(sample_n, lists, replace=False)].copy()
    for _ in range(KMEANS_ROUNDS):
        assign = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros((lists, dim), dtype=np.float32)
        np.add.at(sums, assign, sample)
        counts = np.bincount(assign, minlength=lists)
        empty = np.flatnonzero(counts == 0)
        if len(empty):  # an empty list starts again from a row of the sample
            sums[empty] = sample[rng.choice(sample_n, len(empty), replace=False)]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        centroids = (sums / norms).astype(np.float32)
    return _grouped(centroids, _nearest_centroid(vectors, centroids, 0, rows), rows)


def extend_partition(part: Partition, vectors: Any) -> Partition:
    """The lists again with the rows added since ``part`` was made (its centroids kept); the
    matrix's first ``part.rows`` rows are in ``part``'s list order."""
    import numpy as np

    rows = len(vectors)
    assign = np.empty(rows, dtype=np.int32)
    assign[: part.rows] = np.repeat(np.arange(part.lists, dtype=np.int32), np.diff(part.starts))
    assign[part.rows :] = _nearest_centroid(vectors, part.centroids, part.rows, rows)
    return _grouped(part.centroids, assign, rows)


class Matrix:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partition_lock = threading.Lock()
        self.generation = -1
        self.last_id = 0
        self.rows = 0
        self._vectors: Any = None  # int8, capacity × dimension (the first ``rows`` are used)
        self._scales: Any = None
        self._events: Any = None  # int64 event id of each row
        self.partition: Partition | None = None

    @property
    def vectors(self) -> Any:
        return None if self._vectors is None else self._vectors[: self.rows]

    @property
    def scales(self) -> Any:
        return None if self._scales is None else self._scales[: self.rows]

    @property
    def events(self) -> Any:
        return None if self._events is None else self._events[: self.rows]

    def _grow(self, need: int, dimension: int) -> None:
        import numpy as np

        have = 0 if self._vectors is None else len(self._vectors)
        if need <= have:
            return
        cap = max(need, have * 2, 1024)
        vectors = np.zeros((cap, dimension), dtype=np.int8)
        scales = np.zeros(cap, dtype=np.float32)
        events = np.zeros(cap, dtype=np.int64)
        if self.rows:
            vectors[: self.rows] = self._vectors[: self.rows]
            scales[: self.rows] = self._scales[: self.rows]
            events[: self.rows] = self._events[: self.rows]
        # Readers hold references to the arrays they took (and ``rows`` with them): swapping in
        # new arrays never changes what a running search reads.
        self._vectors, self._scales, self._events = vectors, scales, events

    def refresh(self, store: VectorStore, dimension: int, *, partition: bool = False) -> None:
        """Read the store's new rows; with ``partition``, also make (or extend) the lists when
        the matrix is large enough."""
        import numpy as np

        with self._lock:
            generation = store.generation
            if generation != self.generation or self._vectors is None or self._vectors.shape[1] != dimension:
                self.generation, self.last_id, self.rows = generation, 0, 0
                self._vectors = self._scales = self._events = None
                self.partition = None
                self._grow(0, dimension)
            while True:
                page = store.rows_after(self.last_id, PAGE)
                if not page:
                    break
                n = len(page)
                self._grow(self.rows + n, dimension)
                blob = b"".join(r[3] for r in page)
                at = self.rows
                self._vectors[at : at + n] = np.frombuffer(blob, dtype=np.int8).reshape(n, dimension)
                self._scales[at : at + n] = np.fromiter((r[2] for r in page), dtype=np.float32, count=n)
                self._events[at : at + n] = np.fromiter((r[1] for r in page), dtype=np.int64, count=n)
                self.rows += n
                self.last_id = page[-1][0]
                if n < PAGE:
                    break
            vectors, part, generation = self.vectors, self.partition, self.generation
        if not partition or vectors is None or len(vectors) < PARTITION_MIN_ROWS:
            return
        if part is not None and len(vectors) - part.rows <= REBUILD_SHARE * part.rows:
            return
        with self._partition_lock:  # outside the matrix lock: searches go on meanwhile
            if part is None or len(vectors) > 4 * part.rows:
                made = build_partition(vectors)
            else:
                made = extend_partition(part, vectors)
            with self._lock:
                if self.generation == generation and self.rows >= made.rows:
                    self._rearrange(made)

    def _rearrange(self, part: Partition) -> None:
        """Put the first ``part.rows`` rows in ``part``'s list order, in new arrays (a running
        search keeps the arrays and the partition it took, which agree)."""
        import numpy as np

        n, order = part.rows, part.order
        arrays = []
        for old in (self._vectors, self._scales, self._events):
            new = np.empty_like(old)
            new[:n] = old[:n][order]
            new[n : self.rows] = old[n : self.rows]
            arrays.append(new)
        self._vectors, self._scales, self._events = arrays
        self.partition = part

    def nearest_events(self, query: Any, want: int, *, exact: bool = False) -> list[tuple[int, float]]:
        """Up to ``want`` (event id, cosine) pairs, best first; an event scores by its best chunk."""
        import numpy as np

        with self._lock:
            vectors, scales, events, part = self.vectors, self.scales, self.events, self.partition
        if vectors is None or not len(vectors):
            return []
        q = np.asarray(query, dtype=np.float32)
        spans = [(0, len(vectors))] if exact or part is None else part.spans(q, len(vectors))
        scores = _scores(vectors, scales, spans, q, exact=exact)
        # a score's place → its row: spans are laid end to end in ``scores``
        firsts = np.array([a for a, _ in spans], dtype=np.int64)
        places = np.cumsum([0] + [b - a for a, b in spans[:-1]]).astype(np.int64)
        take = min(len(scores), max(want * 4, want + 16))
        while True:
            top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")]
            span = np.searchsorted(places, top, side="right") - 1
            best: dict[int, float] = {}
            for eid, score in zip(
                events[firsts[span] + top - places[span]].tolist(), scores[top].tolist(), strict=True
            ):
                if eid not in best:
                    best[eid] = score
            if len(best) >= want or take >= len(scores):
                return list(best.items())[:want]
            take = min(len(scores), take * 4)
