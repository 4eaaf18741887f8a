"""The methods of the query layer: each JSON-RPC method of CONTRACT.md as a function.

``METHODS`` is the dispatch table :meth:`agtaild.query.service.Service.call` looks a method
up in. Each function takes the service (anything that reads like :class:`Reading`) and the
request's params, checks them through the one parameter table (agtaild.index.params) and
returns a JSON-able dict.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from agtaild.config import Config
from agtaild.errors import NotFound, UsageError, bad_param
from agtaild.index.params import Params
from agtaild.model import EVENT_KINDS
from agtaild.query import insight, semantic
from agtaild.query.organize import STATE_FILTERS, annotate, state_refs
from agtaild.query.secrets import (
    annotate_secrets,
    apply_has_secret,
    secrets_allow,
    secrets_list,
    secrets_unallow,
)


class Reading(Protocol):
    """What a method needs of the service (agtaild.query.service.Service)."""

    config: Config

    def _reader(self) -> sqlite3.Connection: ...

    def pricing(self) -> Any: ...

    def known_agents(self) -> list[str]: ...

    def check_agent(self, method: str, agent: str | None) -> str | None: ...

    def update_index(self, *, full: bool = False) -> dict[str, Any]: ...


Method = Callable[[Any, dict[str, Any]], dict[str, Any]]


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


def session_filter_fields(p: Params, agent: str | None) -> dict[str, Any]:
    """The SESSION_FILTERS of a request as a filter's fields (the local index's SessionFilter,
    the team database's TeamFilter), ``agent`` already checked by the caller."""
    return {
        "agent": agent,
        "cwd": p.text("cwd"),
        "project": p.text("project"),
        "since": p.when("since"),
        "until": p.when("until", end=True),
        "imported": p.flag("imported"),
        "collection": p.text("collection"),
        "programmatic": p.flag("programmatic"),
        "archived": p.flag("archived"),
    }


def _session_filter(svc: Reading, p: Params) -> Any:
    from agtaild.index.queries import SessionFilter

    return SessionFilter(**session_filter_fields(p, svc.check_agent(p.method, p.text("agent"))))



def sessions_list(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import list_sessions
    from agtaild.index.search import matching_session_ids
    from agtaild.index.text import compile_query

    p = Params("sessions.list", params, (*SESSION_FILTERS, *STATE_FILTERS, "where", "has_secret", "q", "total", "limit", "cursor"))
    flt = _session_filter(svc, p)
    apply_has_secret(svc, p, flt)
    store = getattr(svc, "state", None)
    flt.only_refs, flt.without_refs = state_refs(store, p)
    where = p.text("where", max_len=2000)
    if where is not None:
        from agtaild.index.where import parse
        from agtaild.query.secrets import allowed_fingerprints

        held = parse(where, what="parameter 'where'").refs(svc._reader(), sorted(allowed_fingerprints(svc)))
        flt.only_refs = held if flt.only_refs is None else sorted(set(held) & set(flt.only_refs))
    limit = p.integer("limit", 50, minimum=1, maximum=1000) or 50
    after = p.number_cursor("sessions", 2)
    q = p.text("q")
    from agtaild.index.budget import time_budget

    match = matching_session_ids(compile_query(q)) if q else None
    db = svc._reader()
    with time_budget(db) if match else contextlib.nullcontext():
        doc = list_sessions(
            db,
            svc.pricing(),
            flt,
            match_ids_sql=match,
            limit=limit,
            after=(float(after[0]), int(after[1])) if after else None,
            total=bool(p.flag("total")),
        )
    annotate(store, doc["sessions"])
    annotate_secrets(svc, doc["sessions"])
    return doc


def _session_ref(svc: Reading, p: Params) -> tuple[str | None, str]:
    agent, ident = p.session_ref()
    svc.check_agent(p.method, agent)
    return agent, ident


def _resolve(svc: Reading, p: Params) -> int:
    from agtaild.index.queries import resolve_session

    agent, ident = _session_ref(svc, p)
    return resolve_session(svc._reader(), agent, ident, collection=p.text("collection"), path=p.text("path"))


def sessions_get(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import load_sessions

    p = Params("sessions.get", params, ("agent", "id", "collection", "path"))
    rid = _resolve(svc, p)
    session = load_sessions(svc._reader(), svc.pricing(), [rid])[rid]
    annotate(getattr(svc, "state", None), [session])
    annotate_secrets(svc, [session])
    return {"session": session}


def events_list(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
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


def search(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
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
            "has_secret",
            *STATE_FILTERS,
        ),
    )
    q = p.text("q", required=True, allow_empty=True)
    assert q is not None
    mode = p.choice("mode", (*MODES, *semantic.MODES))
    note = None
    if mode is None:
        mode, note = semantic.default_mode(svc)
    kind = p.choice("kind", EVENT_KINDS)
    session_id = None
    ref = p.text("session", max_len=1000)
    if ref is not None:
        from agtaild.index.queries import resolve_session

        agent, _, ident = ref.partition(":") if ":" in ref else (None, "", ref)
        if not ident:
            raise bad_param("session", f"{ref[:80]!r} is not AGENT:ID or an id")
        svc.check_agent("search", agent)
        session_id = resolve_session(svc._reader(), agent or None, ident)
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
    store = getattr(svc, "state", None)
    # the user's state selects in SQL, before the index pages: a page is never cut short
    scope.only_refs, scope.without_refs = state_refs(store, p)
    apply_has_secret(svc, p, scope)
    limit = p.integer("limit", 20, minimum=1, maximum=1000) or 20
    if mode in semantic.MODES:
        doc = semantic.search(svc, q, mode, scope, limit=limit, cursor=p.number_cursor(semantic.CURSOR_TAG, 1))
    else:
        from agtaild.index.budget import time_budget

        after = p.number_cursor("search", 2)
        query = compile_query(q, mode)
        db = svc._reader()
        with time_budget(db):
            doc = run_search(
                db,
                svc.pricing(),
                query,
                scope,
                limit=limit,
                after=(float(after[0]), int(after[1])) if after else None,
            )
    if note:
        doc["note"] = note
    annotate(store, [h["session"] for h in doc["hits"]])
    annotate_secrets(svc, [h["session"] for h in doc["hits"]])
    return doc


def stats(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.stats import ACTIVITY_BY, BY
    from agtaild.index.stats import stats as run_stats

    p = Params(
        "stats", params, ("by", "agent", "project", "since", "until", "imported", "collection", "limit", *STATE_FILTERS)
    )
    by = p.choice("by", BY, "day") or "day"
    limit = p.integer("limit", minimum=1)
    # hidden sessions are left out of the counts too, unless asked for (docs/organize.md)
    picked = state_refs(getattr(svc, "state", None), p)
    if by in ACTIVITY_BY:
        from agtaild.index import activity

        agent = svc.check_agent("stats", p.text("agent"))
        project, since, until = p.text("project"), p.when("since"), p.when("until", end=True)
        if by != "hour":
            doc = activity.by_tool(
                svc._reader(), agent=agent, project=project, since=since, until=until, by=by, picked=picked
            )
        else:
            doc = activity.by_hour(
                svc._reader(), svc.pricing(), agent=agent, project=project, since=since, until=until, picked=picked
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
        picked=picked,
    )


def usage_live(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.live import live_usage, session_usage

    p = Params("usage.live", params, ("agent", "active", "session", "sessions"))
    agent = svc.check_agent("usage.live", p.text("agent"))
    active = p.integer("active", minimum=1) or 30
    if active > 24 * 60:
        raise bad_param("active", "must be at most 1440 (minutes)")
    db = svc._reader()
    doc = live_usage(db, svc.pricing(), active_minutes=active, agent=agent, sessions=p.flag("sessions") is not False)
    ref = p.text("session")
    if ref:
        from agtaild.index.queries import resolve_session

        named, _, ident = ref.partition(":") if ":" in ref else (None, "", ref)
        if named is not None and named not in svc.known_agents():
            named, ident = None, ref  # a colon inside an id
        try:
            rid = resolve_session(db, named, ident)
        except NotFound:
            doc["session"] = None  # not indexed (yet): a session that just started
        else:
            doc["session"] = session_usage(db, svc.pricing(), rid, doc["now_epoch"])
    return doc


def report(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.params import parse_bound
    from agtaild.index.report import report as run_report

    p = Params("report", params, ("since", "until", "agent", "project"))
    since = p.when("since") or parse_bound(date.today().isoformat())  # default: today, from local midnight
    until = p.when("until", end=True)
    return run_report(
        svc._reader(),
        svc.pricing(),
        since=since.epoch if since is not None else None,
        until=until.epoch if until is not None else None,
        agent=svc.check_agent("report", p.text("agent")),
        project=p.text("project"),
    )


def projects_list(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.projects import projects

    p = Params("projects.list", params, ("agent", "since", "imported", *STATE_FILTERS))
    since = p.when("since")
    return projects(
        svc._reader(),
        svc.pricing(),
        agent=svc.check_agent("projects.list", p.text("agent")),
        since=since.epoch if since is not None else None,
        imported=p.flag("imported"),
        picked=state_refs(getattr(svc, "state", None), p),
    )


def agents_list(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
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


def index_update(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    p = Params("index.update", params, ("full",))
    return svc.update_index(full=bool(p.flag("full")))


def _resume_command(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.resume import resume_command

    return resume_command(svc, params)


def _state_change(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.query.writes import state_change

    return state_change(svc, params)
def files_history(svc: Reading, params: dict[str, Any]) -> dict[str, Any]:
    """Every recorded change of a file or folder (agtaild.provenance.history)."""
    from agtaild.provenance.history import MAX_RECORDS, file_history

    p = Params("files.history", params, ("path", "limit", "replay"))
    path = p.text("path", required=True, max_len=4096)
    assert path is not None
    if "\x00" in path:
        raise bad_param("path", "must not contain NUL characters")
    limit = p.integer("limit", 200, minimum=1, maximum=MAX_RECORDS) or 200
    return file_history(svc._reader(), path, limit=limit, replay=bool(p.flag("replay")))


METHODS: dict[str, Method] = {
    "sessions.list": sessions_list,
    "sessions.get": sessions_get,
    "events.list": events_list,
    "search": search,
    "stats": stats,
    "usage.live": usage_live,
    "report": report,
    "projects.list": projects_list,
    "agents.list": agents_list,
    "index.update": index_update,
    "resume.command": _resume_command,
    "state.change": _state_change,
    "secrets.list": secrets_list,
    "secrets.allow": secrets_allow,
    "secrets.unallow": secrets_unallow,
    "files.history": files_history,
    **insight.METHODS,
    "embeddings.status": semantic.status,
    "embeddings.build": semantic.build,
}
