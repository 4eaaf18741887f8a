"""The service every front end calls: the CLI in-process, the daemon's REST and JSON-RPC, sync.

``Service.call(method, params)`` maps a method name (the JSON-RPC names of CONTRACT.md) to a
JSON-able dict; ``METHODS`` is the dispatch table, and other modules add their methods with
one line (``METHODS["resume.command"] = …``).

Threads: ``call`` may run on many threads at once. Each thread reads through its own
connection (thread-local), and SQLite's WAL mode means a reader never waits for the writer.
``update_index`` — the only writer — is serialized by a lock.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from agtaild.config import Config
from agtaild.errors import NotFound, UsageError
from agtaild.index.keeper import IndexKeeper
from agtaild.index.params import Params
from agtaild.index.storage import problem_of
from agtaild.model import EVENT_KINDS

Method = Callable[["Service", dict[str, Any]], dict[str, Any]]


class Service:
    def __init__(self, config: Config, *, workers: int | None = None) -> None:
        self.config = config
        self.workers = workers
        #: Called after each native unit is read and stored: (adapter, unit, root). The archive
        #: mirror appends its copy function here, so every native file read is mirrored.
        self.after_native_read: list[Callable[..., None]] = [_archive_hook(config)]
        #: Called before discovery: the archive writes back the files agents deleted.
        self.before_discovery: list[Callable[..., None]] = [_archive_view_hook(config)]
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
        #: Called (from any thread) after the index was repaired, instead of refilling it
        #: inline: the daemon points it at its writer, so a request never waits for a rebuild.
        self.on_repaired: Callable[[], None] | None = None
        if not self.index.read_only:
            with self._write_lock:
                self._check_timezone()

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
            raise UsageError(
                f"{method}: parameter 'agent': unknown agent {agent!r}; known: {', '.join(self.known_agents())}"
            )
        return agent

    # -- the interface --------------------------------------------------------------------
    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
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

        upkeep.check_timezone(self._db)

    def update_index(
        self,
        *,
        full: bool = False,
        only_paths: Iterable[str] | None = None,
        progress: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """Bring the index up to date with the native files (see agtaild.index.update and,
        for a read-only, vanished or damaged index, agtaild.index.upkeep). ``progress`` is
        called with the update's agtaild.index.progress.IndexProgress as it goes."""
        from agtaild.index import upkeep

        return upkeep.update(self, full=full, only_paths=only_paths, progress=progress)

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
            return (self._probe, self._probe_generation, changed, self.pricing())

    def close(self) -> None:
        self._closed = True
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


# -- methods ------------------------------------------------------------------------------
SESSION_FILTERS = (
    "agent",
    "cwd",
    "project",
    "since",
    "until",
    "imported",
    "collection",
    "programmatic",
    "archived",
)


def _session_filter(svc: Service, p: Params) -> Any:
    from agtaild.index.queries import SessionFilter

    return SessionFilter(
        agent=svc.check_agent(p.method, p.text("agent")),
        cwd=p.text("cwd"),
        project=p.text("project"),
        since=p.when("since"),
        until=p.when("until", end=True),
        imported=p.flag("imported"),
        collection=p.text("collection"),
        programmatic=p.flag("programmatic"),
        archived=p.flag("archived"),
    )



def sessions_list(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import list_sessions
    from agtaild.index.search import matching_session_ids
    from agtaild.index.text import compile_query

    p = Params("sessions.list", params, (*SESSION_FILTERS, "q", "total", "limit", "cursor"))
    flt = _session_filter(svc, p)
    limit = p.integer("limit", 50, minimum=1, maximum=1000) or 50
    after = p.number_cursor("sessions", 2)
    q = p.text("q")
    from agtaild.index.budget import time_budget

    match = matching_session_ids(compile_query(q)) if q else None
    db = svc._reader()
    with time_budget(db) if match else contextlib.nullcontext():
        return list_sessions(
            db,
            svc.pricing(),
            flt,
            match_ids_sql=match,
            limit=limit,
            after=(float(after[0]), int(after[1])) if after else None,
            total=bool(p.flag("total")),
        )


def _session_ref(svc: Service, p: Params) -> tuple[str, str]:
    agent, ident = p.session_ref()
    svc.check_agent(p.method, agent)
    return agent, ident


def _resolve(svc: Service, p: Params) -> int:
    from agtaild.index.queries import resolve_session

    agent, ident = _session_ref(svc, p)
    return resolve_session(svc._reader(), agent, ident, collection=p.text("collection"), path=p.text("path"))


def sessions_get(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import load_sessions

    p = Params("sessions.get", params, ("agent", "id", "collection", "path"))
    rid = _resolve(svc, p)
    return {"session": load_sessions(svc._reader(), svc.pricing(), [rid])[rid]}


def events_list(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import list_events

    p = Params(
        "events.list",
        params,
        ("agent", "id", "collection", "path", "after_seq", "before_seq", "cursor", "limit"),
    )
    rid = _resolve(svc, p)
    limit = p.integer("limit", 200, minimum=1, maximum=10_000) or 200
    after = p.integer("after_seq", None, minimum=-1)
    before = p.integer("before_seq", None, minimum=0)
    cursor = p.number_cursor("events", 1)
    if cursor is not None:
        after = max(int(cursor[0]), after if after is not None else -1)
    return list_events(svc._reader(), rid, after_seq=after, limit=limit, before_seq=before)


def search(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.search import SearchScope
    from agtaild.index.search import search as run_search
    from agtaild.index.text import MODES, compile_query

    p = Params(
        "search",
        params,
        (
            "q",
            "agent",
            "kind",
            "session",
            "cwd",
            "project",
            "since",
            "until",
            "mode",
            "limit",
            "cursor",
            "imported",
            "collection",
        ),
    )
    q = p.text("q", required=True, allow_empty=True)
    assert q is not None
    mode = p.choice("mode", MODES, "phrase") or "phrase"
    kind = p.choice("kind", EVENT_KINDS)
    session_id = None
    ref = p.text("session", max_len=1000)
    if ref is not None:
        from agtaild.index.queries import resolve_session

        agent, sep, ident = ref.partition(":")
        if not sep or not ident:
            raise UsageError("search: parameter 'session' must be AGENT:ID")
        svc.check_agent("search", agent)
        session_id = resolve_session(svc._reader(), agent, ident)
    scope = SearchScope(
        agent=svc.check_agent("search", p.text("agent")),
        cwd=p.text("cwd"),
        project=p.text("project"),
        imported=p.flag("imported"),
        collection=p.text("collection"),
        kind=kind,
        session_id=session_id,
        event_since=p.when("since"),
        event_until=p.when("until", end=True),
    )
    limit = p.integer("limit", 20, minimum=1, maximum=1000) or 20
    after = p.number_cursor("search", 2)
    from agtaild.index.budget import time_budget

    query = compile_query(q, mode)
    db = svc._reader()
    with time_budget(db):
        return run_search(
            db,
            svc.pricing(),
            query,
            scope,
            limit=limit,
            after=(float(after[0]), int(after[1])) if after else None,
        )


def stats(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.stats import BY
    from agtaild.index.stats import stats as run_stats

    p = Params("stats", params, ("by", "agent", "project", "since", "until", "imported", "collection", "limit"))
    by = p.choice("by", BY, "day") or "day"
    limit = p.integer("limit", minimum=1)
    if by in ("tool", "hour"):
        from agtaild.index import activity

        agent = svc.check_agent("stats", p.text("agent"))
        project, since, until = p.text("project"), p.when("since"), p.when("until", end=True)
        if by == "tool":
            doc = activity.by_tool(svc._reader(), agent=agent, project=project, since=since, until=until)
        else:
            doc = activity.by_hour(
                svc._reader(), svc.pricing(), agent=agent, project=project, since=since, until=until
            )
        if limit is not None:
            del doc["rows"][limit:]
        return doc
    return run_stats(
        svc._reader(),
        svc.pricing(),
        by=by,
        agent=svc.check_agent("stats", p.text("agent")),
        project=p.text("project"),
        since=p.when("since"),
        until=p.when("until", end=True),
        imported=p.flag("imported"),
        collection=p.text("collection"),
        limit=limit,
    )


def projects_list(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.projects import projects

    p = Params("projects.list", params, ("agent", "since", "imported"))
    since = p.when("since")
    return projects(
        svc._reader(),
        svc.pricing(),
        agent=svc.check_agent("projects.list", p.text("agent")),
        since=since.epoch if since is not None else None,
        imported=p.flag("imported"),
    )


def agents_list(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.adapters import get_adapter

    Params("agents.list", params, ())
    counts = dict(svc._reader().execute("SELECT agent, count(*) FROM sessions GROUP BY agent").fetchall())
    agents = []
    for agent in svc.known_agents():
        try:
            name = get_adapter(agent).name or agent
        except UsageError:
            name = agent
        roots = [
            {"path": r.path, "kind": r.kind, "collection": r.collection, "exists": Path(r.path).exists()}
            for r in svc.config.roots
            if r.agent == agent
        ]
        agents.append({"id": agent, "name": name, "roots": roots, "sessions": counts.get(agent, 0)})
    return {"agents": agents}


def index_update(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    p = Params("index.update", params, ("full",))
    return svc.update_index(full=bool(p.flag("full")))


class _ArchiveHook:
    """The archive mirror (agtaild.store.archive), imported when the first unit is read:
    the read-only commands never pay for importing the sync machinery. The Updater calls
    ``begin`` with the bytes it will read (a big update mirrors in a process of its own) and
    ``flush`` when its reads are done (the archived copies are made durable together)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.hook: Any = None

    def _load(self) -> Any:
        if self.hook is None:
            from agtaild.store.archive import after_read_hook

            self.hook = after_read_hook(self.config)
        return self.hook

    def begin(self, nbytes: int) -> None:
        self._load().begin(nbytes)

    def __call__(self, adapter: Any, unit: Any, root: Any) -> None:
        self._load()(adapter, unit, root)

    def flush(self) -> None:
        if self.hook is not None:
            self.hook.flush()


def _archive_hook(config: Config) -> Callable[..., None]:
    return _ArchiveHook(config)


def _archive_view_hook(config: Config) -> Callable[..., None]:
    """The archive's before-discovery step (agtaild.store.archive), imported only when an
    update scans an archive root that exists."""

    def prepare(roots: list[Any], errors: list[dict[str, str]], present: Collection[str] | None = None) -> None:
        if not any(r.kind == "archive" for r in roots) or not config.archive_dir.is_dir():
            return
        from agtaild.store.archive import before_discovery_hook

        before_discovery_hook(config)(roots, errors, present)

    return prepare


def _resume_command(svc: Service, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.resume import resume_command

    return resume_command(svc, params)


METHODS: dict[str, Method] = {
    "sessions.list": sessions_list,
    "sessions.get": sessions_get,
    "events.list": events_list,
    "search": search,
    "stats": stats,
    "projects.list": projects_list,
    "agents.list": agents_list,
    "index.update": index_update,
    "resume.command": _resume_command,
}
