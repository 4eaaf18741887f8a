"""Past RECOUNT_ALL_KEYS touched usage keys, an update stops keeping them and re-counts every
key at its end: the rows must be exactly those of an update that kept every key."""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.index import update as update_module
from agtaild.index import usage as usage_module
from agtaild.index import writer as writer_module
from agtaild.index.prepare import UsageRow
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, append, snapshot, toy_config, toy_line, toy_registry
from tests.test_index_incremental import OPS, make_corpus

__all__ = ["toy_registry"]


def run(tmp: Path, root: Path, a: Path, ops: tuple[str, ...]) -> dict[str, Any]:
    data = tmp / f"data-{time.monotonic_ns()}"
    data.mkdir(parents=True)
    svc = Service(toy_config(data, root))
    try:
        svc.update_index()
        for name in ops:
            OPS[name](a)
            svc.update_index()
        return snapshot(svc.config.index_path)
    finally:
        svc.close()


@pytest.mark.parametrize("ops", [(), *itertools.islice(itertools.permutations(OPS), 4)], ids=repr)
def test_recounting_everything_gives_the_same_rows(
    ops: tuple[str, ...], tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    expected = run(tmp_path / "kept", root, make_corpus(root), ops)
    shutil.rmtree(root)  # the same files again, at the same paths
    monkeypatch.setattr(writer_module, "RECOUNT_ALL_KEYS", 1)
    monkeypatch.setattr(update_module, "COMMIT_SECONDS", 0.0)  # a commit after every unit
    monkeypatch.setattr(usage_module, "ROLLUP_CHUNK", 1)  # the whole rollup, a session at a time
    monkeypatch.setattr(usage_module, "RECOUNT_CHUNK", 1)  # every key re-counted, a row at a time
    got = run(tmp_path / "all", root, make_corpus(root), ops)
    # The files were written again (other mtimes): compare what the index derives from them.
    for part in ("usage", "rollup", "events", "fts_rows", "cjk", "orphans"):
        assert got[part] == expected[part], part
    assert got["usage"], "the corpus has usage to count"


def test_the_pending_recount_is_recorded_before_the_last_commit(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after an intermediate commit must leave 'recount_pending' for the next update."""
    monkeypatch.setattr(writer_module, "RECOUNT_ALL_KEYS", 1)
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        append(
            a, [toy_line(t="usage", key=f"new-{i}", model="m", ts="2026-01-08T00:00:00Z") for i in range(3)]
        )
        db = svc.index.db
        w = writer_module.Writer(db)
        w.begin()
        w._upsert_usage(1, "toy", _prep_with_usage(3))
        assert w._recount_all and not w.touched_keys
        w.commit()  # not final: the marker goes in with the rows
        assert sqlite3.connect(svc.config.index_path).execute(
            "SELECT value FROM meta WHERE key = 'recount_pending'"
        ).fetchone() == ("1",)
    finally:
        svc.close()


def _prep_with_usage(n: int) -> writer_module.Prepared:
    rows: list[UsageRow] = [(f"x-{i}", 0.0, "2026-01-08", "m", 1, 1, 0, 0, 0, 2, 0) for i in range(n)]
    return writer_module.Prepared(path="p", usage=rows)
