"""usage_daily and usage_totals (schema m006_stats): stats by day, model and agent read a table
per (day, agent, model) or per (agent, model); they must follow every incremental change exactly
as a rebuild would, and ``limit`` must pick the same top rows as the whole answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agtaild.errors import UsageError
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, append, snapshot, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

SONNET = "claude-sonnet-4-20250514"


def usage(key: str, model: str | None, ts: str, n: int) -> str:
    return toy_line(t="usage", key=key, model=model, ts=ts, **{"in": n, "out": 2 * n, "cr": 3 * n, "cw": 4 * n})


def corpus(root: Path) -> dict[str, Path]:
    return {
        "A": write_session(
            root / "a" / "A.jsonl",
            [
                toy_line(t="meta", id="A", cwd="/src/alpha"),
                usage("k1", SONNET, "2026-03-01T10:00:00Z", 100),
                usage("k2", "gpt-5-codex", "2026-03-02T10:00:00Z", 10),
            ],
        ),
        "B": write_session(
            root / "b" / "B.jsonl",
            [
                toy_line(t="meta", id="B", cwd="/src/beta"),
                usage("k3", "mystery-model-9", "2026-03-02T11:00:00Z", 1),
                usage("k4", None, "2026-03-03T11:00:00Z", 5),
            ],
        ),
        "C": write_session(
            root / "c" / "C.jsonl",
            [toy_line(t="meta", id="C", cwd="/src/gamma"), usage("k5", SONNET, "2026-03-01T12:00:00Z", 7)],
        ),
    }


QUERIES: list[dict[str, Any]] = [
    {"by": by, **flt}
    for by in ("day", "model", "agent", "project", "session")
    for flt in ({}, {"since": "2026-03-02"}, {"until": "2026-03-01", "agent": "toy"}, {"imported": False})
]


def answers(svc: Service) -> list[dict[str, Any]]:
    return [svc.call("stats", q) for q in QUERIES]


def rebuilt(tmp: Path, root: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    other = tmp / "rebuilt"
    other.mkdir()
    svc = Service(toy_config(other, root))
    try:
        svc.update_index()
        return answers(svc), snapshot(other / "data" / "index.sqlite3")
    finally:
        svc.close()


def test_the_daily_table_follows_incremental_updates(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    files = corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        before = svc.call("stats", {"by": "day"})
        assert [r["key"] for r in before["rows"]] == ["2026-03-01", "2026-03-02", "2026-03-03"]
        # A new day and a new model on an old day; a replay of k1 in C (bigger: the counted copy
        # moves to another session); B's only response on 03-03 goes away with B.
        append(files["A"], [usage("k6", SONNET, "2026-03-04T09:00:00Z", 3)])
        append(files["C"], [usage("k1", SONNET, "2026-03-01T10:00:00Z", 200), usage("k7", "gpt-5", "2026-03-01T13:00:00Z", 2)])
        files["B"].unlink()
        svc.update_index()
        after = answers(svc)
        days = [r["key"] for r in after[0]["rows"]]
        assert days == ["2026-03-01", "2026-03-02", "2026-03-04"]  # 03-03 had only B's response
        mine = snapshot(tmp_path / "data" / "index.sqlite3")  # asserts daily == rollup summed
    finally:
        svc.close()
    reference, theirs = rebuilt(tmp_path, root)
    assert after == reference
    assert mine["daily"] == theirs["daily"] and mine["rollup"] == theirs["rollup"]
    assert mine["totals"] == theirs["totals"]
    # The model nobody named is '' in the table and "(unknown)" in the answer, as before.
    write_session(root / "b" / "B.jsonl", [toy_line(t="meta", id="B"), usage("k4", None, "2026-03-03T11:00:00Z", 5)])
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        models = {r["key"]: r for r in svc.call("stats", {"by": "model"})["rows"]}
        assert models["(unknown)"]["total_tokens"] == 50
    finally:
        svc.close()


def test_an_older_index_gets_the_table_from_its_rollup(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    corpus(root)
    svc = Service(toy_config(tmp_path, root))
    svc.update_index()
    expected = answers(svc)
    svc.close()
    path = tmp_path / "data" / "index.sqlite3"
    db = sqlite3.connect(path)
    rows = sorted(db.execute("SELECT * FROM usage_daily"))
    totals = sorted(db.execute("SELECT * FROM usage_totals"))
    assert rows and totals  # the writer filled them
    db.execute("DROP TABLE usage_daily")  # as an index written before m006_stats
    db.execute("DROP TABLE usage_totals")
    db.execute("DELETE FROM _migrations WHERE name = 'm006_stats'")
    db.commit()
    db.close()
    svc = Service(toy_config(tmp_path, root))
    try:
        assert answers(svc) == expected
    finally:
        svc.close()
    db = sqlite3.connect(path)
    assert sorted(db.execute("SELECT * FROM usage_daily")) == rows
    assert sorted(db.execute("SELECT * FROM usage_totals")) == totals
    db.close()


def test_limit_keeps_the_top_rows_and_all_the_totals(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        for by in ("session", "model", "day", "project", "tool", "hour"):
            whole = svc.call("stats", {"by": by})
            for n in (1, 2, 50, 600):  # past 500: the ranking is not passed as a list
                top = svc.call("stats", {"by": by, "limit": n})
                assert top["rows"] == whole["rows"][:n], (by, n)
                totals = {k: v for k, v in top["totals"].items() if k != "cost_usd"}
                assert totals == {k: v for k, v in whole["totals"].items() if k != "cost_usd"}
                assert (top["totals"]["cost_usd"] is None) == (whole["totals"]["cost_usd"] is None)
        # Costs known everywhere (no unpriced model in scope): the totals' cost agrees too.
        whole = svc.call("stats", {"by": "session", "project": "alpha"})
        top = svc.call("stats", {"by": "session", "project": "alpha", "limit": "1"})
        assert top["rows"] == whole["rows"][:1]
        assert top["totals"]["cost_usd"] == pytest.approx(whole["totals"]["cost_usd"])
        assert whole["totals"]["cost_usd"] is not None
        none = svc.call("stats", {"by": "session", "since": "2030-01-01", "limit": 5})
        assert none["rows"] == [] and none["totals"]["total_tokens"] == 0
        with pytest.raises(UsageError, match="'limit'"):
            svc.call("stats", {"by": "session", "limit": 0})
        with pytest.raises(UsageError, match="'limit'"):
            svc.call("stats", {"by": "session", "limit": "many"})
    finally:
        svc.close()


def test_ties_are_cut_by_key_as_the_whole_answer_sorts(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    for sid in ("Z", "M", "A", "Q"):
        write_session(
            root / sid / f"{sid}.jsonl",
            [toy_line(t="meta", id=sid), usage(f"k{sid}", SONNET, "2026-03-01T10:00:00Z", 10)],
        )
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        whole = svc.call("stats", {"by": "session"})
        assert [r["key"] for r in whole["rows"]] == ["toy:A", "toy:M", "toy:Q", "toy:Z"]
        for n in (1, 2, 3):
            assert svc.call("stats", {"by": "session", "limit": n})["rows"] == whole["rows"][:n]
    finally:
        svc.close()
