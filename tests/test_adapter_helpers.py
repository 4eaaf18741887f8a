"""The JSON-document and SQLite adapter helpers, with small adapters of the kind they serve
(a JSON chat file with a ``messages`` list; Kiro-style ``conversations(key, value)`` rows)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsondoc import JsonDocAdapter, RecordBook, read_document
from agtaild.adapters.kit.sqlite_db import (
    SqliteSessionAdapter,
    connect_ro,
    db_files,
    is_sqlite_file,
    reading,
    split_unit_path,
    unit_path,
)
from agtaild.errors import AgtailError, NotFound
from agtaild.model import Event, Usage, UsageRecord

LATER = 4_000_000_000.0


class ChatDocAdapter(JsonDocAdapter):
    """``{"id", "messages": [{"role", "text", "tokens"?}]}``: each message is a record."""

    id: ClassVar[str] = "chatdoc"

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        if not isinstance(doc, dict):
            book.count("skipped")
            return
        if isinstance(doc.get("id"), str):
            book.session.id = doc["id"]
        for i, msg in enumerate(doc.get("messages") or []):
            if not isinstance(msg, dict):
                book.bad(i + 1)
            elif msg.get("role") == "note":
                book.count("metadata")
            else:
                book.emit(
                    Event(seq=-1, kind="text", role=msg.get("role"), text=msg.get("text"), source={"row": i})
                )
                if isinstance(msg.get("tokens"), int):
                    book.add_usage(
                        UsageRecord(
                            key=str(i),
                            ts=None,
                            model="m",
                            usage=Usage(input_tokens=msg["tokens"]).fix_total(),
                        )
                    )
                book.count("events")


def test_read_document_states(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text('{"a": [1, 2]}')
    doc = read_document(p, now=LATER)
    assert doc.ok and doc.value == {"a": [1, 2]} and doc.settled
    p.write_text("  \n")
    assert read_document(p).empty and not read_document(p).ok
    p.write_text('{"a": [1,')
    fresh = read_document(p, now=os.stat(p).st_mtime + 1)
    assert (
        not fresh.ok and fresh.error is not None and fresh.error.startswith("not JSON") and not fresh.settled
    )
    with pytest.raises(FileNotFoundError):
        read_document(tmp_path / "missing.json")


def test_json_document_records_are_the_lines(tmp_path: Path) -> None:
    p = tmp_path / "chat-1.json"
    p.write_text(
        '{"id": "c1", "messages": [{"role": "user", "text": "hi", "tokens": 5},'
        ' {"role": "note"}, 7, {"role": "assistant", "text": "hello", "tokens": 9}]}'
    )
    adapter = ChatDocAdapter()
    unit = Unit(agent="chatdoc", path=str(p), files=[str(p)], root=str(tmp_path))
    res = adapter.read(unit, None, now=LATER)
    s = res.session
    assert s.id == "c1" and s.path == str(p) and s.mtime == os.stat(p).st_mtime
    assert [e.text for e in res.events] == ["hi", "hello"] and [e.seq for e in res.events] == [0, 1]
    assert (s.accounting.lines, s.accounting.events, s.accounting.metadata, s.accounting.bad) == (4, 2, 1, 1)
    assert s.bad_line_numbers == [3] and s.accounting.balanced()
    assert s.usage.input_tokens == 14 and res.reset and res.state is None
    # every read is whole: the same document gives the same result
    assert adapter.read(unit, res.state, now=LATER).events == res.events


def test_undecodable_document_is_one_bad_record(tmp_path: Path) -> None:
    p = tmp_path / "chat-2.json"
    p.write_bytes(b'{"id": "c2", "messages": [{"role": "us')
    adapter = ChatDocAdapter()
    unit = Unit(agent="chatdoc", path=str(p), files=[str(p)], root=str(tmp_path))
    settled = adapter.read(unit, None, now=LATER).session
    assert settled.id == "chat-2" and settled.accounting.bad == 1 and settled.truncated
    live = adapter.read(unit, None, now=os.stat(p).st_mtime + 1).session
    assert live.accounting.bad == 1 and not live.truncated  # maybe mid-rewrite
    p.write_bytes(b"")
    empty = adapter.read(unit, None, now=LATER).session
    assert empty.accounting.lines == 0 and not empty.truncated


# -- SQLite ---------------------------------------------------------------------------------


class ConversationsAdapter(SqliteSessionAdapter):
    """Kiro-style store: ``conversations(key TEXT PRIMARY KEY, value TEXT, updated INTEGER)``,
    ``value`` = ``{"history": [{"role", "text"}…]}``; each history entry is a row."""

    id: ClassVar[str] = "convs"
    busy_timeout: ClassVar[float] = 0.2

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        return [r[0] for r in conn.execute("SELECT key FROM conversations ORDER BY key")]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT updated, length(value) FROM conversations WHERE key = ?", (session_id,)
        ).fetchone()
        return None if row is None else list(row)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        import json

        (value,) = conn.execute("SELECT value FROM conversations WHERE key = ?", (session_id,)).fetchone()
        try:
            history = json.loads(value)["history"]
        except (ValueError, KeyError, TypeError):
            book.bad(1)
            return None
        for entry in history:
            book.emit(Event(seq=-1, kind="text", role=entry.get("role"), text=entry.get("text")))
            book.count("events")
        return None


def make_store(path: Path, rows: dict[str, str], *, wal: bool = False) -> None:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT, updated INTEGER)")
    conn.executemany("INSERT INTO conversations VALUES (?, ?, 1)", rows.items())
    conn.commit()
    conn.close()


def history(*texts: str) -> str:
    import json

    return json.dumps({"history": [{"role": "user", "text": t} for t in texts]})


def test_unit_paths_round_trip() -> None:
    assert unit_path("/a/b#c/data.db", "s1") == "/a/b#c/data.db#s1"
    assert split_unit_path("/a/b#c/data.db#s1") == ("/a/b#c/data.db", "s1")
    with pytest.raises(AgtailError):
        split_unit_path("/a/data.db")
    assert db_files("/a/x.db") == ["/a/x.db", "/a/x.db-wal", "/a/x.db-shm"]


def test_odd_characters_in_the_database_path(tmp_path: Path) -> None:
    folder = tmp_path / "a#b?c%20 d"
    folder.mkdir()
    db = folder / "data.sqlite3"
    make_store(db, {"k": history("x")})
    adapter = ConversationsAdapter()
    (unit,) = adapter.discover(db)
    assert split_unit_path(unit.path) == (str(db), "k")
    assert adapter.read(unit, None, now=LATER).events[0].text == "x"


def test_discover_and_read_with_fingerprint(tmp_path: Path) -> None:
    db = tmp_path / "data.sqlite3"
    make_store(db, {"/src/a": history("one", "two"), "/src/b": "not json"})
    adapter = ConversationsAdapter()
    found = list(adapter.discover(db))
    assert [u.path for u in found] == [f"{db}#/src/a", f"{db}#/src/b"]
    assert found[0].files == db_files(db) and adapter.native_files(found[0]) == [str(db)]
    first = adapter.read(found[0], None, now=LATER)
    assert [e.text for e in first.events] == ["one", "two"] and first.reset
    assert first.session.id == "/src/a" and first.session.accounting.lines == 2
    same = adapter.read(found[0], first.state, now=LATER)
    assert not same.reset and same.events == [] and same.session.accounting.lines == 2
    bad = adapter.read(found[1], None, now=LATER).session
    assert bad.accounting.bad == 1 and bad.accounting.balanced()
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE conversations SET value = ?, updated = 2 WHERE key = '/src/a'",
        (history("one", "two", "three"),),
    )
    conn.commit()
    conn.close()
    grown = adapter.read(found[0], same.state, now=LATER)
    assert grown.reset and [e.text for e in grown.events] == ["one", "two", "three"]
    # a saved state that does not decode just means a whole read
    assert adapter.read(found[0], b"\x00garbage", now=LATER).reset
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM conversations WHERE key = '/src/a'")
    conn.commit()
    conn.close()
    with pytest.raises(NotFound):
        adapter.read(found[0], grown.state, now=LATER)


def test_reads_never_write(tmp_path: Path) -> None:
    db = tmp_path / "data.sqlite3"
    make_store(db, {"k": history("x")})
    before = (db.read_bytes(), os.stat(db).st_mtime_ns)
    adapter = ConversationsAdapter()
    for unit in adapter.discover(db):
        adapter.read(unit, None, now=LATER)
    conn = connect_ro(db)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO conversations VALUES ('z', 'z', 0)")
    finally:
        conn.close()
    assert (db.read_bytes(), os.stat(db).st_mtime_ns) == before


def test_rows_in_the_wal_are_seen(tmp_path: Path) -> None:
    db = tmp_path / "data.sqlite3"
    make_store(db, {"k": history("x")}, wal=True)
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO conversations VALUES ('new', ?, 1)", (history("only in the wal"),))
        writer.commit()
        assert os.path.getsize(str(db) + "-wal") > 0
        adapter = ConversationsAdapter()
        units = {split_unit_path(u.path)[1]: u for u in adapter.discover(db)}
        assert set(units) == {"k", "new"}
        assert adapter.read(units["new"], None, now=LATER).events[0].text == "only in the wal"
    finally:
        writer.close()


def test_missing_corrupt_and_locked_databases(tmp_path: Path) -> None:
    adapter = ConversationsAdapter()
    missing = Unit(agent="convs", path=f"{tmp_path}/none.db#k", files=[], root=str(tmp_path))
    with pytest.raises(NotFound):
        adapter.read(missing, None)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(4096))
    assert not is_sqlite_file(garbage) and list(adapter.discover(garbage)) == []
    with pytest.raises(AgtailError, match="not a readable SQLite database"):
        adapter.read(Unit(agent="convs", path=f"{garbage}#k", files=[], root=str(tmp_path)), None)
    wrong = tmp_path / "wrong.db"
    sqlite3.connect(wrong).execute("CREATE TABLE other (x)").connection.close()
    assert list(adapter.discover(wrong)) == []  # no conversations table: skipped, not raised

    locked = tmp_path / "locked.db"
    make_store(locked, {"k": history("x")})
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(AgtailError, match="locked"):
            adapter.read(Unit(agent="convs", path=f"{locked}#k", files=[], root=str(tmp_path)), None)
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_short_lock_is_waited_out(tmp_path: Path) -> None:
    db = tmp_path / "data.sqlite3"
    make_store(db, {"k": history("x")})
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.1, lambda: holder.execute("ROLLBACK")).start()
    try:
        with reading(db, busy_timeout=3.0) as conn:
            assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (1,)
    finally:
        time.sleep(0.15)
        holder.close()
