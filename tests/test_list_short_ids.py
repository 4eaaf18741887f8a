"""`list` prints each session's short id: the shortest prefix no other session of its agent
shares. Each one looks up the id's two sorted neighbours; these tests hold those lookups to an
index search (schema m004_phrase) instead of a sort of every session of the agent, which made a
page of 50 cost ≈ 120 ms of queries over 1,335 sessions and grew with the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agtaild.index import schema
from agtaild.index.queries import short_id


def _index(tmp_path: Path, n: int) -> sqlite3.Connection:
    db = schema.connect(tmp_path / "index.sqlite3")
    schema.migrate(db)
    rows = []
    for i in range(n):
        agent = "codex" if i % 3 else "claude-code"
        sid = f"019a{i:08x}-7000-4000-8000-{i:012x}" if agent == "codex" else f"{(i * 2654435761) % 2**32:08x}-aaaa"
        rows.append((i + 1, agent, sid))
    db.execute("BEGIN")
    for file_id, agent, sid in rows:
        db.execute(
            "INSERT INTO files (id, path, agent, root, kind, rel, fingerprint, unit, read_at, settled) "
            "VALUES (?, ?, ?, '/r', 'native', ?, x'', x'', 0, 1)",
            (file_id, f"/r/{sid}", agent, sid),
        )
        db.execute(
            "INSERT INTO sessions (file_id, agent, sid, kind, data, activity, programmatic, archived) "
            "VALUES (?, ?, ?, 'native', '{}', ?, 0, 0)",
            (file_id, agent, sid, float(file_id)),
        )
    db.execute("COMMIT")
    return db


def test_short_id_lookups_search_an_index_and_sort_nothing(tmp_path: Path) -> None:
    db = _index(tmp_path, 300)
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    sid = db.execute("SELECT sid FROM sessions WHERE agent = 'codex' ORDER BY sid LIMIT 1 OFFSET 40").fetchone()[0]
    statements.clear()
    short_id(db, "codex", sid)
    db.set_trace_callback(None)
    lookups = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(lookups) == 2, statements
    for sql in lookups:
        plan = " / ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "sessions_agent_sid" in plan and "TEMP B-TREE" not in plan, plan


def test_short_ids_stay_unique_prefixes(tmp_path: Path) -> None:
    db = _index(tmp_path, 300)
    for agent in ("codex", "claude-code"):
        sids = [r[0] for r in db.execute("SELECT sid FROM sessions WHERE agent = ?", (agent,))]
        for sid in sids:
            short = short_id(db, agent, sid)
            assert sid.startswith(short) and len(short) >= 8
            assert [s for s in sids if s.startswith(short)] == [sid]
