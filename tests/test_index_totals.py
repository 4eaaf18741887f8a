"""The totals an update reports come from the ``totals`` table (kept by triggers, schema
m005_totals) and always equal a count of every row, whatever the update did."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agtaild.index.totals import recount, totals
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


def _check(svc: Service) -> dict[str, int]:
    db = sqlite3.connect(svc.config.index_path)
    try:
        kept, counted = totals(db), recount(db)
    finally:
        db.close()
    assert kept == counted
    return kept


def test_totals_follow_every_kind_of_change(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        report = svc.update_index()
        assert {k: report[k] for k in ("sessions", "events", "files", "bad_lines")} == _check(svc)
        # A bad line, then the ops of the incremental tests, each followed by an update.
        append(a, [toy_line(t="msg", role="user", text="ok", ts="2026-01-08T00:00:00Z")])
        with open(a, "ab") as fh:
            fh.write(b"{not json\n")
        assert svc.update_index()["bad_lines"] == _check(svc)["bad_lines"] == 1
        for name in ("append", "truncate", "replace", "delete"):
            OPS[name](a)
            report = svc.update_index()
            assert {k: report[k] for k in ("sessions", "events", "files", "bad_lines")} == _check(svc), name
        write_session(root / "p3" / "D.jsonl", sample_lines("D", 3))
        svc.update_index(only_paths=[str(root / "p3" / "D.jsonl")])
        _check(svc)
        svc.update_index(full=True)  # reindex: every row deleted and written again
        assert _check(svc)["sessions"] == 3
    finally:
        svc.close()


def test_an_index_from_before_the_totals_table_gets_them_counted(
    tmp_path: Path, toy_registry: ToyAdapter
) -> None:
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
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        db.execute(f"DROP TRIGGER {name}")
    db.execute("DROP TABLE totals")
    db.execute("DELETE FROM _migrations WHERE name = 'm005_totals'")
    assert totals(db) == expected  # without the table: counted
    db.close()
    svc = Service(toy_config(tmp_path, root))
    try:
        assert svc.update_index()["files"] == expected["files"]
        assert _check(svc) == expected
    finally:
        svc.close()
