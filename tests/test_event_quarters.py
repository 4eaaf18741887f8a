"""``event_quarters`` and ``usage_quarters`` (agtaild.index.quarters) stay equal to the events and
counted usage they sum through every
kind of update the writer makes — a first index, appends, a rewrite, a removal, a reindex — and
``stats --by hour`` answers the same from it as from a scan of the events."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import load_config
from agtaild.index import quarters, week
from agtaild.query.service import Service
from tests.conftest import CORPUS

CLAUDE = CORPUS / "real" / "claude-2.1.197" / "projects"
CODEX = CORPUS / "real" / "codex-0.171.0" / "sessions"


def _counted(db: sqlite3.Connection) -> dict[tuple[int, int], int]:
    return {(s, q): n for s, q, n in db.execute("SELECT session_id, quarter, n FROM event_quarters")}


def _from_events(db: sqlite3.Connection) -> dict[tuple[int, int], int]:
    sql = (f"SELECT session_id, {quarters.QUARTER_SQL.format(col='epoch')}, count(*) FROM events"
           " WHERE epoch IS NOT NULL GROUP BY 1, 2")  # fmt: skip
    return {(s, q): n for s, q, n in db.execute(sql)}


def _usage(db: sqlite3.Connection, table: str) -> dict[tuple[Any, ...], tuple[int, ...]]:
    if table == "usage_quarters":
        sql = "SELECT session_id, quarter, model, long_ctx, input, output, cache_read, cache_write, reasoning FROM usage_quarters"
    else:
        sql = (f"SELECT session_id, {quarters.QUARTER_SQL.format(col='epoch')}, coalesce(model, ''), long_ctx,"
               " input, output, cache_read, cache_write, reasoning FROM usage WHERE counted = 1 AND epoch IS NOT NULL")  # fmt: skip
    out: dict[tuple[Any, ...], list[int]] = {}
    for s, q, m, lc, *values in db.execute(sql):
        acc = out.setdefault((s, q, m, lc), [0] * 5)
        for i, v in enumerate(values):
            acc[i] += v
    return {k: tuple(v) for k, v in out.items()}


def _check(tmp_path: Path) -> dict[tuple[int, int], int]:
    db = sqlite3.connect(tmp_path / "data" / "index.sqlite3")
    try:
        counted = _counted(db)
        assert counted == _from_events(db)
        assert _usage(db, "usage_quarters") == _usage(db, "usage")
        _check_week(db)
        _check_tools(db)
        return counted
    finally:
        db.close()


def _check_tools(db: sqlite3.Connection) -> None:
    """``tool_totals`` (agtaild.index.tool_totals) are the stored tool calls grouped."""
    grouped = db.execute(
        "SELECT s.agent, coalesce(e.tool, ''), coalesce(e.tool_category, ''), coalesce(e.tool_failed, 0), count(*)"
        " FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.kind = 'tool_use' GROUP BY 1, 2, 3, 4"
    ).fetchall()
    assert grouped and sorted(grouped) == sorted(
        db.execute("SELECT agent, tool, category, failed, n FROM tool_totals")
    )


def _check_week(db: sqlite3.Connection) -> None:
    """``week_events`` / ``week_usage`` (agtaild.index.week) are the per-session quarters summed
    per (UTC quarter of the week, the zone's offset, agent[, model, long-context flag])."""
    events: dict[tuple[Any, ...], int] = {}
    for q, agent, n in db.execute(
        "SELECT q.quarter, s.agent, q.n FROM event_quarters q JOIN sessions s ON s.id = q.session_id"
    ):
        key = ((q + week.ROTATE) % week.WEEK, week.utc_offset(q), agent)
        events[key] = events.get(key, 0) + n
    assert events == {
        (w, o, a): n for w, o, a, n in db.execute("SELECT qow, utc_offset, agent, n FROM week_events")
    }
    usage: dict[tuple[Any, ...], list[int]] = {}
    for q, agent, model, lc, *values in db.execute(
        "SELECT q.quarter, s.agent, q.model, q.long_ctx, q.input, q.output, q.cache_read, q.cache_write,"
        " q.reasoning FROM usage_quarters q JOIN sessions s ON s.id = q.session_id"
    ):
        acc = usage.setdefault(((q + week.ROTATE) % week.WEEK, week.utc_offset(q), agent, model, lc), [0] * 5)
        for i, v in enumerate(values):
            acc[i] += v
    stored = {
        tuple(k): list(v)
        for *k, v in (
            (w, o, a, m, lc, [i, out, cr, cw, rs])
            for w, o, a, m, lc, i, out, cr, cw, rs in db.execute(
                "SELECT qow, utc_offset, agent, model, long_ctx, input, output, cache_read, cache_write, reasoning"
                " FROM week_usage"
            )
        )
    }
    assert stored == usage
    assert db.execute("SELECT count(*) FROM week_usage WHERE n <= 0").fetchone()[0] == 0


def _append_claude(path: Path, text: str, epoch: float) -> None:
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    line = {
        "type": "user", "uuid": f"00000000-0000-4000-8000-{int(epoch) % 10**12:012d}", "parentUuid": last.get("uuid"),
        "sessionId": last.get("sessionId"), "cwd": last.get("cwd"), "isSidechain": False, "userType": "external",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch)),
        "message": {"role": "user", "content": text},
    }  # fmt: skip
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


@pytest.fixture
def svc(tmp_path: Path) -> Any:
    shutil.copytree(CLAUDE, tmp_path / "claude")
    shutil.copytree(CODEX, tmp_path / "codex")
    config = load_config(data_dir=str(tmp_path / "data"), only_roots=True,
                         root_options=[f"claude-code={tmp_path / 'claude'}", f"codex={tmp_path / 'codex'}"])  # fmt: skip
    service = Service(config, workers=1)
    yield service
    service.close()


def test_the_counts_follow_every_kind_of_update(svc: Any, tmp_path: Path) -> None:
    svc.update_index()
    first = _check(tmp_path)
    assert sum(first.values()) > 50
    files = sorted((tmp_path / "claude").rglob("*.jsonl"))
    # Appends, in a new quarter and in one already counted.
    _append_claude(files[0], "one more, much later", 1_900_000_000.0)
    _append_claude(files[0], "and another in that quarter", 1_900_000_100.0)
    svc.update_index()
    assert _check(tmp_path) != first
    # A rewrite: the file cut to its first half (read again from scratch).
    lines = files[1].read_text(encoding="utf-8").splitlines(keepends=True)
    files[1].write_text("".join(lines[: max(1, len(lines) // 2)]), encoding="utf-8")
    svc.update_index()
    _check(tmp_path)
    # A copy of a session under another name: its messages' usage is counted once, and when
    # the original goes, the copy's rows become the counted ones.
    twin = files[3].with_name("00000000-0000-4000-8000-0000000000aa.jsonl")
    shutil.copy(files[3], twin)
    svc.update_index()
    _check(tmp_path)
    with sqlite3.connect(tmp_path / "data" / "index.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM usage WHERE counted = 0").fetchone()[0] > 0  # the copies
    files[3].unlink()
    svc.update_index()
    _check(tmp_path)
    # A removal.
    files[2].unlink()
    svc.update_index()
    _check(tmp_path)

    # A reindex starts over (new session ids) and counts the same per quarter.
    def by_quarter(counted: dict[tuple[int, int], int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for (_session, q), n in counted.items():
            out[q] = out.get(q, 0) + n
        return out

    before = by_quarter(_check(tmp_path))
    svc.call("index.update", {"full": True})
    assert by_quarter(_check(tmp_path)) == before


def test_by_hour_from_the_counts_equals_a_scan_of_the_events(
    svc: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc.update_index()
    asks = [{}, {"agent": "codex"}, {"since": "2025-01-01"}, {"since": "2025-01-01", "until": "2027-01-01"}]
    fast = [svc.call("stats", {"by": "hour", **p}) for p in asks]
    monkeypatch.setattr(week, "answers", lambda **_k: False)
    monkeypatch.setattr(week, "event_counts", lambda *a: pytest.fail("the scan path read the week's sums"))
    monkeypatch.setattr(quarters, "answers", lambda _bounds: False)  # as for bounds off a quarter: a scan
    monkeypatch.setattr(quarters, "counts", lambda *a, **k: pytest.fail("the scan path read the counts"))
    for p, got in zip(asks, fast, strict=True):
        assert got == svc.call("stats", {"by": "hour", **p}), p
    assert fast[0]["totals"]["events"] > 50


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A zone with daylight saving (offsets +60 and +120 minutes) for the test's duration."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_week_sums_answer_as_the_per_session_counts_in_a_zone_with_summer_time(
    berlin: None, svc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted((tmp_path / "claude").rglob("*.jsonl"))
    _append_claude(files[0], "a prompt in the summer", 1_784_000_000.0)  # 2026-07-14, UTC+2 in Berlin
    svc.update_index()
    _check(tmp_path)
    with sqlite3.connect(tmp_path / "data" / "index.sqlite3") as db:
        offsets = {o for (o,) in db.execute("SELECT DISTINCT utc_offset FROM week_events")}
    assert offsets == {60, 120}, offsets  # events in winter and in summer
    asks: list[dict[str, Any]] = [{}, {"agent": "claude-code"}]
    weekly = [svc.call("stats", {"by": "hour", **p}) for p in asks]
    monkeypatch.setattr(week, "answers", lambda **_k: False)
    assert weekly == [svc.call("stats", {"by": "hour", **p}) for p in asks]
    assert weekly[0]["totals"]["events"] > 50 and weekly[0]["totals"]["total_tokens"] > 0


def test_an_index_older_than_the_week_sums_gets_them_filled(tmp_path: Path) -> None:
    shutil.copytree(CLAUDE, tmp_path / "claude")
    shutil.copytree(CODEX, tmp_path / "codex")
    config = load_config(data_dir=str(tmp_path / "data"), only_roots=True,
                         root_options=[f"claude-code={tmp_path / 'claude'}", f"codex={tmp_path / 'codex'}"])  # fmt: skip
    svc = Service(config, workers=1)
    svc.update_index()
    made = [svc.call("stats", {"by": by}) for by in ("hour", "tool", "tool-category")]
    svc.close()
    path = tmp_path / "data" / "index.sqlite3"
    with sqlite3.connect(path) as db:  # as m014 left it
        db.execute("DROP TABLE week_events")
        db.execute("DROP TABLE week_usage")
        db.execute("ALTER TABLE usage_quarters DROP COLUMN agent")
        db.execute("DROP TABLE tool_totals")
        db.execute("DELETE FROM _migrations WHERE name IN ('m015_week', 'm016_tool_totals')")
    svc = Service(config, workers=1)
    try:
        assert [svc.call("stats", {"by": by}) for by in ("hour", "tool", "tool-category")] == made
        _check(tmp_path)
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM week_events").fetchone()[0] > 0
            assert db.execute("SELECT count(*) FROM usage_quarters WHERE agent = ''").fetchone()[0] == 0
    finally:
        svc.close()
