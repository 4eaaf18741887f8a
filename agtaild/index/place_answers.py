"""Answers read from the sums per place and per session (agtaild.index.places).

What they serve, and what they leave to the queries over the rollup and the sessions (the
callers fall back to those, which give the same answer from the base tables):

* any date or time bound: the sums are over the whole history (by day, model and agent the
  per-day tables answer whole days, minus hidden sessions: ``daily_without``);
* a selection of sessions by the user's state (labels, stars, ``--hidden``): the sums do not
  know which sessions are whose — except the hidden ones left out by default, which are few:
  their own rollup rows, read by id, are taken away from the sums;
* ``projects --since``: it compares each session's activity;
* ``stats --by session`` without a limit (a row per session anyway), and ``--by day`` with a
  project, ``imported`` or collection filter (the places have no days).

Groups come in the order a GROUP BY over the rollup gives them (key, model, long-context flag),
so the floats of a cost are added in the same order as by the base tables.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from agtaild.index.selection import Picked, id_conditions

#: The token columns of a usage table ``u``, summed and as they are (stats reads these too).
SUMS = "sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_write), sum(u.reasoning)"
COLUMNS = "u.input, u.output, u.cache_read, u.cache_write, u.reasoning"
#: The place column each grouping reads.
_KEY = {"project": "p.project", "agent": "p.agent", "model": "nullif(u.model, '')", "cwd": "p.cwd"}


def served(*, since: Any, until: Any, picked: Picked) -> bool:
    """No bound and no selection but hidden sessions: the sums can answer (see the module doc)."""
    return since is None and until is None and picked[0] is None


def place_filters(
    agent: str | None,
    project: str | None = None,
    imported: bool | None = None,
    collection: str | None = None,
) -> tuple[list[str], list[Any]]:
    """Conditions on ``places p`` for the filters of stats and projects."""
    where, args = ["1"], []
    if agent:
        where.append("p.agent = ?")
        args.append(agent)
    if project:
        where.append("p.project = ?")
        args.append(project)
    if imported is not None:
        where.append(f"p.kind {'=' if imported else '!='} 'imported'")
    if collection:
        where.append("p.collection = ?")
        args.append(collection)
    return where, args


def _session_filters(where: Sequence[str], *, by_ids: bool = False) -> list[str]:
    """The same conditions on a session row ``s``; ``by_ids``: for the rows of a few sessions
    named by id (the hidden ones), so no index serves them (``+``): the planner otherwise walked
    every session of an agent by its index and tested each against the list."""
    return [w.replace("p.", "+s." if by_ids else "s.") for w in where]


def groups(
    db: sqlite3.Connection, by: str, where: list[str], args: list[Any], without: list[Any] | None
) -> list[tuple[Any, ...]]:
    """(key, model, long_ctx, input, output, cache_read, cache_write, reasoning, None) per
    (key, model, long_ctx), as agtaild.index.stats.assemble takes them; ``without``: hidden
    sessions (refs), whose rollup rows are taken away."""
    key = _KEY[by]
    rows = db.execute(
        f"SELECT {key}, nullif(u.model, ''), u.long_ctx, sum(u.n), {SUMS} FROM place_usage u"
        f" JOIN places p ON p.id = u.place WHERE {' AND '.join(where)} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        args,
    ).fetchall()
    if without:
        skey = key.replace("p.", "s.")
        own, own_args = id_conditions("u.session_id", without, None)
        hidden = db.execute(
            f"SELECT {skey}, nullif(u.model, ''), u.long_ctx, count(*), {SUMS} FROM usage_rollup u"
            f" JOIN sessions s ON s.id = u.session_id WHERE {' AND '.join([*_session_filters(where, by_ids=True), *own])}"
            " GROUP BY 1, 2, 3",
            [*args, *own_args],
        ).fetchall()
        rows = _take_away(rows, hidden, 3)
    return [(*r[:3], *r[4:], None) for r in rows]


def _take_away(rows: list[Any], hidden: Iterable[Sequence[Any]], width: int) -> list[Any]:
    """``rows`` (``width`` key columns, then a row count and sums) minus ``hidden``'s, keeping
    the order; a group left with no row behind it goes."""
    at = {tuple(r[:width]): i for i, r in enumerate(rows)}
    out = [list(r) for r in rows]
    for h in hidden:
        i = at.get(tuple(h[:width]))
        if i is None:
            continue
        row = out[i]
        for j in range(width, len(row)):
            row[j] -= h[j]
    return [tuple(r) for r in out if r[width] > 0]


def used_sessions(
    db: sqlite3.Connection, where: list[str], args: list[Any], without: list[Any] | None
) -> dict[str, int]:
    """Sessions with counted usage, per agent (``stats --by agent``)."""
    counts = dict(
        db.execute(
            f"SELECT p.agent, sum(p.used) FROM places p WHERE {' AND '.join(where)} GROUP BY 1", args
        ).fetchall()
    )
    if without:
        own, own_args = id_conditions("s.id", without, None)
        for agent, n in db.execute(
            f"SELECT s.agent, count(*) FROM sessions s WHERE {' AND '.join([*_session_filters(where, by_ids=True), *own])}"
            " AND EXISTS (SELECT 1 FROM session_tokens t WHERE t.session_id = s.id) GROUP BY 1",
            [*args, *own_args],
        ):
            counts[agent] = counts.get(agent, 0) - n
    return {a: int(n) for a, n in counts.items() if n}


def project_sessions(
    db: sqlite3.Connection, where: list[str], args: list[Any], without: list[Any] | None
) -> list[tuple[str, str, int, float | None]]:
    """(cwd, agent, sessions, latest activity) per (cwd, agent) with a working directory."""
    clause = " AND ".join([*where, "p.cwd IS NOT NULL", "p.cwd != ''"])
    rows = db.execute(
        f"SELECT p.cwd, p.agent, sum(p.sessions), max(p.activity) FROM places p WHERE {clause}"
        " GROUP BY 1, 2 ORDER BY 1, 2",
        args,
    ).fetchall()
    if not without:
        return rows
    sclause = " AND ".join(_session_filters([*where, "p.cwd IS NOT NULL", "p.cwd != ''"], by_ids=True))
    own, own_args = id_conditions("s.id", without, None)
    hidden = db.execute(
        f"SELECT s.cwd, s.agent, count(*) FROM sessions s WHERE {' AND '.join([sclause, *own])} GROUP BY 1, 2",
        [*args, *own_args],
    ).fetchall()
    if not hidden:
        return rows
    out = {(cwd, agent): [n, last] for cwd, agent, n, last in rows}
    not_hidden, not_args = id_conditions("s.id", None, without)
    for cwd, agent, n in hidden:
        cell = out.get((cwd, agent))
        if cell is None:
            continue
        cell[0] -= n
        # The latest activity of the sessions left: from the place index (schema m020), which
        # the planner would pass over for the index by (agent, activity), then read at length.
        cell[1] = db.execute(
            f"SELECT max(s.activity) FROM sessions s INDEXED BY sessions_place"
            f" WHERE {' AND '.join([sclause, *not_hidden])}"
            " AND s.cwd = ? AND s.agent = ?",
            [*args, *not_args, cwd, agent],
        ).fetchone()[0]
    return [(cwd, agent, n, last) for (cwd, agent), (n, last) in out.items() if n > 0]


class TopSessions:
    """The sessions with the most tokens, from ``session_tokens`` (an index walk; with a filter
    on the sessions, each visited one is looked up by its row id, or the planner scans the
    place index and sorts, whichever it finds cheaper)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        agent: str | None,
        without: list[Any] | None,
        project: str | None = None,
        imported: bool | None = None,
        collection: str | None = None,
    ) -> None:
        self.db = db
        where, self.args = id_conditions("t.session_id", None, without)
        if agent:
            where.append("t.agent = ?")
            self.args.append(agent)
        on_sessions, more = place_filters(None, project, imported, collection)
        self.source = "session_tokens t"
        if len(on_sessions) > 1:  # a condition besides the "1" every list starts with
            self.source += " JOIN sessions s ON s.id = t.session_id"
            where += _session_filters(on_sessions)
            self.args += more
        self.where = " AND ".join(["1", *where])

    def ranked(self, n: int) -> list[tuple[int, int]]:
        """(session row id, tokens) of the ``n`` first, largest first."""
        return self.db.execute(
            f"SELECT t.session_id, t.tokens FROM {self.source} WHERE {self.where} ORDER BY t.tokens DESC LIMIT ?",
            [*self.args, n],
        ).fetchall()

    def at_least(self, tokens: int) -> tuple[str, list[Any]]:
        """A SELECT of every session with at least ``tokens``, and its parameters."""
        return f"SELECT t.session_id FROM {self.source} WHERE {self.where} AND t.tokens >= ?", [
            *self.args,
            tokens,
        ]


def daily_without(
    db: sqlite3.Connection,
    by: str,
    agent: str | None,
    days: tuple[str | None, str | None],
    without: list[Any],
) -> tuple[list[tuple[Any, ...]], dict[str, int] | None]:
    """By day, model or agent from the per-day tables (``usage_daily``, over all days
    ``usage_totals``) minus the hidden sessions' rollup rows: (the groups as
    agtaild.index.stats.assemble takes them, by agent the sessions with usage per agent).

    The groups come in the order the rollup's GROUP BY gives them (by day: day, model, flag,
    agent), so the costs add up as they do from the rollup."""
    where, args = ["1"], []
    if agent:
        where.append("u.agent = ?")
        args.append(agent)
    since, until = days
    if since is not None:
        where.append("u.day >= ?")
        args.append(since)
    if until is not None:
        where.append("u.day <= ?")
        args.append(until)
    clause = " AND ".join(where)
    table = "usage_daily" if by == "day" or since is not None or until is not None else "usage_totals"
    own, own_args = id_conditions("u.session_id", without, None)
    # The hidden sessions' rows by their ids ("+": not by the rollup's agent or day index).
    by_ids = " AND ".join([clause.replace("u.", "+u."), *own])
    if by == "day":
        rows = db.execute(
            f"SELECT u.day, nullif(u.model, ''), u.long_ctx, {COLUMNS}, u.agent FROM usage_daily u"
            f" WHERE {clause} ORDER BY u.day, 2, u.long_ctx, u.agent",
            args,
        ).fetchall()
        hidden = db.execute(
            f"SELECT u.day, nullif(u.model, ''), u.long_ctx, u.agent, count(*), {SUMS} FROM usage_rollup u"
            f" WHERE {by_ids} GROUP BY 1, 2, 3, 4",
            [*args, *own_args],
        ).fetchall()
        return _days_without(db, rows, hidden), None
    first = "u.agent" if by == "agent" else "nullif(u.model, '')"
    keys = f"{first}, nullif(u.model, ''), u.long_ctx"
    rows = db.execute(
        f"SELECT {keys}, sum(u.n), {SUMS} FROM {table} u WHERE {clause} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        args,
    ).fetchall()
    hidden = db.execute(
        f"SELECT {keys}, count(*), {SUMS} FROM usage_rollup u WHERE {by_ids} GROUP BY 1, 2, 3",
        [*args, *own_args],
    ).fetchall()
    groups = [(*r[:3], *r[4:], None) for r in _take_away(rows, hidden, 3)]
    counts = None
    if by == "agent":
        not_hidden, not_args = id_conditions("u.session_id", None, without)
        counts = dict(
            db.execute(
                f"SELECT u.agent, count(DISTINCT u.session_id) FROM usage_rollup u"
                f" WHERE {' AND '.join([clause, *not_hidden])} GROUP BY u.agent",
                [*args, *not_args],
            ).fetchall()
        )
    return groups, counts


def _days_without(
    db: sqlite3.Connection, rows: list[tuple[Any, ...]], hidden: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``usage_daily``'s rows (day, model, long_ctx, sums, agent) minus the hidden sessions'
    groups (day, model, long_ctx, agent, rollup rows, sums): only the rows of the hidden
    sessions' days are looked at; a row left with no rollup row behind it goes."""
    if not hidden:
        return rows
    gone: dict[tuple[Any, ...], tuple[int, list[int]]] = {}
    for day, model, long_ctx, agent, n, *sums in hidden:
        behind = db.execute(
            "SELECT n FROM usage_daily WHERE day = ? AND agent = ? AND model = coalesce(?, '') AND long_ctx = ?",
            (day, agent, model, long_ctx),
        ).fetchone()
        gone[(day, model, long_ctx, agent)] = ((behind[0] if behind else 0) - n, sums)
    days = {key[0] for key in gone}
    out = []
    for r in rows:
        if r[0] in days:
            hit = gone.get((r[0], r[1], r[2], r[8]))
            if hit is not None:
                left, sums = hit
                if left <= 0:
                    continue
                r = (*r[:3], *(a - b for a, b in zip(r[3:8], sums, strict=True)), r[8])
        out.append(r)
    return out
