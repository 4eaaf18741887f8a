"""``event_quarters`` and ``usage_quarters``: each session's events and counted tokens per
quarter hour, kept by the writer.

``stats --by hour`` counts events per local weekday × hour. Counting them meant a scan of every
event (1.06 s at the 2 GB corpus, growing with the history); the counts per (session, quarter
hour) are far fewer rows — a session spans a few quarters — and answer the same question: every
UTC offset and every daylight-saving change falls on a quarter hour, so one quarter lies in one
local hour whatever the time zone (agtaild.index.activity turns quarters into local hours).

The writer keeps ``event_quarters`` in the transaction that inserts or deletes the events
(agtaild.index.writer): inserted rows add to their quarters, deleted ones subtract (a whole
session's rows go at once); a quarter whose count falls to zero is removed. ``usage_quarters``
(the counted usage per session, local day, quarter, model and long-context flag) is recomputed
with ``usage_rollup``, for the same sessions and (session, day) groups
(agtaild.index.usage.refresh_rollup): a usage row's ``counted`` flag moves when a copy of its
message is found elsewhere, and the rollup already knows which groups that touches. Events without a
time are in no quarter, as they are in no hour. Filters by agent or project join the session;
a since/until bound that is not on a quarter hour cannot be answered from whole quarters, and
the caller counts the events themselves then.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from agtaild.index import week
from agtaild.index.selection import Picked, id_conditions

#: Added to epochs before they are cut into quarter hours, so that the integer division floors
#: (times before 1970 too): a whole number of quarters, about 119 years.
SHIFT = 900 * 2**22
#: The quarter of an epoch column, in SQL (the same as :func:`quarter_of`).
QUARTER_SQL = "CAST(({col} + " + str(SHIFT) + ") / 900 AS INTEGER)"
#: Where ``epoch`` sits in an events row as the writer binds it (agtaild.index.prepare.EventRow).
_EPOCH_AT = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS event_quarters (
    session_id INTEGER NOT NULL,
    quarter INTEGER NOT NULL,       -- (epoch + SHIFT) // 900
    n INTEGER NOT NULL,
    PRIMARY KEY (session_id, quarter)
) WITHOUT ROWID;
"""


USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage_quarters (
    session_id INTEGER NOT NULL,
    day TEXT NOT NULL,              -- the usage rows' day: how usage_rollup's groups name them
    quarter INTEGER NOT NULL,
    model TEXT NOT NULL,            -- '' unknown
    long_ctx INTEGER NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    reasoning INTEGER NOT NULL,
    agent TEXT NOT NULL DEFAULT '',  -- the session's (agtaild.index.week sums by it); m015
    PRIMARY KEY (session_id, day, quarter, model, long_ctx)
) WITHOUT ROWID;
"""
#: ``INSERT INTO usage_quarters`` the counted usage rows of a FROM clause naming them ``u``.
USAGE_INSERT = (
    "INSERT INTO usage_quarters (session_id, day, quarter, model, long_ctx, input, output, cache_read,"
    " cache_write, reasoning, agent) SELECT u.session_id, u.day, " + QUARTER_SQL.format(col="u.epoch") + ","
    " coalesce(u.model, ''), u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_write),"
    " sum(u.reasoning), min(u.agent) {source} WHERE u.counted = 1 AND u.epoch IS NOT NULL {cond}"
    " GROUP BY 1, 2, 3, 4, 5"
)


def quarter_of(epoch: float) -> int:
    """As SQLite computes :data:`QUARTER_SQL` (a float division, then truncation)."""
    return int((epoch + SHIFT) / 900)


def aligned(epoch: float) -> bool:
    """Is ``epoch`` on a quarter hour (a bound whole quarters can answer)?"""
    return float(epoch) % 900 == 0


def answers(bounds: Iterable[float]) -> bool:
    """Can whole quarters answer a question with these since/until bounds?"""
    return all(aligned(b) for b in bounds)


def create(db: sqlite3.Connection) -> None:
    """The tables, filled from the stored events and usage (an index of an older layout, no
    rebuild)."""
    db.execute(USAGE_SCHEMA)
    db.execute("DELETE FROM usage_quarters")
    db.execute(USAGE_INSERT.format(source="FROM usage u", cond=""))
    db.execute(SCHEMA)
    db.execute("DELETE FROM event_quarters")
    db.execute(
        f"INSERT INTO event_quarters (session_id, quarter, n) SELECT session_id, {QUARTER_SQL.format(col='epoch')},"
        " count(*) FROM events WHERE epoch IS NOT NULL GROUP BY 1, 2"
    )


def add_rows(db: sqlite3.Connection, session_id: int, rows: Iterable[Sequence[Any]]) -> None:
    """Count the events rows just inserted for ``session_id`` into their quarters."""
    counts = Counter(int((r[_EPOCH_AT] + SHIFT) / 900) for r in rows if r[_EPOCH_AT] is not None)
    if counts:
        db.executemany(
            "INSERT INTO event_quarters (session_id, quarter, n) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id, quarter) DO UPDATE SET n = n + excluded.n",
            [(session_id, q, n) for q, n in counts.items()],
        )
        week.add_events(db, session_id, counts, +1)


def drop_session(db: sqlite3.Connection, session_id: int) -> None:
    gone = db.execute("SELECT quarter, n FROM event_quarters WHERE session_id = ?", (session_id,)).fetchall()
    week.add_events(db, session_id, dict(gone), -1)
    db.execute("DELETE FROM event_quarters WHERE session_id = ?", (session_id,))


def drop_where(db: sqlite3.Connection, session_id: int, where: str, args: Sequence[Any]) -> None:
    """Before the events matching ``where`` (of ``session_id``) are deleted: take them out."""
    gone = db.execute(
        f"SELECT {QUARTER_SQL.format(col='epoch')}, count(*) FROM events WHERE {where} AND epoch IS NOT NULL GROUP BY 1",
        args,
    ).fetchall()
    if not gone:
        return
    db.executemany(
        "UPDATE event_quarters SET n = n - ? WHERE session_id = ? AND quarter = ?",
        [(n, session_id, q) for q, n in gone],
    )
    db.execute("DELETE FROM event_quarters WHERE session_id = ? AND n <= 0", (session_id,))
    week.add_events(db, session_id, {int(q): int(n) for q, n in gone}, -1)


def counts(
    db: sqlite3.Connection,
    *,
    agent: str | None,
    project: str | None,
    since: float | None,
    until: float | None,
    picked: Picked = (None, None),
) -> list[tuple[int, int]]:
    """(quarter, events) over the sessions the filters keep; bounds must be :func:`aligned`."""
    where, args, join = _filters(agent, project, since, until, picked)
    sql = f"SELECT q.quarter, sum(q.n) FROM event_quarters q{join} WHERE {where} GROUP BY 1"
    return [(int(q), int(n)) for q, n in db.execute(sql, args)]


def usage_counts(
    db: sqlite3.Connection,
    *,
    agent: str | None,
    project: str | None,
    since: float | None,
    until: float | None,
    picked: Picked = (None, None),
) -> list[tuple[Any, ...]]:
    """(quarter, model or None, long_ctx, input, output, cache_read, cache_write, reasoning)
    summed over the sessions the filters keep; bounds must be :func:`aligned`."""
    where, args, join = _filters(agent, project, since, until, picked)
    sql = (
        "SELECT q.quarter, nullif(q.model, ''), q.long_ctx, sum(q.input), sum(q.output), sum(q.cache_read),"
        f" sum(q.cache_write), sum(q.reasoning) FROM usage_quarters q{join} WHERE {where} GROUP BY 1, 2, 3"
    )
    return db.execute(sql, args).fetchall()


def _filters(
    agent: str | None, project: str | None, since: float | None, until: float | None, picked: Picked
) -> tuple[str, list[Any], str]:
    """The conditions on ``q`` (a quarters table): the session filters, the user's own state's
    selection (agtaild.index.selection: hidden sessions out, labels, stars), the bounds."""
    where, args = id_conditions("q.session_id", *picked)
    where = ["1", *where]
    join = ""
    if agent or project:
        join = " JOIN sessions s ON s.id = q.session_id"
        if agent:
            where.append("s.agent = ?")
            args.append(agent)
        if project:
            where.append("s.project = ?")
            args.append(project)
    if since is not None:
        where.append("q.quarter >= ?")
        args.append(quarter_of(since))
    if until is not None:
        where.append("q.quarter < ?")
        args.append(quarter_of(until))
    return " AND ".join(where), args, join
