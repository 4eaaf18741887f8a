"""``week_events`` and ``week_usage``: the activity per quarter hour of the week, over the
whole history, kept by the writer: ``stats --by hour`` at any size.

``stats --by hour`` asks for weekday × hour of the local time zone over everything. The
per-session quarter counts (agtaild.index.quarters) grow with sessions × quarters, i.e. with
the history; these tables have a row per (UTC quarter of the week, UTC offset, agent[, model,
long-context flag]) — at most 672 × the offsets the zone has used × agents × models, whatever
the size of the history.

The buckets are the UTC quarter of the week (0 = Monday 00:00–00:15 UTC … 671), a time-zone
independent key: every UTC offset is a whole number of quarter hours, so a quarter of the UTC
week lies in one local hour of one local weekday for a given offset. ``utc_offset`` is the
offset (minutes east of UTC) the index's time zone had at that instant (agtaild.index.upkeep
keeps the zone in ``meta.tz``): a daylight-saving zone's summer and winter quarters are
apart, so the local hour of each bucket is exact. (For another zone of fixed offset, the
buckets summed over ``utc_offset`` and shifted by that offset give the same answer.) A change
of the zone rebuilds them (``rebuild``), as it re-dates the usage.

``week_events`` follows ``event_quarters`` (each change of a session's count per quarter is
added to its bucket, with the session's agent); ``week_usage`` follows ``usage_quarters`` by
difference in the transaction that refreshes it (agtaild.index.usage.refresh_rollup): minus the
rows about to be replaced, plus the new ones; ``n`` counts the rows behind a bucket and a bucket
of none is dropped. Filters these buckets cannot answer (a project, a date bound, the user's
selection of sessions) are answered from the per-session quarters, as before.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

#: Quarter hours in a week.
WEEK = 672
#: ``(quarter + ROTATE) % WEEK`` is the UTC quarter of the week, Monday 00:00 first:
#: quarters count from SHIFT (agtaild.index.quarters, 2**22 quarters before 1970), and
#: 1970-01-01 was a Thursday (288 quarters after Monday 00:00).
ROTATE = (288 - 2**22) % WEEK

SCHEMA = """
CREATE TABLE IF NOT EXISTS week_events (
    qow INTEGER NOT NULL,           -- UTC quarter of the week, 0 = Monday 00:00
    utc_offset INTEGER NOT NULL,    -- minutes east of UTC of the index's zone then
    agent TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (qow, utc_offset, agent)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS week_usage (
    qow INTEGER NOT NULL,
    utc_offset INTEGER NOT NULL,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,            -- '' unknown
    long_ctx INTEGER NOT NULL,
    n INTEGER NOT NULL,             -- usage_quarters rows summed here
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    reasoning INTEGER NOT NULL,
    PRIMARY KEY (qow, utc_offset, agent, model, long_ctx)
) WITHOUT ROWID;
"""

_SHIFT_Q = 2**22
#: The tables (a reindex empties them with the other derived tables).
TABLES = ("week_events", "week_usage")  # agtaild.index.quarters.SHIFT // 900


def utc_offset(quarter: int) -> int:
    """The local zone's offset from UTC (minutes east) at the start of ``quarter``."""
    try:
        return int(time.localtime((quarter - _SHIFT_Q) * 900).tm_gmtoff) // 60
    except (OverflowError, OSError, ValueError):
        return 0


def install(db: sqlite3.Connection) -> None:
    """The SQL functions the upkeep of these tables uses (every index connection has them)."""
    db.create_function("agtail_utc_offset", 1, utc_offset)


def ensure(db: sqlite3.Connection) -> None:
    """The tables, empty if they were missing (a migration older than m015 refreshing the
    rollup meets them before m015 fills them)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def create(db: sqlite3.Connection) -> None:
    """The tables, filled from the per-session quarters (schema m015)."""
    ensure(db)
    rebuild(db)


def rebuild(db: sqlite3.Connection) -> None:
    """Both tables anew from the per-session quarters (also after a change of time zone: the
    offsets move)."""
    install(db)
    db.execute("DELETE FROM week_events")
    db.execute(
        f"INSERT INTO week_events (qow, utc_offset, agent, n) SELECT (q.quarter + {ROTATE}) % {WEEK},"
        " agtail_utc_offset(q.quarter), s.agent, sum(q.n) FROM event_quarters q"
        " JOIN sessions s ON s.id = q.session_id GROUP BY 1, 2, 3"
    )
    rebuild_usage(db)


def rebuild_usage(db: sqlite3.Connection) -> None:
    ensure(db)
    install(db)
    db.execute("DELETE FROM week_usage")
    db.execute(_usage_sums(1, "FROM usage_quarters q", upsert=False))


def _usage_sums(sign: int, source: str, *, upsert: bool) -> str:
    """``INSERT INTO week_usage`` the usage_quarters rows of ``source`` (naming them ``q``),
    times ``sign``; ``upsert`` adds them to the buckets already there."""
    values = ("input", "output", "cache_read", "cache_write", "reasoning")
    sql = (
        "INSERT INTO week_usage (qow, utc_offset, agent, model, long_ctx, n, " + ", ".join(values) + ")"
        f" SELECT (q.quarter + {ROTATE}) % {WEEK}, agtail_utc_offset(q.quarter), q.agent, q.model, q.long_ctx,"
        f" {sign} * count(*), " + ", ".join(f"{sign} * sum(q.{v})" for v in values) + f" {source}"
        " WHERE 1 GROUP BY 1, 2, 3, 4, 5"
    )
    if upsert:
        adds = ", ".join(f"{c} = {c} + excluded.{c}" for c in ("n", *values))
        sql += f" ON CONFLICT (qow, utc_offset, agent, model, long_ctx) DO UPDATE SET {adds}"
    return sql


def add_usage(db: sqlite3.Connection, sign: int, sources: Iterable[str]) -> None:
    """Add (1) or take away (-1) the usage_quarters rows of each FROM clause in ``sources``."""
    ensure(db)
    install(db)
    for source in sources:
        db.execute(_usage_sums(sign, source, upsert=True))
    if sign > 0:
        db.execute("DELETE FROM week_usage WHERE n = 0")


def add_events(
    db: sqlite3.Connection, session_id: int, counts: Counter[int] | dict[int, int], sign: int
) -> None:
    """Add ``sign`` × ``counts`` (quarter → events) of one session to its agent's buckets."""
    if not counts:
        return
    row = db.execute("SELECT agent FROM sessions WHERE id = ?", (session_id,)).fetchone()
    agent = row[0] if row else ""
    buckets: Counter[tuple[int, int]] = Counter()
    for quarter, n in counts.items():
        buckets[((quarter + ROTATE) % WEEK, utc_offset(quarter))] += n
    db.executemany(
        "INSERT INTO week_events (qow, utc_offset, agent, n) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (qow, utc_offset, agent) DO UPDATE SET n = n + excluded.n",
        [(qow, off, agent, sign * n) for (qow, off), n in buckets.items()],
    )
    if sign < 0:
        db.execute("DELETE FROM week_events WHERE n <= 0")


def answers(*, project: str | None, since: Any, until: Any, picked: Any) -> bool:
    """Can the buckets answer (no project, no bound, no selection of sessions)?"""
    chosen = picked[0] is not None or bool(picked[1])
    return project is None and since is None and until is None and not chosen


#: The local hour of the week (0 = Monday 00:00–01:00 local) of a bucket, in SQL.
LOCAL_HOUR_SQL = f"((qow + utc_offset / 15) % {WEEK} + {WEEK}) % {WEEK} / 4"


def event_counts(db: sqlite3.Connection, agent: str | None) -> list[tuple[int, int]]:
    """(local hour of the week, events); the hour 0 is Monday 00:00 local."""
    where, args = ("agent = ?", [agent]) if agent else ("1", [])
    sql = f"SELECT {LOCAL_HOUR_SQL}, sum(n) FROM week_events WHERE {where} GROUP BY 1"
    return [(int(h), int(n)) for h, n in db.execute(sql, args)]


def usage_counts(db: sqlite3.Connection, agent: str | None) -> list[tuple[Any, ...]]:
    """(local hour of the week, model or None, long_ctx, input, output, cache_read,
    cache_write, reasoning)."""
    where, args = ("agent = ?", [agent]) if agent else ("1", [])
    return db.execute(
        f"SELECT {LOCAL_HOUR_SQL}, nullif(model, ''), long_ctx, sum(input), sum(output), sum(cache_read),"
        f" sum(cache_write), sum(reasoning) FROM week_usage WHERE {where} GROUP BY 1, 2, 3",
        args,
    ).fetchall()
