"""Zed agent threads: threads.db rows (zstd DbThread 0.3.0 and a legacy JSON thread), synthetic."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import zstandard

from agtaild.adapters.base import ReadResult
from agtaild.adapters.zed.adapter import ZedAdapter
from agtaild.model import ParentRef

ROOT = "zed/synthetic-agtail/.local/share/zed"
MAIN = "a7c3e9d1-0b2f-4e5a-9c8d-1f2e3d4c5b6a"
CHILD = "e4f5a6b7-c8d9-4e0f-a1b2-c3d4e5f6a7b8"
LEGACY = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"


def _by_id(root: Path) -> dict[str, ReadResult]:
    a = ZedAdapter()
    return {r.session.id: r for r in (a.read(u, None, now=1e12) for u in a.discover(root))}


def test_roots_and_discovery(corpus: Path, tmp_path: Path) -> None:
    roots = ZedAdapter().default_roots({}, tmp_path)
    assert roots == [
        tmp_path / ".local/share/zed/threads/threads.db",
        tmp_path / "Library/Application Support/Zed/threads/threads.db",
    ]
    assert ZedAdapter().default_roots({"XDG_DATA_HOME": "/x"}, tmp_path)[0] == Path("/x/zed/threads/threads.db")
    for rel in (ROOT, f"{ROOT}/threads", f"{ROOT}/threads/threads.db"):
        assert sorted(_by_id(corpus / rel)) == sorted([MAIN, CHILD, LEGACY])


def test_current_thread(corpus: Path) -> None:
    res = _by_id(corpus / ROOT)[MAIN]
    s = res.session
    assert s.title == "Speed up the CSV loader" and s.cwd == "/home/dev/src/zed-demo" and s.project == "zed-demo"
    assert s.models == ["claude-sonnet-4-5"] and s.extra["format"] == "0.3.0"
    assert (s.started, s.ended) == ("2026-06-12T09:10:01.000Z", "2026-06-12T09:15:42.120Z")
    assert [(e.kind, e.tool or e.role) for e in res.events] == [
        ("text", "user"), ("thinking", "assistant"), ("text", "assistant"), ("tool_use", "read_file"),
        ("tool_use", "terminal"), ("system", "system"), ("text", "user"), ("tool_use", "spawn_agent"),
        ("text", "assistant"),
    ]
    term = res.events[4]
    assert term.is_error is True and term.result == "error: no bench target named `load`"
    assert res.events[0].text.endswith("fn load(path: &Path) -> Vec<Row> { … }")  # the mention's content
    assert s.accounting.lines == 6 and s.accounting.balanced()
    assert ZedAdapter().resume(s) is None and not s.resumable


def test_usage_equals_cumulative_token_usage(corpus: Path) -> None:
    for sid, res in _by_id(corpus / ROOT).items():
        u, c = res.session.usage, res.session.extra["recorded_usage"]
        assert (u.input_tokens, u.output_tokens) == (c["input_tokens"], c["output_tokens"]), sid
        assert u.cache_read_tokens == c["cache_read_input_tokens"], sid
        assert u.cache_write_tokens == c["cache_creation_input_tokens"], sid
    assert len(_by_id(corpus / ROOT)[MAIN].usage) == 2


def test_subagent_thread_links_to_the_spawning_call(corpus: Path) -> None:
    child = _by_id(corpus / ROOT)[CHILD].session
    assert child.parent == ParentRef(agent="zed", id=MAIN, tool_use_id="toolu_zed_03")


def test_legacy_json_thread(corpus: Path) -> None:
    res = _by_id(corpus / ROOT)[LEGACY]
    s = res.session
    assert s.extra["format"] == "agent-1" and s.cwd == "/home/dev/src/legacy-demo"
    assert [e.kind for e in res.events] == ["text", "thinking", "text", "tool_use"]
    assert res.events[-1].result and res.events[-1].result.startswith("fn main()")


def _copy(corpus: Path, tmp_path: Path) -> Path:
    db = tmp_path / "threads.db"
    shutil.copy(corpus / ROOT / "threads" / "threads.db", db)
    return db


def test_a_broken_blob_is_one_bad_record(corpus: Path, tmp_path: Path) -> None:
    db = _copy(corpus, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE threads SET data = ? WHERE id = ?", (b"\x28\xb5\x2f\xfdnot zstd", MAIN))
    conn.commit()
    conn.close()
    s = _by_id(db)[MAIN].session
    assert s.accounting.bad == 1 and s.accounting.balanced() and s.truncated
    assert s.title == "Speed up the CSV loader"  # from the row's summary column


def test_oldest_schema_without_added_columns(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT, data_type TEXT, data BLOB)")
    doc = {"version": "0.3.0", "title": "t", "updated_at": "2026-01-01T00:00:00Z",
           "messages": [{"User": {"id": "u", "content": [{"Text": "hello zed"}]}}, {"Weird": {}}]}
    blob = zstandard.ZstdCompressor().compress(json.dumps(doc).encode())
    conn.execute("INSERT INTO threads VALUES ('t1', 'Old', '2026-01-01T00:00:00Z', 'zstd', ?)", (blob,))
    conn.commit()
    conn.close()
    res = _by_id(db)["t1"]
    assert res.session.title == "Old" and res.events[0].text == "hello zed"
    assert res.events[-1].kind == "unknown" and res.events[-1].raw == {"Weird": {}}
    assert res.session.cwd is None and res.session.accounting.balanced()


def test_mirror_layout_is_found_again(corpus: Path, tmp_path: Path) -> None:
    a = ZedAdapter()
    db = corpus / ROOT / "threads" / "threads.db"
    for root in (db, corpus / ROOT):
        unit = next(iter(a.discover(root)))
        mirror = tmp_path / ("file" if root == db else "dir")
        for f in a.native_files(unit):
            target = mirror / a.relative_path(unit, f)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
        assert sorted(_by_id(mirror)) == sorted([MAIN, CHILD, LEGACY])
