"""A database that cannot be read loses no session; one bad row is one bad unit (issue 22, 4 and 5).

Every SQLite store of the registry (tests/sqlite_stores.py) is indexed, then locked past the
busy timeout or damaged (its header, its first page, cut to nothing): the update removes
nothing, says which database and why in its ``errors`` and in ``agtail doctor``, and a rebuilt
index serves the sessions from the archive's copy. A ``pg push`` in the locked window keeps them
in the team database. One 200,000-deep JSON value in Cursor's ``state.vscdb`` is one bad
composer: the sane one beside it is indexed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.pg_cluster import pg_cluster, pg_url
from tests.sqlite_stores import Store, copy_store, listed, removed, service, sqlite_stores

__all__ = ["pg_cluster", "pg_url"]

STORES = sqlite_stores()


def test_the_registry_gives_the_stores_the_issue_names() -> None:
    assert {"opencode", "crush", "goose", "cursor", "kilo", "zed", "kiro"} <= {s.agent for s in STORES}


def _damage(db: Path, how: str) -> None:
    data = bytearray(db.read_bytes())
    if how == "header":
        data[:16] = b"\x00" * 16
    elif how == "first page":
        data[100:4096] = b"\xa5" * (4096 - 100)  # the schema's page, header kept
    else:
        data = bytearray()
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["header", "first page", "empty"])
@pytest.mark.parametrize("store", STORES, ids=str)
def test_a_damaged_database_keeps_its_sessions_and_serves_the_archive(
    store: Store, how: str, tmp_path: Path
) -> None:
    from agtaild.cli.doctor import discovery_checks

    root, db = copy_store(store, tmp_path / "root")
    svc = service(tmp_path / "data", store.agent, root)
    try:
        assert svc.update_index()["errors"] == []
        before = listed(svc)
        assert before
        whole = db.read_bytes()
        _damage(db, how)
        again = svc.update_index()
        assert removed(again) == [], again["changed"]
        assert listed(svc).keys() == before.keys()
        assert any(e["path"] == str(db) for e in again["errors"]), again["errors"]
        [check] = [c for c in discovery_checks(svc.config) if c["name"] == f"{store.agent} discovery"]
        assert str(db) in check["message"] and check["status"] == "warn"
        # A rebuilt index has nothing of the native database: the archive's copy serves it.
        # (Files beside it that it may have imported — Goose's older JSONL — wait for it.)
        rebuilt = svc.update_index(full=True)
        served = listed(svc)
        in_db = {k for k, s in before.items() if s["path"].startswith(f"{db}#")}
        assert in_db and in_db <= served.keys() <= before.keys(), rebuilt["errors"]
        assert all(served[k]["archived"] and served[k]["title"] == before[k]["title"] for k in in_db)
        # ... until the native database is whole again: then it is the native copy once more.
        db.write_bytes(whole)
        healed = svc.update_index()
        assert healed["errors"] == [] and listed(svc).keys() == before.keys()
        assert not any(s["archived"] for s in listed(svc).values())
    finally:
        svc.close()


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter

    monkeypatch.setattr(SqliteSessionAdapter, "busy_timeout", 0.2)


def _lock(db: Path) -> sqlite3.Connection:
    """Another process's exclusive lock: readers wait. A rollback journal's EXCLUSIVE
    transaction shuts them out; in WAL mode (a real Crush database is) only a connection in
    exclusive locking mode does."""
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    mode = holder.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode in ("delete", "wal"), mode
    if mode == "wal":
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    return holder


@pytest.mark.parametrize("store", STORES, ids=str)
def test_a_locked_database_keeps_its_sessions(store: Store, tmp_path: Path, short_busy_timeout: None) -> None:
    root, db = copy_store(store, tmp_path / "root")
    svc = service(tmp_path / "data", store.agent, root)
    try:
        svc.update_index()
        before = listed(svc)
        holder = _lock(db)
        try:
            again = svc.update_index()
        finally:
            holder.close()
        assert removed(again) == [] and listed(svc).keys() == before.keys()
        [error] = [e for e in again["errors"] if e["path"] == str(db)]
        assert "locked" in error["error"]
        assert {k: s["archived"] for k, s in listed(svc).items()} == {k: False for k in before}
        free = svc.update_index()
        assert free["errors"] == [] and removed(free) == [] and listed(svc).keys() == before.keys()
    finally:
        svc.close()


def test_a_database_that_stayed_locked_is_not_waited_for_by_each_session(tmp_path: Path) -> None:
    """Locked for longer than the busy timeout: the next reads fail at once instead of each
    waiting again (a database of many sessions would hold the writer for minutes)."""
    from agtaild.adapters.kit.sqlite_db import reading
    from agtaild.errors import AgtailError

    store = next(s for s in STORES if s.agent == "goose")
    _root, db = copy_store(store, tmp_path / "root")
    holder = _lock(db)
    try:
        started = time.monotonic()
        with pytest.raises(AgtailError, match="locked"), reading(db, busy_timeout=1.0):
            pass
        assert time.monotonic() - started >= 0.9
        started = time.monotonic()
        for _ in range(5):
            with pytest.raises(AgtailError, match="locked"), reading(db, busy_timeout=1.0):
                pass
        assert time.monotonic() - started < 1.0
    finally:
        holder.close()
    with reading(db, busy_timeout=1.0) as conn:  # free again: read at once
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] >= 1


def test_a_push_while_the_database_is_locked_deletes_nothing(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], short_busy_timeout: None
) -> None:
    psycopg = pytest.importorskip("psycopg")
    from agtaild.cli import main

    store = next(s for s in STORES if s.agent == "opencode")
    root, db = copy_store(store, tmp_path / "root")
    args = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"opencode={root}"]

    def push() -> dict[str, Any]:
        code = main([*args, "--json", "pg", "push", "--url", pg_url, "--machine", "laptop"])
        out = capsys.readouterr()
        assert code == 0, out.err
        return json.loads(out.out)

    def team() -> list[tuple[Any, ...]]:
        with psycopg.connect(pg_url) as conn:
            return conn.execute("SELECT agent, sid, title FROM sessions ORDER BY 1, 2").fetchall()

    push()
    before = team()
    assert before
    holder = _lock(db)
    try:
        report = push()
    finally:
        holder.close()
    assert report["removed"] == 0 and team() == before


# -- 5. one bad row is one bad unit --------------------------------------------------------------


def _composer(conn: sqlite3.Connection, cid: str, value: str) -> None:
    conn.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", (f"composerData:{cid}", value))


def test_a_too_deep_row_in_state_vscdb_hides_only_itself(tmp_path: Path) -> None:
    store = next(s for s in STORES if s.agent == "cursor")
    root, db = copy_store(store, tmp_path / "root")
    deep = '{"name": "deep", "conversation": ' + "[" * 200_000 + "]" * 200_000 + "}"
    sane = {"name": "a sane composer", "createdAt": 1772530000000, "conversation": [{"type": 1, "text": "hello there"}]}
    with sqlite3.connect(db) as conn:
        _composer(conn, "0000-deep", deep)
        _composer(conn, "0001-sane", json.dumps(sane))
    svc = service(tmp_path / "data", "cursor", root)
    try:
        report = svc.update_index()
        sessions = listed(svc)
        assert ("cursor", "0001-sane") in sessions and sessions[("cursor", "0001-sane")]["title"] == "a sane composer"
        assert not any("Recursion" in e["error"] or "recursion" in e["error"] for e in report["errors"]), report
        assert not any(e["path"] == str(root) for e in report["errors"]), report
        bad = sessions[("cursor", "0000-deep")]  # the bad row: one unit, read as one bad record
        assert bad["bad_lines"] == 1
    finally:
        svc.close()


def test_json_values_deeper_than_the_limit_are_bad_values_not_errors() -> None:
    from agtaild.adapters.kit.values import BadJson, json_value

    assert json_value(b'{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    for raw in (b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 5000 + b"1" + b"}" * 5000, b"{", b"\xff"):
        with pytest.raises(BadJson):
            json_value(raw)
