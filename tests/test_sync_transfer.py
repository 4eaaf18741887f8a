"""The transfer engine over local directories: difference only, append tails, resume, conflicts."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.sync.directory import DirectoryDestination, DirectorySource
from agtaild.sync.manifest import HashCache, load_manifest
from agtaild.sync.native import LocalFile, LocalFilesSource
from agtaild.sync.transfer import Limits, transfer

LIMITS = Limits(max_file_size=1 << 30, known_agents=["claude-code", "codex", "opencode"])


def lines(n: int, start: int = 0) -> bytes:
    return b"".join(b'{"type":"user","n":%d,"text":"%s"}\n' % (i, b"x" * 50) for i in range(start, start + n))


def make_source(native: Path, cache: HashCache, origin: str = "machine-a") -> LocalFilesSource:
    files = []
    for p in sorted(native.rglob("*")):
        if p.is_file():
            rel = p.relative_to(native).as_posix()
            files.append(LocalFile(path=rel, source=str(p), agent=rel.split("/")[0]))
    return LocalFilesSource(files, cache, origin=origin, origin_name="a", collection="laptop")


@pytest.fixture
def native(tmp_path: Path) -> Path:
    root = tmp_path / "native"
    (root / "claude-code" / "proj").mkdir(parents=True)
    (root / "claude-code" / "proj" / "s1.jsonl").write_bytes(lines(100))
    (root / "codex" / "2026" / "01").mkdir(parents=True)
    (root / "codex" / "2026" / "01" / "rollout-x.jsonl").write_bytes(lines(10))
    return root


def test_first_push_copies_all_then_nothing(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    dest = DirectoryDestination(tmp_path / "remote" / "laptop", cache)
    rep = transfer(make_source(native, cache), dest, LIMITS)
    total = sum(p.stat().st_size for p in native.rglob("*") if p.is_file())
    assert (rep["files"], rep["bytes"], rep["skipped"], rep["errors"]) == (2, total, 0, [])
    copy = tmp_path / "remote" / "laptop" / "claude-code" / "proj" / "s1.jsonl"
    assert copy.read_bytes() == (native / "claude-code" / "proj" / "s1.jsonl").read_bytes()
    record = load_manifest(tmp_path / "remote" / "laptop")
    assert record is not None and {f.path for f in record.files} == {
        "claude-code/proj/s1.jsonl",
        "codex/2026/01/rollout-x.jsonl",
    }
    assert record.files[0].sha256 == hashlib.sha256(copy.read_bytes()).hexdigest()
    again = transfer(make_source(native, cache), dest, LIMITS)
    assert (again["files"], again["bytes"], again["skipped"]) == (0, 0, 2)


def test_grown_jsonl_sends_only_the_tail(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    dest = DirectoryDestination(tmp_path / "remote" / "laptop", cache)
    transfer(make_source(native, cache), dest, LIMITS)
    extra = lines(7, start=100)
    with open(native / "claude-code" / "proj" / "s1.jsonl", "ab") as fh:
        fh.write(extra)
    rep = transfer(make_source(native, cache), dest, LIMITS)
    assert (rep["files"], rep["appended"], rep["bytes"], rep["skipped"]) == (1, 1, len(extra), 1)
    copy = tmp_path / "remote" / "laptop" / "claude-code" / "proj" / "s1.jsonl"
    assert copy.read_bytes() == lines(100) + extra


def test_rewritten_file_by_its_owner_is_replaced_whole(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    dest = DirectoryDestination(tmp_path / "remote" / "laptop", cache)
    transfer(make_source(native, cache), dest, LIMITS)
    src = native / "codex" / "2026" / "01" / "rollout-x.jsonl"
    src.write_bytes(lines(3, start=500))
    rep = transfer(make_source(native, cache), dest, LIMITS)
    assert rep["replaced"] == 1 and rep["conflicts"] == [] and rep["bytes"] == src.stat().st_size
    assert (tmp_path / "remote" / "laptop" / "codex" / "2026" / "01" / "rollout-x.jsonl").read_bytes() == src.read_bytes()


def test_copy_changed_by_someone_else_is_a_conflict_keeping_both(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    root = tmp_path / "remote" / "laptop"
    dest = DirectoryDestination(root, cache)
    transfer(make_source(native, cache), dest, LIMITS)
    theirs = root / "claude-code" / "proj" / "s1.jsonl"
    theirs.write_bytes(b'{"edited":"by hand"}\n')
    ours = native / "claude-code" / "proj" / "s1.jsonl"
    rep = transfer(make_source(native, cache), dest, LIMITS)
    assert len(rep["conflicts"]) == 1
    kept = rep["conflicts"][0]["kept_as"]
    assert kept.startswith("claude-code/proj/s1.jsonl.agtail-conflict-")
    assert (root / kept).read_bytes() == b'{"edited":"by hand"}\n'
    assert theirs.read_bytes() == ours.read_bytes()
    # Another machine's file at the same path is a conflict too, not an overwrite.
    rep2 = transfer(make_source(native, cache, origin="machine-b"), dest, LIMITS)
    assert rep2["skipped"] == 2  # same bytes: nothing to keep


def test_interrupted_transfer_resumes_from_the_partial(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    big = native / "claude-code" / "proj" / "big.jsonl"
    big.write_bytes(lines(40000))
    size = big.stat().st_size
    dest = DirectoryDestination(tmp_path / "remote" / "laptop", cache)

    class Dropping(LocalFilesSource):
        def read(self, path: str, offset: int, length: int) -> Iterator[bytes]:
            sent = 0
            for block in super().read(path, offset, length):
                if path.endswith("big.jsonl") and sent + len(block) > 1_000_000:
                    yield block[: 1_000_000 - sent]
                    raise ConnectionResetError("link dropped")
                sent += len(block)
                yield block

    src = make_source(native, cache)
    dropping = Dropping(list(src.files.values()), cache, origin="machine-a", origin_name="a")
    rep = transfer(dropping, dest, LIMITS)
    assert [e["path"] for e in rep["errors"]] == ["claude-code/proj/big.jsonl"]
    partial = tmp_path / "remote" / "laptop" / "claude-code" / "proj" / ".big.jsonl.agtail-partial"
    assert partial.stat().st_size == 1_000_000
    assert not (tmp_path / "remote" / "laptop" / "claude-code" / "proj" / "big.jsonl").exists()
    rep2 = transfer(make_source(native, cache), dest, LIMITS)
    assert (rep2["resumed"], rep2["files"], rep2["bytes"], rep2["errors"]) == (1, 1, size - 1_000_000, [])
    assert (tmp_path / "remote" / "laptop" / "claude-code" / "proj" / "big.jsonl").read_bytes() == big.read_bytes()
    assert not partial.exists()


def test_partial_that_is_not_a_prefix_is_not_resumed(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    root = tmp_path / "remote" / "laptop"
    (root / "claude-code" / "proj").mkdir(parents=True)
    (root / "claude-code" / "proj" / ".s1.jsonl.agtail-partial").write_bytes(b"garbage that is not a prefix")
    rep = transfer(make_source(native, cache), DirectoryDestination(root, cache), LIMITS)
    assert rep["resumed"] == 0 and rep["new"] == 2
    assert (root / "claude-code" / "proj" / "s1.jsonl").read_bytes() == lines(100)


def test_sqlite_store_is_sent_as_a_consistent_copy(tmp_path: Path) -> None:
    cache = HashCache(None)
    native = tmp_path / "native"
    (native / "opencode").mkdir(parents=True)
    db = native / "opencode" / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE message (id TEXT, body TEXT)")
    conn.executemany("INSERT INTO message VALUES (?, ?)", [(str(i), "x" * 200) for i in range(500)])
    conn.commit()  # rows live in the WAL until a checkpoint: a raw copy of the DB would miss them
    files = [
        LocalFile(path="opencode/opencode.db", source=str(db), agent="opencode"),
        LocalFile(path="opencode/opencode.db-wal", source=str(db) + "-wal", agent="opencode"),
    ]
    src = LocalFilesSource(files, cache, origin="a", origin_name="a")
    root = tmp_path / "remote" / "c"
    rep = transfer(src, DirectoryDestination(root, cache), LIMITS)
    src.close()
    assert rep["errors"] == []
    copy = sqlite3.connect(root / "opencode" / "opencode.db")
    assert copy.execute("SELECT count(*) FROM message").fetchone()[0] == 500
    copy.close()
    conn.close()


def test_pull_from_directory_collection_into_another(native: Path, tmp_path: Path) -> None:
    cache = HashCache(None)
    remote = tmp_path / "remote" / "laptop"
    transfer(make_source(native, cache), DirectoryDestination(remote, cache), LIMITS)
    local = tmp_path / "data" / "imported" / "laptop"
    rep = transfer(DirectorySource(remote, HashCache(None)), DirectoryDestination(local, HashCache(None)), LIMITS)
    assert (rep["files"], rep["skipped"]) == (2, 0)
    assert (local / "claude-code" / "proj" / "s1.jsonl").read_bytes() == lines(100)
    with open(native / "claude-code" / "proj" / "s1.jsonl", "ab") as fh:
        fh.write(lines(1, start=100))
    transfer(make_source(native, cache), DirectoryDestination(remote, cache), LIMITS)
    rep = transfer(DirectorySource(remote, HashCache(None)), DirectoryDestination(local, HashCache(None)), LIMITS)
    assert (rep["appended"], rep["bytes"]) == (1, len(lines(1, start=100)))
    assert os.listdir(local / "claude-code" / "proj") == ["s1.jsonl"]


def test_read_range_yields_exactly_the_range_and_stops_on_a_short_file(tmp_path: Path) -> None:
    import io

    from agtaild.sync.manifest import CHUNK, read_range

    data = bytes(range(256)) * (CHUNK // 128)  # two chunks' worth
    assert b"".join(read_range(io.BytesIO(data), 100, CHUNK + 50)) == data[100 : 100 + CHUNK + 50]
    with pytest.raises(EOFError):
        b"".join(read_range(io.BytesIO(data[:500]), 100, 1000))


def test_a_file_that_shrank_during_a_pull_is_a_transfer_error(tmp_path: Path) -> None:
    from agtaild.sync.transfer import TransferError

    root = tmp_path / "share"
    (root / "claude-code").mkdir(parents=True)
    (root / "claude-code" / "s.jsonl").write_bytes(b'{"a":1}\n' * 10)
    cache = HashCache(None)
    try:
        source = DirectorySource(root, cache)
        with pytest.raises(TransferError, match="shrank"):
            b"".join(source.read("claude-code/s.jsonl", 0, 1000))
    finally:
        cache.close()
