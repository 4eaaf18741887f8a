"""Search by meaning, put together: the settings, the embedder, the store, status and building.

One :class:`Engine` per data dir (the service keeps it). ``build`` embeds what the store has
not seen yet, newest events first, in batches, each committed on its own: stopping at any
point loses at most a batch, and the next build resumes. :class:`Background` runs builds on a
thread at the lowest CPU priority, after each index commit it is told of, and backs off after
a failure (30 s doubling to 30 min) so a dead endpoint costs nothing.

Failures never reach full-text search: they are recorded here, shown by ``status()`` (in
/health, ``agtail embeddings status`` and doctor), and a query in semantic mode gets the error.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.semantic.backends import open_embedder
from agtaild.semantic.embedders import Embedder, EmbedError
from agtaild.semantic.knn import Matrix
from agtaild.semantic.settings import Settings, load_settings, settings_path
from agtaild.semantic.store import FILE_NAME, VectorStore

log = logging.getLogger("agtaild.semantic")

BATCH_EVENTS = 256
FIRST_BACKOFF = 30.0
MAX_BACKOFF = 1800.0


class Engine:
    def __init__(
        self,
        data_dir: str | Path,
        index_path: str | Path,
        *,
        embedder_factory: Callable[[Settings], Embedder] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.index_path = Path(index_path)
        self._factory = embedder_factory or (lambda s: open_embedder(s, self.data_dir))
        self._lock = threading.RLock()
        self._stamp: Any = None
        self._settings = Settings()
        self._settings_error: str | None = None
        self._embedder: Embedder | None = None
        self._store: VectorStore | None = None
        self.matrix = Matrix()
        self.state = "idle"
        self.error: str | None = None
        #: How many times a build or a query failed. A build clears the error only when it had
        #: the endpoint embed something and no failure came while it ran (a build that found
        #: nothing to embed proved nothing, and a query may have failed meanwhile).
        self._failures = 0
        self.retry_at: float | None = None
        self.rate: float | None = None
        self.last_build: float | None = None
        self._status_cache: tuple[float, dict[str, Any]] | None = None
        #: Bumped by every change the status shows (:meth:`_changed`): a status computed across
        #: one is not kept, or /health would show the state before it for up to 5 s.
        self._generation = 0
        #: One build at a time (the daemon's embedder and a request may both ask for one).
        self._build_lock = threading.Lock()

    # -- settings and parts -----------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The settings, read again whenever semantic.json changed (no restart needed)."""
        path = settings_path(self.data_dir)
        try:
            st = path.stat()
            stamp: Any = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                self._embedder = None
                self._changed()
                try:
                    self._settings, self._settings_error = load_settings(self.data_dir), None
                except AgtailError as exc:
                    self._settings, self._settings_error = Settings(), str(exc)
            return self._settings

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    def embedder(self) -> Embedder:
        settings = self.settings
        with self._lock:
            if self._embedder is None:
                embedder = self._factory(settings)
                probe = getattr(embedder, "probe", None)
                if probe is not None:
                    probe()
                self._embedder = embedder
            return self._embedder

    def store(self) -> VectorStore:
        with self._lock:
            if self._store is None:
                self._store = VectorStore(self.data_dir / FILE_NAME, self.index_path)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _changed(self) -> None:
        self._generation += 1
        self._status_cache = None

    def _failed(self, exc: BaseException) -> None:
        self.error = str(exc) or exc.__class__.__name__
        self._failures += 1
        self._changed()

    # -- building -------------------------------------------------------------------------
    def build(
        self,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[dict[str, Any]], None] | None = None,
        pace: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """Embed every event the store has not seen; returns the status after."""
        with self._build_lock:
            return self._build(stop, progress, pace)

    def _build(
        self,
        stop: threading.Event | None,
        progress: Callable[[dict[str, Any]], None] | None,
        pace: Callable[[int], None] | None,
    ) -> dict[str, Any]:
        if not self.enabled:
            raise EmbedError(
                self._settings_error
                or "search by meaning is off: no backend in " + str(settings_path(self.data_dir))
            )
        try:
            embedder = self.embedder()
        except EmbedError as exc:
            self._failed(exc)
            raise
        store = self.store()
        if store.use_model(embedder.model_id, embedder.dimension):
            log.info("vector store emptied for model %s", embedder.model_id)
        self.state, started, done = "building", time.monotonic(), 0
        failures = self._failures
        try:
            with store.attached() as db:
                store.drop_stale(db)
            below: int | None = None
            while not (stop is not None and stop.is_set()):
                from agtaild.semantic.texts import read_pieces

                with store.attached() as db:
                    ids = store.pending(db, below, BATCH_EVENTS)
                    if not ids:
                        break
                    pieces, seen = read_pieces(db, ids)
                below = min(ids)
                vectors = embedder.embed([p.text for p in pieces]) if pieces else None
                store.add(seen, [(p.event_id, p.chunk) for p in pieces], vectors)
                done += len(pieces)
                self.rate = done / max(1e-6, time.monotonic() - started)
                self._changed()
                if progress is not None:
                    progress(self.status())
                if pace is not None:
                    pace(len(pieces))
            if done and self._failures == failures:
                self.error, self.retry_at = None, None
        except EmbedError as exc:
            self._failed(exc)
            raise
        finally:
            self.state = "idle"
            self.last_build = time.time()
            self._changed()
        return self.status()

    # -- searching ------------------------------------------------------------------------
    def query_vector(self, text: str) -> Any:
        """The masked query's vector (one try: a search does not wait out a backoff)."""
        from agtaild import secrets

        embedder = self.embedder()
        masked = secrets.mask(text)
        embed = getattr(embedder, "embed_query", None) or embedder.embed
        try:
            vec = embed([masked])
        except EmbedError as exc:
            self._failed(exc)
            raise
        if self.error is not None and self.state != "building":
            self.error = None  # it answers again
            self._changed()
        return vec[0]

    def nearest(self, text: str, want: int) -> list[tuple[int, float]]:
        """(event id, cosine) of the events nearest ``text``, best first."""
        store = self.store()
        embedder = self.embedder()
        if store.model_id != embedder.model_id:
            raise EmbedError("the vectors are another model's and are being rebuilt")
        self.matrix.refresh(store, embedder.dimension)
        return self.matrix.nearest_events(self.query_vector(text), want)

    def warm(self) -> None:
        """Load the store's new vectors into memory and make the search's lists when it is
        large (agtaild.semantic.knn): the daemon's embedder does it after each build, so that
        a query finds the matrix ready."""
        store = self.store()
        dimension = int(store.meta("dimension") or 0)
        if store.model_id is None or not dimension:
            return
        self.matrix.refresh(store, dimension, partition=True)

    # -- status ---------------------------------------------------------------------------
    def status(self, *, events_total: Callable[[], int] | None = None, fresh: bool = True) -> dict[str, Any]:
        """The backend, model, coverage and health, as /health, doctor and the CLI show them."""
        now = time.monotonic()
        generation = self._generation
        cached = self._status_cache
        if not fresh and cached is not None and now - cached[0] < 5:
            return cached[1]
        settings = self.settings
        doc: dict[str, Any] = {"enabled": settings.enabled, "backend": settings.backend}
        if self._settings_error:
            doc.update(state="error", error=self._settings_error, healthy=False, ready=False)
            return doc
        if not settings.enabled:
            doc.update(state="off", healthy=False, ready=False)
            return doc
        store = self.store()
        seen, chunks = store.counts()
        total = events_total() if events_total is not None else _count_events(self.index_path)
        # The embedder as opened (status never opens one: that may ask an endpoint).
        model = self._embedder.model_id if self._embedder is not None else store.model_id
        healthy = self.error is None and model is not None and model == store.model_id
        coverage = 1.0 if total == 0 else min(1.0, seen / total)
        doc.update(
            state="error" if self.error else self.state,
            error=self.error,
            model=model,
            dimension=int(store.meta("dimension") or 0) or None,
            events=total,
            events_embedded=seen if model == store.model_id else 0,
            coverage=round(coverage if model == store.model_id else 0.0, 4),
            chunks=chunks,
            rate=round(self.rate, 1) if self.rate else None,
            store_bytes=store.size_bytes(),
            lists=self.matrix.partition.lists if self.matrix.partition is not None else 0,
            healthy=healthy,
            ready=healthy and seen >= total,
        )
        if self.retry_at is not None:
            doc["retry_in"] = max(0, round(self.retry_at - time.monotonic()))
        if generation == self._generation:  # nothing changed while it was made
            self._status_cache = (now, doc)
        return doc


def _count_events(index_path: Path) -> int:
    import sqlite3
    from urllib.parse import quote

    try:
        db = sqlite3.connect(f"file:{quote(str(index_path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    try:
        return int(db.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        db.close()


class Background:
    """Builds on a thread of its own at the lowest priority: when nudged, and when the index
    file changed since the last build (checked every ``idle_check`` seconds)."""

    def __init__(
        self,
        engine: Callable[[], Engine | None],
        *,
        idle_check: float = 60.0,
        first_backoff: float = FIRST_BACKOFF,
    ) -> None:
        self.engine = engine
        self.idle_check = idle_check
        self.first_backoff = first_backoff
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._built_stamp: Any = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agtaild-embedder", daemon=True)
        self._thread.start()
        self._wake.set()

    def nudge(self) -> None:
        self._built_stamp = None
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _pace(self, texts: int) -> None:
        engine = self.engine()
        per_hour = engine.settings.texts_per_hour if engine is not None else None
        time.sleep(0.01)  # give the index writer the GIL between batches
        if per_hour:
            self._stop.wait(texts * 3600.0 / per_hour)

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread only (Linux)
        backoff = self.first_backoff
        while not self._stop.is_set():
            self._wake.wait(self.idle_check)
            self._wake.clear()
            engine = self.engine()
            if self._stop.is_set() or engine is None or not engine.enabled:
                continue
            stamp = (_index_stamp(engine.index_path), engine.settings)
            if stamp == self._built_stamp:
                continue
            try:
                engine.build(stop=self._stop, pace=self._pace)
                if not self._stop.is_set():
                    engine.warm()
                self._built_stamp = stamp
                backoff = self.first_backoff
                continue
            except EmbedError as exc:
                log.warning("embedding failed (%s); trying again in %.0f s", exc, backoff)
            except Exception as exc:
                log.exception("the background embedder failed; full-text search is unaffected")
                engine._failed(exc)
            engine.retry_at = time.monotonic() + backoff
            if self._stop.wait(backoff):
                break
            backoff = min(MAX_BACKOFF, backoff * 2)
            self._wake.set()


def _index_stamp(index_path: Path) -> tuple[int, ...]:
    """Moves whenever the index is written (its file or its WAL)."""
    stamp: list[int] = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(index_path) + suffix)
            stamp += [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            stamp += [0, 0, 0]
    return tuple(stamp)
