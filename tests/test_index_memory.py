"""What bounds the writer's memory during a big update: its connection's page cache holds what
``cache_size`` says on a new index too, and the readers hand each unit out of the update's job
list as it goes (nothing of a read unit stays for the rest of the update)."""

from __future__ import annotations

import ctypes
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agtaild.index.readers as readers
from agtaild.config import Config, RootSpec
from agtaild.index import schema
from agtaild.query.service import Service


def _linked_sqlite() -> Any:
    """The libsqlite3 this interpreter's sqlite3 module runs on (None: linked statically)."""
    sqlite3.connect(":memory:").close()
    with open("/proc/self/maps") as fh:
        paths = {line.split()[-1] for line in fh if "libsqlite3" in line}
    if not paths:
        return None
    lib = ctypes.CDLL(sorted(paths)[0])
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lib


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="finds the library through /proc")
def test_a_new_index_caches_no_more_than_its_cache_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = _linked_sqlite()
    if lib is None:
        pytest.skip("sqlite3 is linked into the interpreter: its heap cannot be read")
    monkeypatch.setattr(schema, "CACHE_KIB", 1024)
    db = schema.connect(tmp_path / "index.sqlite3")  # a new file: the page size is set after the cache
    try:
        schema.migrate(db)
        assert db.execute("PRAGMA page_size").fetchone()[0] == schema.PAGE_SIZE
        db.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)")
        before = lib.sqlite3_memory_used()
        db.execute("BEGIN")
        # 24 MiB in one transaction: every page dirty, far more than the cache may keep.
        db.executemany("INSERT INTO blobs (data) VALUES (?)", ((os.urandom(12_000),) for _ in range(2048)))
        db.execute("COMMIT")
        grown = lib.sqlite3_memory_used() - before
    finally:
        db.close()
    # The cache holds its 1 MiB (and the pages' headers); counted in 4 KiB pages, as SQLite
    # did before the page size was known, it held four times as much.
    assert grown < 2 * 1024 * 1024, grown


def test_the_readers_take_each_unit_out_of_the_job_list_as_they_hand_it_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[object] = []

    class Reader:
        def __call__(self, job: object) -> object:
            read.append(job)
            return ("prepared", job)

        def close(self) -> None:
            pass

    monkeypatch.setattr(readers, "_reader", Reader)
    jobs: list[Any] = [(f"info{i}", f"job{i}", 1) for i in range(5)]
    left = []
    for info, prep in readers.ReadingPool(0).read_all(jobs):
        left.append(len(jobs))
        assert prep == ("prepared", info.replace("info", "job"))
    assert read == [f"job{i}" for i in range(5)]  # in the order given
    assert left == [4, 3, 2, 1, 0] and jobs == []


def test_a_pooled_update_holds_no_job_it_has_handed_out(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)  # every update goes to the pool
    monkeypatch.setattr(readers, "HEAD_UNITS", 2)
    seen: list[tuple[int, int]] = []
    plain = readers.ReadingPool.read_all

    def watched(self: readers.ReadingPool, jobs: list[Any]) -> Iterator[Any]:
        total = len(jobs)
        for n, item in enumerate(plain(self, jobs), 1):
            seen.append((n, len(jobs)))
            yield item
        assert n == total

    monkeypatch.setattr(readers.ReadingPool, "read_all", watched)
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    svc = Service(Config(data_dir=str(tmp_path / "data"), roots=roots, archive=False), workers=2)
    try:
        report = svc.update_index()
    finally:
        svc.close()
    assert report["errors"] == [] and report["read"] == len(seen) > 10
    # Once the pool has started, the list holds none of the units handed out: each is freed
    # when read (what is still listed is only what has not gone to a worker yet).
    assert all(left <= report["read"] - n for n, left in seen)
    assert seen[-1][1] == 0


def test_fingerprints_take_discoverys_stat_results_out_as_they_use_them(tmp_path: Path) -> None:
    from agtaild.index.update import fingerprint

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n{}\n")
    known = {str(a): os.stat(a), str(b): os.stat(b)}
    fp, main, _newest = fingerprint([str(a)], known)
    assert known.keys() == {str(b)}  # a's result is used once, then no longer held
    assert main == (known[str(b)].st_dev, os.stat(a).st_ino, 3, os.stat(a).st_mtime_ns)
    # A file listed again (by a second unit) is looked at again: the same fingerprint.
    assert fingerprint([str(a)], known)[0] == fp
