"""`stats --by hour` groups by quarter hour in SQL and turns quarters into local time in
Python; the answer must equal SQLite's own 'localtime' grouping (the query it replaced) in
every time zone, half- and quarter-hour offsets and daylight-saving changes included."""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agtaild.index import quarters, week
from agtaild.index.activity import _ISO_DAY, by_hour
from agtaild.index.queries import add_usage, empty_usage
from agtaild.index.schema import connect, migrate
from agtaild.pricing import PriceTable, load_pricing

ZONES = [
    "UTC",
    "America/New_York",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
]


@pytest.fixture
def zone() -> Iterator[Any]:
    old = os.environ.get("TZ")

    def use(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield use
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def _instants(rng: random.Random) -> list[float]:
    """Times around daylight-saving changes and hour edges, and random ones (from 1970 on:
    before it SQLite's 'localtime' substitutes an equivalent year, Python's does not)."""
    out: list[float] = []
    for edge in (1710054000, 1730613600, 1743861600, 1759593600, 1711846800, 86400):
        for delta in (-1800.001, -900.0, -0.001, 0.0, 0.001, 899.999, 900.0, 1799.5, 3599.999):
            out.append(edge + delta)
    out += [rng.uniform(1_600_000_000, 1_800_000_000) for _ in range(400)]
    out += [float(rng.randrange(1_700_000_000, 1_700_500_000, 900)) for _ in range(100)]
    return out


def _index(tmp_path: Any, epochs: list[float]) -> sqlite3.Connection:
    db = connect(tmp_path / "index.sqlite3")
    migrate(db)
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO files (id, path, agent, root, kind, rel, fingerprint, unit, read_at, settled)"
        " VALUES (1, '/x', 'toy', '/', 'native', 'x', x'', x'', 0, 1)"
    )
    db.execute(
        "INSERT INTO sessions (id, file_id, agent, sid, kind, activity, programmatic, archived, data)"
        " VALUES (1, 1, 'toy', 's', 'native', 0, 0, 0, '{}')"
    )
    for i, epoch in enumerate(epochs):
        db.execute(
            "INSERT INTO events (session_id, seq, kind, epoch, result_moved, data) VALUES (1, ?, 'message', ?, 0, x'')",
            (i, epoch),
        )
        db.execute(
            "INSERT INTO usage (session_id, agent, key, epoch, day, model, input, output, cache_read,"
            " cache_write, reasoning, total, long_ctx, counted) VALUES (1, 'toy', ?, ?, '', ?, ?, 7, 3, 2, 1, 0, ?, 1)",
            (f"k{i}", epoch, ["claude-sonnet-4-20250514", None, "gpt-5"][i % 3], i + 1, i % 2),
        )
    quarters.create(db)  # rows put here bypass the writer: its counts, as the migration fills them
    week.rebuild(db)
    db.execute("COMMIT")
    return db


def _by_hour_with_sqlite_localtime(db: sqlite3.Connection, pricing: PriceTable) -> dict[str, Any]:
    """The grouping as it was written before: SQLite's 'localtime' on every row."""
    cells: dict[str, dict[str, Any]] = {}

    def cell(wd: str, hour: str) -> dict[str, Any]:
        day = _ISO_DAY.get(wd, 0)
        key = f"{day} {hour}"
        if key not in cells:
            cells[key] = {"key": key, "weekday": day, "hour": int(hour), "events": 0, **empty_usage()}
        return cells[key]

    local = "strftime('%w', {c}, 'unixepoch', 'localtime'), strftime('%H', {c}, 'unixepoch', 'localtime')"
    for wd, hour, n in db.execute(f"SELECT {local.format(c='epoch')}, count(*) FROM events GROUP BY 1, 2"):
        cell(wd, hour)["events"] += n
    totals = empty_usage()
    for wd, hour, model, long_ctx, inp, outp, cr, cw, rs in db.execute(
        f"SELECT {local.format(c='epoch')}, model, long_ctx, sum(input), sum(output), sum(cache_read),"
        " sum(cache_write), sum(reasoning) FROM usage WHERE counted = 1 GROUP BY 1, 2, model, long_ctx"
    ):
        cost = pricing.cost(model, inp, outp, cr, cw, bool(long_ctx))
        add_usage(cell(wd, hour), inp, outp, cr, cw, rs, cost)
        add_usage(totals, inp, outp, cr, cw, rs, cost)
    out = sorted(cells.values(), key=lambda c: (c["weekday"], c["hour"]))
    totals["events"] = sum(c["events"] for c in out)
    return {"totals": totals, "rows": out}


@pytest.mark.parametrize("weekly", [True, False], ids=["week sums", "per-session quarters"])
@pytest.mark.parametrize("name", ZONES)
def test_by_hour_equals_sqlite_localtime(
    name: str, weekly: bool, zone: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    zone(name)
    if not weekly:
        monkeypatch.setattr(week, "answers", lambda **_k: False)
    db = _index(tmp_path, _instants(random.Random(name)))
    pricing = load_pricing()
    got = by_hour(db, pricing)
    assert got == _by_hour_with_sqlite_localtime(db, pricing)
    assert got["totals"]["events"] > 500 and len(got["rows"]) > 24


def test_times_before_1970_floor_into_their_hour(zone: Any, tmp_path: Any) -> None:
    zone("UTC")
    db = _index(tmp_path, [-0.001, -3600.001, 0.0])
    rows = {r["key"]: r["events"] for r in by_hour(db, load_pricing())["rows"]}
    # 1969-12-31 was a Wednesday; 1970-01-01 a Thursday.
    assert rows == {"3 22": 1, "3 23": 1, "4 00": 1}
