"""Sums per place and per session, kept by triggers: ``projects`` and ``stats`` by project,
agent and session (top N) read tables whose size follows the places, not the sessions.

A *place* is what the session filters of those answers look at: (agent, kind, collection,
cwd, project). Three tables (schema m020_places):

* ``places``: per place, its ``sessions``, the ``used`` ones among them (with counted usage:
  a row in ``usage_rollup``) and the latest ``activity``;
* ``place_usage``: the ``usage_rollup`` rows of the place's sessions summed per (model,
  long-context flag), ``n`` the rollup rows behind a sum (a model '' is an unknown one);
* ``session_tokens``: per session row id, its rollup rows summed (input + output + cache
  read + cache write, the order of ``stats --by session``), indexed by that total, so a top N
  is an index walk.

Grouping ``usage_rollup`` joined with ``sessions`` (65,509 rows at 10 GB, each with its JSON)
cost 60–760 ms per answer there. Triggers keep the sums in the transaction that changes
the rows, whoever writes them (the writer, a migration, a rebuild of the rollup), under one
rule: the tables hold the rollup rows whose session row exists, each at its session's place.
So a rollup row counts when it is inserted, and when a session row appears with rows already
there (a reused row id); it stops counting when it is deleted or its session row is; a
session whose place changes carries its rows along. ``recount`` computes the same from the
base tables (the check the tests make, and the way back when a table is missing).
"""

from __future__ import annotations

import sqlite3
from typing import Any

TABLES = ("places", "place_usage", "session_tokens")

SCHEMA = """
CREATE TABLE IF NOT EXISTS places (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    collection TEXT,
    cwd TEXT,
    project TEXT,
    sessions INTEGER NOT NULL,      -- session rows at this place
    used INTEGER NOT NULL,          -- those with counted usage (rows in usage_rollup)
    activity REAL                   -- the latest activity of its sessions
);
CREATE INDEX IF NOT EXISTS places_key ON places(cwd, agent, kind, project, collection);
CREATE TABLE IF NOT EXISTS place_usage (
    place INTEGER NOT NULL,
    model TEXT NOT NULL,            -- '' unknown
    long_ctx INTEGER NOT NULL,
    n INTEGER NOT NULL,             -- usage_rollup rows summed here
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    reasoning INTEGER NOT NULL,
    PRIMARY KEY (place, model, long_ctx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_tokens (
    session_id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    tokens INTEGER NOT NULL,        -- input + output + cache_read + cache_write
    n INTEGER NOT NULL              -- usage_rollup rows summed here
);
CREATE INDEX IF NOT EXISTS session_tokens_total ON session_tokens(tokens);
CREATE INDEX IF NOT EXISTS session_tokens_agent ON session_tokens(agent, tokens);
"""

#: The place columns; a session row and a places row match when all five are the same.
KEY = ("agent", "kind", "collection", "cwd", "project")


def _match(row: str, place: str = "") -> str:
    """``place``'s columns (bare when ''), equal to ``row``'s (NULL equal to NULL)."""
    p = f"{place}." if place else ""
    return " AND ".join(f"{p}{c} {'=' if c in ('agent', 'kind') else 'IS'} {row}.{c}" for c in KEY)


def _place_of(row: str) -> str:
    return f"(SELECT p.id FROM places p WHERE {_match(row, 'p')})"


_SUMS = ("input", "output", "cache_read", "cache_write", "reasoning")
_ADD = ", ".join(f"{c} = {c} + excluded.{c}" for c in ("n", *_SUMS))
_TOKENS = "{r}.input + {r}.output + {r}.cache_read + {r}.cache_write"


def _add_rows(place: str, sign: int, session_id: str) -> str:
    """Add (``sign`` 1) or take away (-1) the rollup rows of one session at ``place``."""
    sums = ", ".join(f"{sign} * sum(u.{c})" for c in _SUMS)
    return (
        "INSERT INTO place_usage (place, model, long_ctx, n, input, output, cache_read, cache_write, reasoning)"
        f" SELECT {place}, coalesce(u.model, ''), u.long_ctx, {sign} * count(*), {sums} FROM usage_rollup u"
        f" WHERE u.session_id = {session_id} GROUP BY 2, 3"
        f" ON CONFLICT (place, model, long_ctx) DO UPDATE SET {_ADD};"
    )


def _enter(row: str) -> str:
    """A session row at its place: counted, its rollup rows added (the body of two triggers)."""
    return f"""
    INSERT INTO places (agent, kind, collection, cwd, project, sessions, used, activity)
        SELECT {row}.agent, {row}.kind, {row}.collection, {row}.cwd, {row}.project, 0, 0, {row}.activity
        WHERE NOT EXISTS (SELECT 1 FROM places p WHERE {_match(row, "p")});
    UPDATE places SET sessions = sessions + 1, activity = max(coalesce(activity, {row}.activity), {row}.activity),
        used = used + EXISTS (SELECT 1 FROM session_tokens t WHERE t.session_id = {row}.id)
        WHERE {_match(row)};
    {_add_rows(_place_of(row), 1, f"{row}.id")}
    """


def _leave(row: str) -> str:
    """A session row leaving its place (deleted, or moved: the row already holds its new
    values, so the latest activity left is read from the other sessions)."""
    latest = f"(SELECT max(s.activity) FROM sessions s WHERE {_match(row, 's')})"
    return f"""
    {_add_rows(_place_of(row), -1, f"{row}.id")}
    UPDATE places SET sessions = sessions - 1,
        used = used - EXISTS (SELECT 1 FROM session_tokens t WHERE t.session_id = {row}.id),
        activity = CASE WHEN {row}.activity < activity THEN activity ELSE {latest} END
        WHERE {_match(row)};
    DELETE FROM place_usage WHERE place = {_place_of(row)} AND n = 0;
    DELETE FROM places WHERE {_match(row)} AND sessions <= 0;
    """


_SAME_PLACE = " AND ".join(f"old.{c} {'=' if c in ('agent', 'kind') else 'IS'} new.{c}" for c in KEY)
_SESSION_PLACE = (
    f"(SELECT p.id FROM sessions s JOIN places p ON {_match('s', 'p')} WHERE s.id = {{r}}.session_id)"
)


def _triggers() -> list[str]:
    new_place = _SESSION_PLACE.format(r="new")
    old_place = _SESSION_PLACE.format(r="old")
    new_sums = ", ".join(f"new.{c}" for c in _SUMS)
    take = ", ".join(f"{c} = {c} - old.{c}" for c in _SUMS)
    return [
        f"""CREATE TRIGGER places_rollup_add AFTER INSERT ON usage_rollup BEGIN
        INSERT INTO session_tokens (session_id, agent, tokens, n)
            VALUES (new.session_id, new.agent, {_TOKENS.format(r="new")}, 1)
            ON CONFLICT (session_id) DO UPDATE SET tokens = tokens + excluded.tokens, n = n + 1;
        INSERT INTO place_usage (place, model, long_ctx, n, input, output, cache_read, cache_write, reasoning)
            SELECT x.id, coalesce(new.model, ''), new.long_ctx, 1, {new_sums}
            FROM (SELECT {new_place} AS id) x WHERE x.id IS NOT NULL
            ON CONFLICT (place, model, long_ctx) DO UPDATE SET {_ADD};
        UPDATE places SET used = used + 1 WHERE id = {new_place}
            AND (SELECT t.n FROM session_tokens t WHERE t.session_id = new.session_id) = 1;
        END""",
        f"""CREATE TRIGGER places_rollup_drop AFTER DELETE ON usage_rollup BEGIN
        UPDATE session_tokens SET tokens = tokens - ({_TOKENS.format(r="old")}), n = n - 1
            WHERE session_id = old.session_id;
        UPDATE place_usage SET n = n - 1, {take}
            WHERE place = {old_place} AND model = coalesce(old.model, '') AND long_ctx = old.long_ctx;
        DELETE FROM place_usage WHERE place = {old_place} AND model = coalesce(old.model, '')
            AND long_ctx = old.long_ctx AND n = 0;
        UPDATE places SET used = used - 1 WHERE id = {old_place}
            AND (SELECT t.n FROM session_tokens t WHERE t.session_id = old.session_id) = 0;
        DELETE FROM session_tokens WHERE session_id = old.session_id AND n = 0;
        END""",
        f"CREATE TRIGGER places_session_add AFTER INSERT ON sessions BEGIN {_enter('new')} END",
        f"CREATE TRIGGER places_session_drop AFTER DELETE ON sessions BEGIN {_leave('old')} END",
        # The writer rewrites every column of a session it reads again: most keep their place.
        f"""CREATE TRIGGER places_session_touch AFTER UPDATE OF activity ON sessions WHEN {_SAME_PLACE} BEGIN
        UPDATE places SET activity = CASE WHEN new.activity >= activity THEN new.activity
            WHEN old.activity < activity THEN activity
            ELSE (SELECT max(s.activity) FROM sessions s WHERE {_match("new", "s")}) END
            WHERE {_match("new")};
        END""",
        f"""CREATE TRIGGER places_session_move AFTER UPDATE OF {", ".join(KEY)} ON sessions
        WHEN NOT ({_SAME_PLACE}) BEGIN
        {_leave("old")}
        {_enter("new")}
        UPDATE session_tokens SET agent = new.agent WHERE session_id = new.id;
        END""",
    ]


TRIGGERS = ("places_rollup_add", "places_rollup_drop", "places_session_add", "places_session_drop",
            "places_session_touch", "places_session_move")  # fmt: skip


def create(db: sqlite3.Connection) -> None:
    """The tables filled from the sessions and the rollup, then the triggers (schema m020;
    again after a rebuild of the whole rollup, see ``suspend``)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    suspend(db)
    fill(db)
    for trigger in _triggers():
        db.execute(trigger)


def suspend(db: sqlite3.Connection) -> bool:
    """Drop the triggers before every rollup row is deleted and written again (a cold index,
    a recount of every key): one ``fill`` afterwards (``create``) costs less than the triggers
    row by row. True when the tables exist (an index not yet at m020 has none)."""
    for name in TRIGGERS:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    return bool(ready(db))


def fill(db: sqlite3.Connection) -> None:
    """Recompute the three tables from ``sessions`` and ``usage_rollup``."""
    for table in TABLES:
        db.execute(f"DELETE FROM {table}")
    db.execute(
        "INSERT INTO session_tokens (session_id, agent, tokens, n) SELECT u.session_id, max(u.agent),"
        f" sum({_TOKENS.format(r='u')}), count(*) FROM usage_rollup u GROUP BY u.session_id"
    )
    db.execute(
        "INSERT INTO places (agent, kind, collection, cwd, project, sessions, used, activity)"
        " SELECT s.agent, s.kind, s.collection, s.cwd, s.project, count(*), count(t.session_id), max(s.activity)"
        " FROM sessions s LEFT JOIN session_tokens t ON t.session_id = s.id"
        " GROUP BY s.cwd, s.agent, s.kind, s.project, s.collection"
    )
    sums = ", ".join(f"sum(u.{c})" for c in _SUMS)
    db.execute(
        "INSERT INTO place_usage (place, model, long_ctx, n, input, output, cache_read, cache_write, reasoning)"
        f" SELECT p.id, coalesce(u.model, ''), u.long_ctx, count(*), {sums} FROM usage_rollup u"
        f" JOIN sessions s ON s.id = u.session_id JOIN places p ON {_match('s', 'p')} GROUP BY 1, 2, 3"
    )


def ready(db: Any) -> bool:
    """Are the tables there (an index opened read-only may predate them)?"""
    return (
        db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'place_usage'"
        ).fetchone()[0]
        == 1
    )


# -- the check ------------------------------------------------------------------------------
def kept(db: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The three tables as the triggers keep them, by place key (ids are not compared)."""
    key = ", ".join(f"p.{c}" for c in KEY)
    return {
        "places": sorted(
            db.execute(f"SELECT {key}, p.sessions, p.used, p.activity FROM places p").fetchall(), key=repr
        ),
        "place_usage": sorted(
            db.execute(
                f"SELECT {key}, u.model, u.long_ctx, u.n, {', '.join('u.' + c for c in _SUMS)}"
                " FROM place_usage u JOIN places p ON p.id = u.place"
            ).fetchall(),
            key=repr,
        ),
        "session_tokens": db.execute(
            "SELECT session_id, agent, tokens, n FROM session_tokens ORDER BY 1"
        ).fetchall(),
    }


def recount(db: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The same, computed from ``sessions`` and ``usage_rollup`` alone."""
    key = ", ".join(f"s.{c}" for c in KEY)
    tokens = _TOKENS.format(r="u")
    has_usage = "EXISTS (SELECT 1 FROM usage_rollup r WHERE r.session_id = s.id)"
    return {
        "places": sorted(
            db.execute(
                f"SELECT {key}, count(*), sum({has_usage}), max(s.activity) FROM sessions s GROUP BY {key}"
            ).fetchall(),
            key=repr,
        ),
        "place_usage": sorted(
            db.execute(
                f"SELECT {key}, coalesce(u.model, ''), u.long_ctx, count(*),"
                f" {', '.join(f'sum(u.{c})' for c in _SUMS)} FROM usage_rollup u JOIN sessions s"
                f" ON s.id = u.session_id GROUP BY {key}, 6, 7"
            ).fetchall(),
            key=repr,
        ),
        "session_tokens": db.execute(
            f"SELECT u.session_id, max(u.agent), sum({tokens}), count(*) FROM usage_rollup u GROUP BY 1 ORDER BY 1"
        ).fetchall(),
    }
