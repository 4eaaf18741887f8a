"""Counting each API response once, and the per-session rollup that stats read.

Resume replays and imported copies repeat responses, so exactly one usage row per
(agent, key) has ``counted = 1``: the largest, then the earliest session, then the smallest
path — a choice that never depends on the order files were read in. ``usage_rollup`` holds the
counted usage summed per (session, agent, day, model, long-context flag), and ``usage_daily``
the same summed over sessions, per (day, agent, model, long-context flag): its size follows the
calendar, not the number of sessions, so stats by day, model or agent stay as fast at 2 GB as
at 200 MB. Both are derived, and written in the transaction that changes the usage they sum.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


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
        db.execute(
            "UPDATE usage SET counted = 1 WHERE counted = 0"
            " AND (agent, key) NOT IN (SELECT agent, key FROM _recount)"
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
    if sessions is None:
        db.execute("DELETE FROM usage_rollup")
        db.execute(f"INSERT INTO usage_rollup {columns} FROM usage u WHERE u.counted = 1{group}")
        rebuild_daily(db)
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
    # usage_daily follows by difference: minus the rollup rows about to go, plus the new ones.
    _add_daily(db, -1)
    db.execute("DELETE FROM usage_rollup WHERE session_id IN (SELECT session_id FROM _rs)")
    db.execute("DELETE FROM usage_rollup WHERE (session_id, day) IN (SELECT session_id, day FROM _rd)")
    db.execute(
        f"INSERT INTO usage_rollup {columns} FROM _rs r JOIN usage u ON u.session_id = r.session_id"
        f" WHERE u.counted = 1{group}"
    )
    db.execute(
        f"INSERT INTO usage_rollup {columns} FROM _rd d JOIN usage u ON u.session_id = d.session_id"
        f" AND u.day = d.day WHERE u.counted = 1{group}"
    )
    _add_daily(db, +1)
    db.execute("DELETE FROM usage_daily WHERE n = 0")


#: usage_rollup rows summed per usage_daily key. A NULL model is stored as '' (a primary key
#: must compare equal to itself); stats read it back as NULL, and both mean "(unknown)".
_DAILY_SUMS = (
    "u.day, u.agent, coalesce(u.model, ''), u.long_ctx, {sign} * count(*), {sign} * sum(u.input),"
    " {sign} * sum(u.output), {sign} * sum(u.cache_read), {sign} * sum(u.cache_write),"
    " {sign} * sum(u.reasoning)"
)
_DAILY_COLUMNS = "(day, agent, model, long_ctx, n, input, output, cache_read, cache_write, reasoning)"


def rebuild_daily(db: sqlite3.Connection) -> None:
    """Recompute ``usage_daily`` from ``usage_rollup`` (a full refresh, the m004 migration)."""
    db.execute("DELETE FROM usage_daily")
    db.execute(
        f"INSERT INTO usage_daily {_DAILY_COLUMNS} SELECT {_DAILY_SUMS.format(sign=1)}"
        " FROM usage_rollup u GROUP BY 1, 2, 3, 4"
    )


def _add_daily(db: sqlite3.Connection, sign: int) -> None:
    """Add (``sign`` = 1) or take away (-1) the rollup rows of the groups in ``_rs``/``_rd``.

    ``n`` counts the rollup rows behind a daily row, so a row whose last group went away is
    dropped (a group of zero tokens still names its model, as it did before)."""
    sums = _DAILY_SUMS.format(sign=sign)
    upsert = (
        " WHERE 1 GROUP BY 1, 2, 3, 4 ON CONFLICT (day, agent, model, long_ctx) DO UPDATE SET"
        " n = n + excluded.n, input = input + excluded.input, output = output + excluded.output,"
        " cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,"
        " reasoning = reasoning + excluded.reasoning"
    )
    db.execute(
        f"INSERT INTO usage_daily {_DAILY_COLUMNS} SELECT {sums}"
        f" FROM _rs r JOIN usage_rollup u ON u.session_id = r.session_id{upsert}"
    )
    db.execute(
        f"INSERT INTO usage_daily {_DAILY_COLUMNS} SELECT {sums}"
        f" FROM _rd d JOIN usage_rollup u ON u.session_id = d.session_id AND u.day = d.day{upsert}"
    )
