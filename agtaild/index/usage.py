"""Counting each API response once, and the per-session rollup that stats read.

Resume replays and imported copies repeat responses, so exactly one usage row per
(agent, key) has ``counted = 1``: the largest, then the earliest session, then the smallest
path — a choice that never depends on the order files were read in. ``usage_rollup`` holds the
counted usage summed per (session, agent, day, model, long-context flag); ``usage_daily`` the
same summed over sessions, per (day, agent, model, long-context flag), and ``usage_totals`` over
days too, per (agent, model, long-context flag): their sizes follow the calendar or the models,
not the number of sessions, so stats by day, model or agent stay fast as the history grows.
All are derived, and written in the transaction that changes the usage they sum.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from agtaild.index import places, quarters, week

#: Sessions per statement when the whole rollup is rebuilt (bounds the sort's memory).
ROLLUP_CHUNK = 500
#: Usage rows per statement when every key is re-counted (bounds the statement journal).
RECOUNT_CHUNK = 20_000


def _id_ranges(db: sqlite3.Connection, table: str, step: int) -> Iterator[tuple[int, int]]:
    """[start, end) ranges of ``step`` row ids covering every row of ``table``: a statement
    over the whole table run a range at a time keeps its memory bounded (temp_store is MEMORY)."""
    low, high = db.execute(f"SELECT min(id), max(id) FROM {table}").fetchone()
    for start in range(low or 0, (high or 0) + 1, step):
        yield start, start + step


def recount(db: sqlite3.Connection, keys: set[tuple[str, str]] | None) -> None:
    """Re-elect the counted copy of each (agent, key) given (None: of every key).

    Every key: a key with one copy counts it, so only the keys with several copies go through
    the election (a sort of every usage row by key took 3.7 s of a 2 GB cold index, growing
    faster than the corpus; finding the repeated keys reads the (agent, key) index once)."""
    if keys is not None and not keys:
        return
    db.execute("CREATE TEMP TABLE IF NOT EXISTS _recount (agent TEXT, key TEXT, PRIMARY KEY (agent, key))")
    db.execute("DELETE FROM _recount")
    if keys is None:
        db.execute(
            "INSERT INTO _recount (agent, key) SELECT agent, key FROM usage GROUP BY agent, key"
            " HAVING count(*) > 1"
        )
        # In ranges of row ids: one UPDATE of every row (a cold index: all start uncounted) kept
        # a statement journal of every page it changed in memory (temp_store is MEMORY), the
        # peak of a 2 GB cold index (+85 MB).
        for start, end in _id_ranges(db, "usage", RECOUNT_CHUNK):
            db.execute(
                "UPDATE usage SET counted = 1 WHERE id >= ? AND id < ? AND counted = 0"
                " AND (agent, key) NOT IN (SELECT agent, key FROM _recount)",
                (start, end),
            )
    else:
        db.executemany("INSERT OR IGNORE INTO _recount (agent, key) VALUES (?, ?)", list(keys))
    scope = "(u.agent, u.key) IN (SELECT agent, key FROM _recount)"
    db.execute(
        f"""
        UPDATE usage SET counted = (id IN (
            SELECT id FROM (
                SELECT u.id AS id, row_number() OVER (
                    PARTITION BY u.agent, u.key
                    ORDER BY u.total DESC, s.started IS NULL, s.started, f.path, u.id
                ) AS rn
                FROM usage u JOIN sessions s ON s.id = u.session_id JOIN files f ON f.id = s.file_id
                WHERE {scope}
            ) WHERE rn = 1
        ))
        WHERE {scope.replace("u.", "")}
        """
    )


def refresh_rollup(
    db: sqlite3.Connection,
    sessions: set[int] | None,
    days: Iterable[tuple[int, str]] = (),
    recounted: bool = False,
) -> None:
    """Recompute ``usage_rollup`` (None: all of it). Runs after ``recount``: besides the
    sessions and (session, day) groups this update changed, every group holding a copy of
    a re-counted key is recomputed (its ``counted`` flag may have moved)."""
    columns = (
        "SELECT u.session_id, u.agent, u.day, u.model, u.long_ctx, sum(u.input), sum(u.output),"
        " sum(u.cache_read), sum(u.cache_write), sum(u.reasoning)"
    )
    group = " GROUP BY u.session_id, u.agent, u.day, u.model, u.long_ctx"
    db.execute(quarters.USAGE_SCHEMA)  # an older index upgraded by a migration before m011's
    if sessions is None:
        # In ranges of session ids: one GROUP BY over every usage row sorts them all in memory
        # (temp_store is MEMORY), which made the end of a 2 GB cold index its peak (+50 MB).
        kept = places.suspend(db)  # filled once at the end instead of row by row
        db.execute("DELETE FROM usage_rollup")
        db.execute("DELETE FROM usage_quarters")
        for start, end in _id_ranges(db, "sessions", ROLLUP_CHUNK):
            db.execute(
                f"INSERT INTO usage_rollup {columns} FROM usage u WHERE u.counted = 1"
                f" AND u.session_id >= ? AND u.session_id < ?{group}",
                (start, end),
            )
            db.execute(
                quarters.USAGE_INSERT.format(
                    source="FROM usage u", cond="AND u.session_id >= ? AND u.session_id < ?"
                ),
                (start, end),
            )
        rebuild_daily(db)
        week.rebuild_usage(db)
        if kept:
            places.create(db)
        return
    db.execute("CREATE TEMP TABLE IF NOT EXISTS _rs (session_id INTEGER PRIMARY KEY)")
    db.execute(
        "CREATE TEMP TABLE IF NOT EXISTS _rd (session_id INTEGER, day TEXT, PRIMARY KEY (session_id, day))"
    )
    db.execute("DELETE FROM _rs")
    db.execute("DELETE FROM _rd")
    db.executemany("INSERT INTO _rs VALUES (?)", [(s,) for s in sessions])
    db.executemany("INSERT OR IGNORE INTO _rd VALUES (?, ?)", list(days))
    if recounted:
        db.execute(
            "INSERT OR IGNORE INTO _rd SELECT session_id, day FROM usage"
            " WHERE (agent, key) IN (SELECT agent, key FROM _recount)"
        )
    db.execute("DELETE FROM _rd WHERE session_id IN (SELECT session_id FROM _rs)")
    # CROSS JOIN below keeps the few sessions (days) to refresh as the outer loop: the planner,
    # knowing nothing of the temp tables, otherwise scanned every usage row and probed them
    # (measured: 60 ms per statement for one session of a 2 GB index, against ~1 ms).
    # usage_daily follows by difference: minus the rollup rows about to go, plus the new ones.
    _add_daily(db, -1)
    db.execute("DELETE FROM usage_rollup WHERE session_id IN (SELECT session_id FROM _rs)")
    db.execute("DELETE FROM usage_rollup WHERE (session_id, day) IN (SELECT session_id, day FROM _rd)")
    db.execute(
        f"INSERT INTO usage_rollup {columns} FROM _rs r CROSS JOIN usage u ON u.session_id = r.session_id"
        f" WHERE u.counted = 1{group}"
    )
    db.execute(
        f"INSERT INTO usage_rollup {columns} FROM _rd d CROSS JOIN usage u ON u.session_id = d.session_id"
        f" AND u.day = d.day WHERE u.counted = 1{group}"
    )
    # The same groups per quarter hour (agtaild.index.quarters: stats by hour), and their sums
    # per quarter of the week (agtaild.index.week) by difference.
    in_groups = (
        "FROM _rs r CROSS JOIN usage_quarters q ON q.session_id = r.session_id",
        "FROM _rd d CROSS JOIN usage_quarters q ON q.session_id = d.session_id AND q.day = d.day",
    )
    week.add_usage(db, -1, in_groups)
    db.execute("DELETE FROM usage_quarters WHERE session_id IN (SELECT session_id FROM _rs)")
    db.execute("DELETE FROM usage_quarters WHERE (session_id, day) IN (SELECT session_id, day FROM _rd)")
    db.execute(
        quarters.USAGE_INSERT.format(
            source="FROM _rs r CROSS JOIN usage u ON u.session_id = r.session_id", cond=""
        )
    )
    db.execute(
        quarters.USAGE_INSERT.format(
            source="FROM _rd d CROSS JOIN usage u ON u.session_id = d.session_id AND u.day = d.day", cond=""
        )
    )
    week.add_usage(db, +1, in_groups)
    _add_daily(db, +1)
    for table in SUMMED:
        db.execute(f"DELETE FROM {table} WHERE n = 0")


#: The tables summed from usage_rollup and their keys: per day (stats by day, and by model or
#: agent within dates) and overall (by model or agent over all time: its size does not grow
#: with the calendar either). A NULL model is stored as '' (a primary key must compare equal
#: to itself); stats read it back as NULL, and both mean "(unknown)".
SUMMED = {
    "usage_daily": ("day", "agent", "model", "long_ctx"),
    "usage_totals": ("agent", "model", "long_ctx"),
}
_KEY_EXPR = {"day": "u.day", "agent": "u.agent", "model": "coalesce(u.model, '')", "long_ctx": "u.long_ctx"}
_VALUES = ("input", "output", "cache_read", "cache_write", "reasoning")


def _insert_sums(table: str, sign: int, source: str, *, upsert: bool) -> str:
    """``INSERT INTO table … SELECT`` the rollup rows of ``source`` (a FROM clause naming
    them ``u``) summed per the table's key, times ``sign``; ``upsert`` adds them to the rows
    already there. ``n`` counts the rollup rows behind a row."""
    keys = SUMMED[table]
    select = ", ".join(
        [_KEY_EXPR[k] for k in keys] + [f"{sign} * count(*)"] + [f"{sign} * sum(u.{v})" for v in _VALUES]
    )
    group = ", ".join(str(i + 1) for i in range(len(keys)))
    sql = f"INSERT INTO {table} ({', '.join(keys)}, n, {', '.join(_VALUES)}) SELECT {select} {source}"
    if not upsert:
        return f"{sql} GROUP BY {group}"
    adds = ", ".join(f"{c} = {c} + excluded.{c}" for c in ("n", *_VALUES))
    return f"{sql} WHERE 1 GROUP BY {group} ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {adds}"


def rebuild_daily(db: sqlite3.Connection) -> None:
    """Recompute ``usage_daily`` and ``usage_totals`` from ``usage_rollup`` (a full refresh,
    the m004 migration)."""
    for table in SUMMED:
        db.execute(f"DELETE FROM {table}")
        db.execute(_insert_sums(table, 1, "FROM usage_rollup u", upsert=False))


def _add_daily(db: sqlite3.Connection, sign: int) -> None:
    """Add (``sign`` = 1) or take away (-1) the rollup rows of the groups in ``_rs``/``_rd``.

    A row whose last rollup row went away (``n`` = 0) is dropped by the caller; a group of
    zero tokens still names its model, as it did before."""
    for table in SUMMED:
        for source in (
            "FROM _rs r CROSS JOIN usage_rollup u ON u.session_id = r.session_id",
            "FROM _rd d CROSS JOIN usage_rollup u ON u.session_id = d.session_id AND u.day = d.day",
        ):
            db.execute(_insert_sums(table, sign, source, upsert=True))


def m010_usage_session_time(db: sqlite3.Connection) -> None:
    """Usage recorded without a time of its own is dated by its session's start (else its end),
    as agtaild.index.prepare.usage_row now does, so that date filters find it: an index made
    before kept it on no day at all ('')."""
    from agtaild.index.prepare import local_day, parse_time

    db.create_function("agtail_epoch", 1, parse_time, deterministic=True)
    db.create_function("agtail_local_day", 1, local_day)
    changed = db.execute(
        "UPDATE usage SET epoch = (SELECT agtail_epoch(coalesce(json_extract(s.data, '$.started'),"
        " json_extract(s.data, '$.ended'))) FROM sessions s WHERE s.id = usage.session_id)"
        " WHERE epoch IS NULL"
    ).rowcount
    if changed:
        db.execute(
            "UPDATE usage SET day = coalesce(agtail_local_day(epoch), '') WHERE day = '' AND epoch IS NOT NULL"
        )
        refresh_rollup(db, None)
