"""The read-only team server's service: the same methods as agtaild.query.service, over PostgreSQL.

``TeamService.call(method, params)`` answers the JSON-RPC methods of CONTRACT.md with the same
documents as the local index (plus ``machine`` on sessions, and a ``machine`` filter on every
query, and ``--by machine`` for stats), so the REST/JSON-RPC/SSE API, the viewer, the CLI,
MCP and the clients work against it unchanged. It never writes: ``index.update`` is not
offered, and ``resume.command`` answers only for the machine the caller says it runs on.

Connections come from a psycopg pool, one per reader thread at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from agtaild.api.caller import CALLER, OPERATOR
from agtaild.errors import AgtailError, NotFound, Refused, bad_param, unknown_agent
from agtaild.index.params import Params
from agtaild.model import EVENT_KINDS
from agtaild.pg import queries
from agtaild.pg.queries import TeamFilter
from agtaild.pg.readers import ALL_EVENTS_VIEW, EVENTS_VIEW, reads_all
from agtaild.pg.schema import managed, migrate
from agtaild.query.methods import SESSION_FILTERS, session_filter_fields

Method = Callable[["TeamService", dict[str, Any]], dict[str, Any]]

#: Sessions per read of the change feed (the next read continues after the last).
FEED_PAGE = 1000


class TeamService:
    def __init__(self, url: str, *, data_dir: Path, machine: str | None = None, pool_size: int = 8) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise AgtailError(
                "the team server needs psycopg: pip install 'psycopg[binary]' psycopg-pool"
            ) from None
        try:
            with psycopg.connect(url, connect_timeout=10) as conn:
                migrate(conn)
                self.managed = managed(conn)
                #: Whether PostgreSQL filters this server's rows by reader: it connects as the
                #: team server's role (not the owner, who bypasses row-level security).
                self.enforced = self.managed and _is_server_role(conn)
        except psycopg.Error as err:
            raise AgtailError(f"cannot open the team database: {str(err).strip()}") from None
        self.pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, open=True, kwargs={"autocommit": True}
        )
        self.data_dir = data_dir
        self.here = machine
        self._pricing: Any = None
        self._lock = threading.Lock()
        #: Callers PostgreSQL says read everything (or not). A caller's value never gains
        #: rights: a token's tier is fixed (a new tier comes with a new token), and one revoked
        #: since reads nothing through either view.
        self._reads_all: dict[str, bool] = {}

    def pricing(self) -> Any:
        with self._lock:
            if self._pricing is None:
                from agtaild.pricing import load_pricing

                self._pricing = load_pricing(str(self.data_dir))
            return self._pricing

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        handler = METHODS.get(method)
        if handler is None:
            raise NotFound(f"no method {method!r} on the team server; methods: {', '.join(sorted(METHODS))}")
        return handler(self, dict(params or {}))

    def run(self, fn: Callable[[Any], Any], *, caller: str | None = None) -> Any:
        """``fn(cursor)`` on a pooled connection that tells PostgreSQL who asks (the request's
        caller, agtaild.api.caller): row-level security and the events view answer by it
        (agtaild.pg.readers)."""
        # No roles, no readers: whoever passed the daemon's token is the operator.
        who = OPERATOR if not self.managed else CALLER.get() if caller is None else caller
        with self.pool.connection() as conn, conn.cursor() as cur:
            wide = self._reads_all.get(who)
            if wide is None:
                wide = reads_all(cur, who)
                if len(self._reads_all) < 10_000:
                    self._reads_all[who] = wide
            else:
                cur.execute("SELECT set_config('agtail.reader', %s, false)", (who,))
            # The view of every event for a caller who reads everything (a caller taken for one
            # wrongly reads nothing there), else the view of the caller's sessions' events.
            view = queries.EVENTS.set(ALL_EVENTS_VIEW if wide else EVENTS_VIEW)
            try:
                return fn(cur)
            finally:
                queries.EVENTS.reset(view)

    def reader_token(self, token: str) -> str | None:
        """A reader's token → the caller value its requests carry (None: not an active reader,
        or this server connects as a role that row-level security would not restrict)."""
        if not self.enforced:
            return None
        from agtaild.pg.readers import check_token

        return cast("str | None", self.run(lambda cur: check_token(cur, token), caller=""))

    def visible(self, changes: list[Any]) -> list[Any]:
        """The changes (of the change feed) whose session the caller may see."""
        if not changes or not self.managed or CALLER.get() == OPERATOR:
            return changes

        def read(cur: Any) -> set[str]:
            cur.execute(
                "SELECT machine || ':' || agent || ':' || sid FROM sessions"
                " WHERE machine || ':' || agent || ':' || sid = ANY(%s)",
                ([c.path for c in changes],),
            )
            return {r[0] for r in cur.fetchall()}

        seen = self.run(read)
        return [c for c in changes if c.path in seen]

    def changes_since(self, stamp: Any) -> tuple[Any, list[dict[str, Any]]]:
        """Sessions written after ``stamp`` (None: only learn the current stamp): the change
        feed. A stamp is (transaction, session row id): the sessions written by transactions
        that had all ended when this read began, in that order (schema m007_change_feed), so
        a push that commits late is announced then, and nothing is announced twice."""

        def read(cur: Any) -> tuple[Any, list[dict[str, Any]]]:
            if stamp is None:
                cur.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
                return (cur.fetchone()[0], 0), []
            after, after_id = stamp
            # One statement: the horizon is that of the snapshot the rows are read in.
            cur.execute(
                "SELECT h.horizon::text, s.machine, s.agent, s.sid, s.changed::text, s.id"
                " FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon) h LEFT JOIN LATERAL"
                " (SELECT machine, agent, sid, changed, id FROM sessions WHERE (changed, id) > (%s::xid8, %s)"
                " AND changed < h.horizon ORDER BY changed, id LIMIT %s) s ON true",
                (after, after_id, FEED_PAGE),
            )
            rows = cur.fetchall()
            found = [r for r in rows if r[1] is not None]
            top = (found[-1][4], found[-1][5]) if len(found) == FEED_PAGE else (rows[0][0], 0)
            return top, [
                {"agent": a, "id": s, "path": f"{m}:{a}:{s}", "action": "updated"}
                for _h, m, a, s, _c, _i in found
            ]

        return self.run(read, caller=OPERATOR)  # the feed itself; each stream filters (visible)

    def close(self) -> None:
        self.pool.close()


def _is_server_role(conn: Any) -> bool:
    """The connected role is in the team server's group and cannot bypass row-level security."""
    row = conn.execute(
        "SELECT pg_has_role(current_user, (SELECT role FROM agtail_roles WHERE kind = 'server'), 'MEMBER'),"
        " r.rolsuper OR r.rolbypassrls, pg_has_role(current_user, c.relowner, 'MEMBER')"
        " FROM pg_roles r, pg_class c WHERE r.rolname = current_user AND c.oid = 'sessions'::regclass"
    ).fetchone()
    conn.commit()
    return bool(row and row[0] and not row[1] and not row[2])


# -- methods ------------------------------------------------------------------------------
#: The local service's session filters, and the machine that pushed the session.
_FILTERS = ("machine", *SESSION_FILTERS)


def _known_agent(p: Params, name: str = "agent") -> str | None:
    from agtaild.adapters import all_adapters

    agent = p.text(name)
    if agent is not None and agent not in {a.id for a in all_adapters()}:
        raise unknown_agent(agent, sorted(a.id for a in all_adapters()))
    return agent


#: The user's state as filters (agtaild.pg.userstate), as on the local daemon.
_STATE = ("label", "starred", "hidden")


def _filter(p: Params, *, state_filters: bool = False) -> TeamFilter:
    """The request's session filters; hidden sessions are left out (``state_filters``: the
    request may ask for them, and filter by label and star)."""
    state: dict[str, Any] = {}
    if state_filters:
        state = {
            "label": p.text("label", max_len=400),
            "starred": p.flag("starred"),
            "hidden": p.choice("hidden", ("exclude", "only", "include"), "exclude") or "exclude",
        }
    return TeamFilter(machine=p.text("machine"), **session_filter_fields(p, _known_agent(p)), **state)


def _resolve(svc: TeamService, p: Params, cur: Any) -> int:
    agent, ident = p.session_ref()
    return queries.resolve_session(
        cur, agent, ident, machine=p.text("machine"), collection=p.text("collection"), here=svc.here
    )


def sessions_list(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    p = Params("sessions.list", params, (*_FILTERS, *_STATE, "q", "total", "limit", "cursor"))
    flt = _filter(p, state_filters=True)
    limit = p.integer("limit", 50, minimum=1, maximum=1000) or 50
    after = p.number_cursor("sessions", 2)
    if p.text("q"):
        raise bad_param("q", "is not offered by the team server; use search")
    return svc.run(
        lambda cur: queries.list_sessions(
            cur,
            svc.pricing(),
            flt,
            limit=limit,
            after=(float(after[0]), int(after[1])) if after else None,
            here=svc.here,
            total=bool(p.flag("total")),
        )
    )


def sessions_get(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    p = Params("sessions.get", params, ("agent", "id", "collection", "machine", "path"))
    return svc.run(
        lambda cur: {"session": queries.load_session(cur, svc.pricing(), _resolve(svc, p, cur), svc.here)}
    )


def events_list(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    p = Params(
        "events.list",
        params,
        ("agent", "id", "collection", "machine", "path", "after_seq", "before_seq", "cursor", "limit"),
    )
    limit = p.integer("limit", 200, minimum=1, maximum=10_000) or 200
    after = p.integer("after_seq", None, minimum=-1)
    before = p.integer("before_seq", None, minimum=0)
    cursor = p.number_cursor("events", 1)
    if cursor is not None:
        after = max(int(cursor[0]), after if after is not None else -1)
    return svc.run(
        lambda cur: queries.list_events(
            cur, _resolve(svc, p, cur), after_seq=after, limit=limit, before_seq=before
        )
    )


def search(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.text import MODES
    from agtaild.pg.search import search as run_search

    p = Params("search", params, ("q", "session", "kind", "mode", "limit", "cursor", *_FILTERS, *_STATE))
    q = p.text("q", required=True, allow_empty=True, max_len=10_000)
    assert q is not None
    mode = p.choice("mode", MODES, "phrase") or "phrase"
    kind = p.choice("kind", EVENT_KINDS)
    flt = _filter(p, state_filters=True)
    limit = p.integer("limit", 20, minimum=1, maximum=1000) or 20
    after = p.number_cursor("search", 2)
    ref = p.text("session", max_len=1000)

    def run(cur: Any) -> dict[str, Any]:
        session_id = None
        if ref is not None:
            agent, _, ident = ref.partition(":") if ":" in ref else (None, "", ref)
            if not ident:
                raise bad_param("session", f"{ref[:80]!r} is not AGENT:ID or an id")
            session_id = queries.resolve_session(
                cur, agent or None, ident, machine=flt.machine, collection=None, here=svc.here
            )
        return run_search(
            cur,
            svc.pricing(),
            q,
            mode,
            flt,
            kind=kind,
            session_id=session_id,
            limit=limit,
            after=(float(after[0]), int(after[1])) if after else None,
            here=svc.here,
        )

    return svc.run(run)


def stats(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    p = Params(
        "stats",
        params,
        ("by", "agent", "machine", "project", "since", "until", "imported", "collection", "limit"),
    )
    by = p.choice("by", queries.STATS_BY, "day") or "day"
    limit = p.integer("limit", minimum=1)
    flt = _filter(p)
    if by in ("tool", "tool-category", "hour"):
        from agtaild.pg import activity

        if by != "hour":
            doc = svc.run(lambda cur: activity.by_tool(cur, flt, by))
        else:
            doc = svc.run(lambda cur: activity.by_hour(cur, svc.pricing(), flt))
    else:
        doc = svc.run(lambda cur: queries.stats(cur, svc.pricing(), by=by, flt=flt))
    if limit is not None:
        del doc["rows"][limit:]  # the first rows, as the local index answers; totals count all
    return doc


def projects_list(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.pg import activity

    p = Params("projects.list", params, ("agent", "since", "imported", "machine"))
    flt = TeamFilter(
        agent=_known_agent(p), since=p.when("since"), imported=p.flag("imported"), machine=p.text("machine")
    )
    return svc.run(lambda cur: activity.projects(cur, svc.pricing(), flt))


def agents_list(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.adapters import all_adapters

    Params("agents.list", params, ())

    def run(cur: Any) -> dict[str, Any]:
        cur.execute("SELECT agent, count(*) FROM sessions GROUP BY agent")
        counts = dict(cur.fetchall())
        cur.execute("SELECT machine, agent, count(*) FROM sessions GROUP BY 1, 2 ORDER BY 1, 2")
        per_machine: dict[str, dict[str, int]] = {}
        for machine, agent, n in cur.fetchall():
            per_machine.setdefault(agent, {})[machine] = n
        return {
            "agents": [
                {
                    "id": a.id,
                    "name": a.name or a.id,
                    "roots": [],
                    "sessions": counts.get(a.id, 0),
                    "machines": per_machine.get(a.id, {}),
                }
                for a in all_adapters()
                if a.id in counts
            ]
        }

    return svc.run(run)


def machines_list(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    Params("machines.list", params, ())

    def run(cur: Any) -> dict[str, Any]:
        cur.execute(
            "SELECT m.machine, m.pushed_at, (SELECT count(*) FROM sessions s WHERE s.machine = m.machine)"
            " FROM machines m ORDER BY m.machine"
        )
        return {
            "machines": [
                {
                    "machine": m,
                    "pushed_at": t.isoformat() if t else None,
                    "sessions": n,
                    "here": m == svc.here,
                }
                for m, t, n in cur.fetchall()
            ]
        }

    return svc.run(run)


def resume_command(svc: TeamService, params: dict[str, Any]) -> dict[str, Any]:
    """Only for a session of the machine the caller runs on (``from_machine``): elsewhere its
    files are not there to resume from. Then the same rules as locally (agtaild.resume)."""
    import json

    from agtaild.resume import resume_for_session

    p = Params("resume.command", params, ("agent", "id", "collection", "machine", "path", "from_machine"))
    caller = p.text("from_machine")

    def read(cur: Any) -> tuple[str, str]:
        cur.execute("SELECT machine, doc FROM sessions WHERE id = %s", (_resolve(svc, p, cur),))
        row = cur.fetchone()
        return row[0], row[1]

    where, doc = svc.run(read)
    session = json.loads(doc)
    if caller is None or caller != where:
        raise Refused(
            f"{session['agent']}:{session['id']} was pushed by machine {where!r}: resume it there"
            " (agtail resume on that machine); the team server only reads sessions"
        )
    return resume_for_session(session)


METHODS: dict[str, Method] = {
    "sessions.list": sessions_list,
    "sessions.get": sessions_get,
    "events.list": events_list,
    "search": search,
    "stats": stats,
    "agents.list": agents_list,
    "machines.list": machines_list,
    "projects.list": projects_list,
    "resume.command": resume_command,
}
