"""The service every front end calls: the CLI in-process, the daemon's REST and JSON-RPC, sync.

``Service.call(method, params)`` maps a method name (the JSON-RPC names of CONTRACT.md) to a
JSON-able dict through the dispatch table ``METHODS`` (agtaild.query.methods).

Threads: ``call`` may run on many threads at once. Each thread reads through its own
connection (thread-local), and SQLite's WAL mode means a reader never waits for the writer.
``update_index`` — the only writer — is serialized by a lock.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agtaild.config import Config
from agtaild.errors import NotFound, UsageError, unknown_agent
from agtaild.index.keeper import IndexKeeper
from agtaild.index.storage import problem_of
from agtaild.query.archiving import archive_hook, archive_view_hook
from agtaild.query.masking import mask_answer
from agtaild.query.methods import METHODS


class Service:
    def __init__(self, config: Config, *, workers: int | None = None) -> None:
        self.config = config
        self.workers = workers
        #: Called after each native unit is read and stored: (adapter, unit, root). The archive
        #: mirror appends its copy function here, so every native file read is mirrored.
        self.after_native_read: list[Callable[..., None]] = [archive_hook(config)]
        #: Called before discovery: the archive writes back the files agents deleted.
        self.before_discovery: list[Callable[..., None]] = [archive_view_hook(config)]
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        #: A connection of its own that only reads SQLite's data_version (see data_version()).
        self._probe: sqlite3.Connection | None = None
        self._probe_generation = -1
        self._probe_lock = threading.Lock()
        self.index = IndexKeeper(Path(config.data_dir), config.index_path)
        self._state: Any = None
        self._semantic: Any = None
        #: The daemon's background embedder (agtaild.semantic.engine.Background), if it runs one.
        self.embedder: Any = None
        #: Called (from any thread) after the index was repaired, instead of refilling it
        #: inline: the daemon points it at its writer, so a request never waits for a rebuild.
        self.on_repaired: Callable[[], None] | None = None
        if not self.index.read_only:
            with self._write_lock:
                self._check_timezone()

    @property
    def state(self) -> Any:
        """The user's own state (agtaild.userstate), opened when first asked for."""
        if self._state is None:
            from agtaild.userstate.store import UserState

            self._state = UserState(self.config.data_dir)
        return self._state

    @property
    def semantic(self) -> Any:
        """Search by meaning (agtaild.semantic.engine.Engine) once ``semantic.json`` exists in
        the data dir, else None: nothing of it is imported or opened until then."""
        if self._semantic is None:
            from agtaild.semantic.settings import settings_path

            if not settings_path(self.config.data_dir).exists():
                return None
            from agtaild.semantic.engine import Engine

            self._semantic = Engine(self.config.data_dir, self.config.index_path)
        return self._semantic

    @property
    def _db(self) -> sqlite3.Connection:
        """The writer connection (reopened by the keeper after a repair)."""
        return self.index.db

    # -- plumbing -------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError("the service is closed")
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None and getattr(self._local, "generation", 0) != self.index.generation:
            with self._readers_lock:
                if db in self._readers:
                    self._readers.remove(db)
            with contextlib.suppress(sqlite3.Error):
                db.close()
            db = None
        if db is None:
            from agtaild.index.search import install_functions

            db = self.index.reader()
            install_functions(db)
            self._local.db = db
            self._local.generation = self.index.generation
            with self._readers_lock:
                self._readers.append(db)
        return db

    def pricing(self) -> Any:
        from agtaild.pricing import load_pricing

        return load_pricing(self.config.data_dir)

    def known_agents(self) -> list[str]:
        seen: dict[str, None] = {}
        for root in self.config.roots:
            seen.setdefault(root.agent, None)
        return list(seen)

    def check_agent(self, method: str, agent: str | None) -> str | None:
        if agent is not None and agent not in self.known_agents():
            raise unknown_agent(agent, self.known_agents())
        return agent

    # -- the interface --------------------------------------------------------------------
    def call(
        self, method: str, params: dict[str, Any] | None = None, *, reveal: bool = False
    ) -> dict[str, Any]:
        """The answer to ``method``, with every secret in its text masked (agtaild.query.masking)
        unless ``reveal``, which only an in-process caller can ask for: no API parameter sets it."""
        answer = self._answer(method, params)
        return answer if reveal else mask_answer(method, answer, known_clean=self._known_clean)

    def _known_clean(self, scanner: Any, keys: list[bytes]) -> set[bytes]:
        """Item digests the index's secrets pass recorded as clean (agtaild.index.findings)."""
        from agtaild.index.findings import known_clean

        try:
            return known_clean(self._reader(), scanner, keys)
        except sqlite3.Error:
            return set()

    def scan_secrets(
        self, *, max_seconds: float | None = None, max_chars: int | None = None
    ) -> dict[str, Any]:
        """Run the index's secrets pass (agtaild.index.findings) under the write lock, within a
        budget (None: until every event is scanned). The daemon's writer calls it when idle."""
        from agtaild.index.findings import scan_pass
        from agtaild.secrets import default_scanner

        if self.index.read_only:
            return {"scanned": 0, "findings": 0, "pending": None}
        with self._write_lock:
            return scan_pass(self._db, default_scanner(), max_chars=max_chars, max_seconds=max_seconds)

    def _answer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        handler = METHODS.get(method)
        if handler is None:
            raise NotFound(
                f"no method {method!r}; methods: {', '.join(sorted(METHODS))}", data={"method": method}
            )
        params = dict(params or {})
        if params.get("machine") is not None or (method == "stats" and params.get("by") == "machine"):
            raise UsageError(
                f"{method}: machines are a team server's (agtaild --backend postgresql://…, docs/team.md);"
                " this index is one machine's"
            )
        if self.index.replaced():
            self._repair("replaced")
        try:
            return handler(self, params)
        except sqlite3.DatabaseError as exc:
            # Damage, or tables gone because the file was swapped under us; a missing table
            # in our own file is a bug to report, not a reason to throw the index away.
            problem = problem_of(exc)
            replaced = self.index.replaced()
            if self.index.read_only or not (problem == "corrupt" or replaced):
                raise
            self._repair("replaced" if replaced else "corrupt", exc)
            return handler(self, dict(params or {}))

    def _repair(self, why: str, exc: BaseException | None = None) -> None:
        from agtaild.index import upkeep

        upkeep.repair(self, why, exc)

    def _check_timezone(self) -> None:
        from agtaild.index import upkeep
        from agtaild.index.storage import DiskFull, disk_full_message, problem_of

        try:
            upkeep.check_timezone(self._db)
        except sqlite3.OperationalError as exc:  # a disk that filled as the index was made
            if problem_of(exc) != "full":
                raise
            message = disk_full_message(Path(self.config.data_dir), 1 << 20)
            self.index.state, self.index.message = "disk_full", message
            raise DiskFull(message) from None

    def update_index(
        self,
        *,
        full: bool = False,
        only_paths: Iterable[str] | None = None,
        progress: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """Bring the index up to date with the native files (see agtaild.index.update and,
        for a read-only, vanished or damaged index, agtaild.index.upkeep). ``progress`` is
        called with the update's agtaild.index.progress.IndexProgress as it goes. The user's
        rules then label the sessions it brought (agtaild.query.rules)."""
        from agtaild.index import upkeep

        report = upkeep.update(self, full=full, only_paths=only_paths, progress=progress)
        if report.get("changed"):
            from agtaild.query.rules import apply_rules

            labelled = apply_rules(self)
            if labelled:
                report["labelled_by_rules"] = labelled
        return report

    def interrupt_reads(self) -> None:
        """Stop every read in flight (at shutdown: a long search must not hold it up)."""
        with self._readers_lock:
            readers = list(self._readers)
        for db in readers:
            with contextlib.suppress(sqlite3.Error):
                db.interrupt()

    def data_version(self) -> tuple[Any, ...]:
        """A token equal to an earlier one only while every answer of the index is unchanged:
        no commit to the index since (SQLite's ``PRAGMA data_version``, read on a connection
        that never writes, so it moves with every commit by anyone), the same index file and
        the same price table (the objects themselves: kept alive in the token, never mistaken
        for a later one at the same address). The API keeps stats answers under it
        (agtaild/api/answers.py). A read error gives a token equal to nothing."""
        with self._probe_lock:
            try:
                if self._probe is None or self._probe_generation != self.index.generation:
                    if self._probe is not None:
                        with contextlib.suppress(sqlite3.Error):
                            self._probe.close()
                    self._probe = self.index.reader()
                    self._probe_generation = self.index.generation
                changed = self._probe.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error:
                return (object(),)
            return (
                self._probe,
                self._probe_generation,
                changed,
                self.pricing(),
                _state_stamp(self.config.data_dir),
            )

    def release_memory(self) -> bool:
        """After a big update: the reading workers' helper processes stopped, the writer
        connection's page cache dropped and the process's free memory given back
        (agtaild.index.memory); True when pages went back to the system."""
        from agtaild.index import memory

        with self._write_lock:
            return memory.release([self.index.db], helpers=True)

    def close(self) -> None:
        self._closed = True
        if self.embedder is not None:
            self.embedder.stop()
        if self._semantic is not None:
            self._semantic.close()
        if self._state is not None:
            self._state.close()
        with self._probe_lock:
            if self._probe is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._probe.close()
                self._probe = None
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for db in readers:
            try:
                db.close()
            except sqlite3.Error:
                pass
        with self._write_lock:
            self.index.close()


def _state_stamp(data_dir: Any) -> tuple[int, ...]:
    """Moves whenever the user's state is written (its log or its file), so no kept answer
    outlives a label, star or hide."""
    import os

    stamp: list[int] = []
    for name in ("state.sqlite3", "state.sqlite3-wal"):
        try:
            st = os.stat(os.path.join(data_dir, name))
            stamp += [st.st_mtime_ns, st.st_size]
        except OSError:
            stamp += [0, 0]
    return tuple(stamp)
