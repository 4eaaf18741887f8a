"""Incremental indexing gives the same rows as a clean rebuild, whatever happens to the files."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agtaild.adapters.kit.jsonl import Continuation
from agtaild.query.service import Service
from tests.index_toy import (
    ToyAdapter,
    append,
    sample_lines,
    settle,
    snapshot,
    toy_config,
    toy_line,
    toy_registry,
    write_session,
)

__all__ = ["toy_registry"]


def fresh_snapshot(tmp: Path, root: Path) -> dict[str, Any]:
    """Index the files as they are now into a brand-new data dir."""
    other = tmp / f"fresh-{time.monotonic_ns()}"
    other.mkdir()
    svc = Service(toy_config(other, root))
    try:
        svc.update_index()
    finally:
        svc.close()
    return snapshot(other / "data" / "index.sqlite3")


def current(svc: Service) -> dict[str, Any]:
    return snapshot(svc.config.index_path)


def op_append(a: Path) -> None:
    # A result for a tool call made in an earlier read (an upsert of an old seq), a bigger
    # copy of an existing usage record, a new record, a new message and a CJK message.
    append(
        a,
        [
            toy_line(t="result", id="A-c1", output="late result zebra", ts="2026-01-07T00:00:00Z"),
            toy_line(
                t="usage",
                key="A-k0",
                model="claude-sonnet-4-20250514",
                ts="2026-01-07T00:00:00Z",
                **{"in": 100, "out": 200, "cr": 0, "cw": 0},
            ),
            toy_line(
                t="usage", key="A-new", model="gpt-5-codex", ts="2026-01-07T00:00:01Z", **{"in": 5, "out": 6}
            ),
            toy_line(t="msg", role="user", text="appended words 追加された文字列", ts="2026-01-07T00:00:02Z"),
            toy_line(t="tool", id="A-c9", name="Read", input={"file_path": "/x"}, ts="2026-01-07T00:00:03Z"),
        ],
    )


def op_truncate(a: Path) -> None:
    if not a.exists():
        return
    data = a.read_bytes()
    cut = data[: len(data) // 2]  # usually in the middle of a line: a truncated session
    with open(a, "r+b") as fh:
        fh.truncate(len(cut))
    settle(a)


def op_replace(a: Path) -> None:
    tmp = a.with_suffix(".tmp")
    write_session(tmp, sample_lines("A", 2, word="replaced"))
    os.replace(tmp, a)
    settle(a)


def op_delete(a: Path) -> None:
    if a.exists():
        a.unlink()


OPS = {"append": op_append, "truncate": op_truncate, "replace": op_replace, "delete": op_delete}


def make_corpus(root: Path) -> Path:
    a = write_session(root / "p1" / "A.jsonl", sample_lines("A", 4))
    # B repeats one of A's usage keys (a resume replay): stats must count it once.
    write_session(
        root / "p2" / "B.jsonl",
        [
            *sample_lines("B", 2, word="beta"),
            toy_line(
                t="usage",
                key="A-k0",
                model="claude-sonnet-4-20250514",
                ts="2026-01-01T10:00:00Z",
                **{"in": 10, "out": 20, "cr": 30, "cw": 40},
            ),
        ],
    )
    write_session(
        root / "p2" / "C.jsonl",
        [toy_line(t="msg", role="user", text="日本語のセッション", ts="2026-01-03T00:00:00Z")],
    )
    return a


@pytest.mark.parametrize("order", list(itertools.permutations(OPS)), ids="-".join)
def test_incremental_equals_rebuild_in_every_order(
    order: tuple[str, ...], tmp_path: Path, toy_registry: ToyAdapter
) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        for name in order:
            OPS[name](a)
            svc.update_index()
            assert current(svc) == fresh_snapshot(tmp_path, root), f"after {name}"
        counted = [k for k, v in current(svc)["usage"].items() if k[1] == "A-k0" and v[-1] == 1]
        assert len(counted) <= 1
    finally:
        svc.close()


def test_an_append_reads_only_the_appended_bytes(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    offsets: list[int | None] = []
    real_read = ToyAdapter.read

    def spy(self: ToyAdapter, unit: Any, state: bytes | None = None, **kw: Any) -> Any:
        if unit.path == str(a):
            offsets.append(None if state is None else msgspec.msgpack.decode(state, type=Continuation).offset)
        return real_read(self, unit, state, **kw)

    monkeypatch.setattr(ToyAdapter, "read", spy)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        size = a.stat().st_size
        assert offsets == [None]
        report = svc.update_index()
        assert offsets == [None] and report["read"] == 0  # nothing changed, nothing read
        op_append(a)
        svc.update_index()
        assert offsets == [None, size]  # continued from where the last read stopped
        op_replace(a)  # a new inode: the adapter sees it and reads from the start
        svc.update_index()
        assert len(offsets) == 3
        assert current(svc) == fresh_snapshot(tmp_path, root)
    finally:
        svc.close()


def test_a_half_written_last_line_is_read_once_complete(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = write_session(root / "A.jsonl", sample_lines("A", 1))
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        line = toy_line(t="msg", role="user", text="written in two halves", ts="2026-01-02T00:00:00Z")
        with open(a, "a", encoding="utf-8") as fh:
            fh.write(line[:20])  # the agent is still writing: mtime is now, the line is partial
        svc.update_index()
        hits = svc.call("search", {"q": "two halves"})["hits"]
        assert hits == []
        got = svc.call("sessions.get", {"agent": "toy", "id": "A"})["session"]
        assert got["truncated"] is False and got["bad_lines"] == 0
        with open(a, "a", encoding="utf-8") as fh:
            fh.write(line[20:])
        settle(a)
        svc.update_index()
        assert len(svc.call("search", {"q": "two halves"})["hits"]) == 1
        assert current(svc) == fresh_snapshot(tmp_path, root)
    finally:
        svc.close()


def test_a_settled_partial_line_marks_the_session_truncated(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = write_session(root / "A.jsonl", [*sample_lines("A", 1), '{"t": "msg", "text": "cut'])
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        session = svc.call("sessions.get", {"agent": "toy", "id": "A"})["session"]
        assert session["truncated"] is True and session["bad_lines"] == 1
        assert svc.update_index()["read"] == 0
        assert current(svc) == fresh_snapshot(tmp_path, root)
        assert a.exists()
    finally:
        svc.close()


def test_a_recent_unchanged_file_is_read_again_until_it_settles(
    tmp_path: Path, toy_registry: ToyAdapter
) -> None:
    root = tmp_path / "root"
    a = write_session(root / "A.jsonl", [*sample_lines("A", 1), '{"t": "msg", "text": "cut'])
    now = time.time()
    os.utime(a, (now, now))
    svc = Service(toy_config(tmp_path, root))
    try:
        assert svc.update_index()["read"] == 1
        assert svc.call("sessions.get", {"agent": "toy", "id": "A"})["session"]["truncated"] is False
        assert svc.update_index()["read"] == 1  # still fresh: checked again
        settle(a)
        svc.update_index()
        assert svc.call("sessions.get", {"agent": "toy", "id": "A"})["session"]["truncated"] is True
        assert svc.update_index()["read"] == 0
    finally:
        svc.close()


def test_full_reindex_equals_incremental(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        op_append(a)
        svc.update_index()
        before = current(svc)
        report = svc.update_index(full=True)
        assert report["sessions"] == 3 and report["read"] == 3
        after = current(svc)
        # Only the stored continuation (not in the snapshot) may differ.
        assert after == before
    finally:
        svc.close()


def test_removed_and_changed_are_reported(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        first = svc.update_index()
        assert sorted(c["action"] for c in first["changed"]) == ["added"] * 3
        assert first["sessions"] == 3 and first["files"] == 3 and first["events"] > 0
        op_append(a)
        second = svc.update_index()
        assert second["changed"] == [{"agent": "toy", "id": "A", "path": str(a), "action": "updated"}]
        a.unlink()
        third = svc.update_index()
        assert third["changed"] == [{"agent": "toy", "id": "A", "path": str(a), "action": "removed"}]
        assert third["sessions"] == 2
    finally:
        svc.close()


def test_a_unit_thought_new_but_already_stored_is_updated(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    from agtaild.adapters.base import Unit
    from agtaild.index.prepare import Job, prepare
    from agtaild.index.update import Candidate, fingerprint
    from agtaild.index.writer import UnitInfo, Writer

    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        before = current(svc)
        db = svc._db
        info_row = db.execute("SELECT unit, fingerprint FROM files WHERE path = ?", (str(a),)).fetchone()
        unit = msgspec.msgpack.decode(info_row[0], type=Unit)
        fp, main, _ = fingerprint([str(a)])
        info = UnitInfo(
            path=str(a),
            agent="toy",
            root=str(root),
            kind="native",
            collection=None,
            rel=Candidate(adapter=toy_registry, unit=unit, root=svc.config.roots[0]).rel_path(),
            files=[str(a)],
            fingerprint=fp,
            main=main,
            unit=info_row[0],
            read_at=0.0,
            settled=True,
            new=True,
        )
        writer = Writer(db)
        writer.begin()
        assert writer.apply(info, prepare(Job("toy", unit, None, "native", None))) == "updated"
        writer.commit(final=True)
        assert current(svc) == before
    finally:
        svc.close()
