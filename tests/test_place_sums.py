"""The sums per place and per session (agtaild.index.places, schema m020) stay equal to a count
from the base tables after every kind of change, and every answer they serve equals the one
computed from the rollup and the sessions (``recount=True``), with every filter."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agtaild.index import places
from agtaild.index.params import parse_bound
from agtaild.index.projects import projects
from agtaild.index.stats import stats
from agtaild.pricing import load_pricing
from agtaild.query.service import Service
from tests.index_toy import (
    ToyAdapter,
    append,
    sample_lines,
    toy_config,
    toy_line,
    toy_registry,
    write_session,
)
from tests.test_index_incremental import OPS, make_corpus

__all__ = ["toy_registry"]

PRICING = load_pricing(None, {})


def _open(svc: Service) -> sqlite3.Connection:
    return sqlite3.connect(svc.config.index_path, isolation_level=None)


def _hidden(db: sqlite3.Connection, n: int) -> list[tuple[str, str, str]]:
    """The ``n`` most recently active sessions as refs (the latest activity of their places)."""
    rows = db.execute(
        "SELECT coalesce(collection, ''), agent, sid FROM sessions ORDER BY activity DESC, id LIMIT ?", (n,)
    )
    return [tuple(r) for r in rows]


def _answers(db: sqlite3.Connection) -> int:
    """Compare every served answer with its recount; returns how many were compared."""
    assert places.kept(db) == places.recount(db)
    project = db.execute("SELECT project FROM sessions WHERE project IS NOT NULL LIMIT 1").fetchone()
    filters: list[dict[str, Any]] = [
        {},
        {"agent": "toy"},
        {"agent": "nobody"},
        {"imported": False},
        {"imported": True},
        {"collection": "nothing"},
    ]
    if project:
        filters.append({"project": project[0]})
    dated: list[dict[str, Any]] = [
        {"since": parse_bound("2026-01-03")},
        {"until": parse_bound("2026-01-04", end=True), "agent": "toy"},
        {"since": parse_bound("2026-01-02T10:00:00Z")},  # finer than a day: the responses
    ]
    selections = [
        (None, None),
        (None, _hidden(db, 1)),
        (None, _hidden(db, 2)),
        ([], None),
        (_hidden(db, 1), None),
    ]
    compared = 0
    for picked in selections:
        for flt in filters + dated:
            for by, limit in [("project", None), ("agent", None), ("model", None), ("session", 1), ("session", 2),
                              ("session", 600), ("session", None), ("day", None)]:  # fmt: skip
                kw = dict(flt, by=by, limit=limit, picked=picked)
                fast = stats(db, PRICING, **kw)  # type: ignore[arg-type]
                assert json.dumps(fast) == json.dumps(stats(db, PRICING, recount=True, **kw)), kw  # type: ignore[arg-type]
                compared += 1
            if "project" in flt or "collection" in flt or flt in dated:
                continue
            for since in (None, parse_bound("2026-01-03").epoch):  # type: ignore[union-attr]
                kw = dict(flt, since=since, picked=picked)
                fast = projects(db, PRICING, **kw)  # type: ignore[arg-type]
                assert json.dumps(fast) == json.dumps(projects(db, PRICING, recount=True, **kw)), kw  # type: ignore[arg-type]
                compared += 1
    return compared


def _check(svc: Service) -> dict[str, list[tuple[Any, ...]]]:
    db = _open(svc)
    try:
        assert _answers(db) > 0
        return places.kept(db)
    finally:
        db.close()


def test_the_sums_follow_every_change(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    # A second session at A's place: the place outlives A's changes.
    write_session(
        root / "p1" / "A2.jsonl", [toy_line(t="meta", id="A2", cwd="/work/A"), *sample_lines("A2", 2)[1:]]
    )
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        first = _check(svc)
        assert sum(r[5] for r in first["places"]) == 4  # four sessions
        assert any(r[3] == "/work/A" and r[5] == 2 and r[6] == 2 for r in first["places"])
        assert {r[0] for r in first["session_tokens"]}, "sessions with usage"
        for name in ("append", "truncate", "replace", "append", "delete"):
            OPS[name](a)
            svc.update_index()
            _check(svc)
        # A session that moves to another working directory carries its usage along.
        b = root / "p2" / "B.jsonl"
        append(b, [toy_line(t="meta", id="B", cwd="/elsewhere/B"), toy_line(t="usage", key="B-more",
               model="gpt-5-codex", ts="2026-01-09T00:00:00Z", **{"in": 7, "out": 8})])  # fmt: skip
        svc.update_index()
        moved = _check(svc)
        assert any(r[3] == "/elsewhere/B" for r in moved["places"])
        assert not any(r[3] == "/work/B" for r in moved["places"])
        # One file goes and another comes in the same update (the new session may take the
        # row id of the one removed while its rollup rows are still there).
        b.unlink()
        write_session(root / "p4" / "E.jsonl", sample_lines("E", 2, word="echo"))
        svc.update_index()
        _check(svc)
        write_session(root / "p3" / "D.jsonl", sample_lines("D", 3))
        svc.update_index(only_paths=[str(root / "p3" / "D.jsonl")])
        _check(svc)
        svc.update_index(full=True)  # reindex: every row deleted and written again
        again = _check(svc)
        assert sum(r[5] for r in again["places"]) == 4
    finally:
        svc.close()


def test_a_recount_of_every_key_refills_them(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole rollup written again (the triggers suspended, the tables filled once)."""
    from agtaild.index import writer

    monkeypatch.setattr(writer, "RECOUNT_ALL_KEYS", 0)
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        _check(svc)
        OPS["append"](a)
        svc.update_index()
        _check(svc)
        db = _open(svc)
        try:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        finally:
            db.close()
        assert set(places.TRIGGERS) <= names
    finally:
        svc.close()


def test_an_index_from_before_the_tables_gets_them_filled(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        expected = _check(svc)
        path = svc.config.index_path
    finally:
        svc.close()
    db = sqlite3.connect(path, isolation_level=None)
    for name in places.TRIGGERS:
        db.execute(f"DROP TRIGGER {name}")
    for table in places.TABLES:
        db.execute(f"DROP TABLE {table}")
    db.execute("DELETE FROM _migrations WHERE name = 'm020_places'")
    assert not places.ready(db)
    assert _answers_without_tables(db) > 0  # the queries over the base tables answer meanwhile
    db.close()
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        assert _check(svc) == expected
    finally:
        svc.close()


def _answers_without_tables(db: sqlite3.Connection) -> int:
    n = 0
    for by in ("project", "agent", "session"):
        doc = stats(db, PRICING, by=by, limit=5 if by == "session" else None)
        assert doc["totals"]["total_tokens"] > 0
        n += 1
    assert projects(db, PRICING)["projects"]
    return n + 1


def test_the_answers_read_the_sums(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    """No statement of these answers reads ``usage_rollup`` or ``sessions`` (without hidden sessions)."""
    root = tmp_path / "root"
    make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        db = _open(svc)
        seen: list[str] = []
        db.set_trace_callback(seen.append)
        try:
            stats(db, PRICING, by="project")
            stats(db, PRICING, by="agent")
            stats(db, PRICING, by="agent", project="p1", imported=False)
            projects(db, PRICING)
            ranked = [s for s in seen if "usage_rollup" in s or "FROM sessions" in s or "JOIN sessions" in s]
            assert ranked == []
            seen.clear()
            stats(db, PRICING, by="session", limit=2)
            # The top N from session_tokens; only its rows are read from the rollup, by id.
            assert any("FROM session_tokens" in s for s in seen)
            assert not any("usage_rollup" in s and "GROUP BY u.session_id" in s for s in seen)
        finally:
            db.close()
    finally:
        svc.close()


def test_the_day_loop_equals_the_generic_answer() -> None:
    """Unpriced and unknown models, zero-token rows, undated usage, two agents a day; rows out
    of day order are left to the generic path."""
    from agtaild.index.stats import assemble
    from agtaild.index.stats_day import by_day

    rows = [
        ("", None, 0, 5, 6, 0, 0, 0, "toy"),
        ("2026-01-01", "claude-sonnet-4-20250514", 0, 10, 20, 30, 40, 1, "toy"),
        ("2026-01-01", "claude-sonnet-4-20250514", 1, 1000, 2, 3, 4, 0, "codex"),
        ("2026-01-01", "no-such-model", 0, 7, 0, 0, 0, 0, "codex"),
        ("2026-01-02", "no-such-model", 0, 0, 0, 0, 0, 0, "toy"),
        ("2026-01-02", "gpt-5-codex", 0, 3, 4, 5, 0, 2, None),
        ("2026-01-03", "gpt-5-codex", 0, 1, 1, 1, 1, 1, "codex"),
    ]
    assert json.dumps(by_day(rows, PRICING)) == json.dumps(assemble(rows, "day", PRICING))
    assert by_day([rows[2], rows[0]], PRICING) is None
    assert by_day([], PRICING) == assemble([], "day", PRICING)
