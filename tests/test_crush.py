"""Crush adapter on a real database of August 2025 (tests/corpus/crush/dbos-transact-golang) and
the hand-made one (tests/corpus/crush/synthetic-agtail, built by its build_crush_db.py from the
documented schema: no real Crush could be installed offline)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.crush.adapter import CrushAdapter
from agtaild.model import Session

PROJECT = "crush/synthetic-agtail/demo"
DATA = f"{PROJECT}/.crush"
MAIN = "8a1f0c3e-5b2d-4e61-9f70-1c2d3e4f5a6b"
CHILD = "call_agent_01"
STOPPED = "b7c6d5e4-0000-4000-8000-00000000beef"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> CrushAdapter:
    return CrushAdapter()


def read_all(adapter: CrushAdapter, root: Path) -> dict[str, object]:
    return {u.path.rsplit("#", 1)[1]: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def test_discovery_from_db_data_dir_project_registry_and_cwds(
    adapter: CrushAdapter, corpus: Path, tmp_path: Path
) -> None:
    db = corpus / DATA / "crush.db"
    for root in (db, corpus / DATA, corpus / PROJECT):
        units = list(adapter.discover(root))
        assert [u.path for u in units] == [f"{db}#{MAIN}", f"{db}#{CHILD}", f"{db}#{STOPPED}"]
        assert units[0].files[0] == str(db)
    # the global registry lists the projects (Crush's projects.json)
    glob = tmp_path / "share" / "crush"
    glob.mkdir(parents=True)
    entry = {
        "path": str(corpus / PROJECT),
        "data_dir": str(corpus / DATA),
        "last_accessed": "2026-01-01T00:00:00Z",
    }
    (glob / "projects.json").write_text(json.dumps({"projects": [entry]}))
    assert len(list(adapter.discover(glob))) == 3
    assert adapter.default_roots({"CRUSH_GLOBAL_DATA": str(glob)}, tmp_path) == [glob]
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".local/share/crush"]
    # a custom data dir (crush --data-dir): the registry names its project
    custom = tmp_path / "custom-data"
    shutil.copytree(corpus / DATA, custom)
    (glob / "projects.json").write_text(
        json.dumps(
            {
                "projects": [
                    {"path": "/work/proj", "data_dir": str(custom), "last_accessed": "2026-01-01T00:00:00Z"}
                ]
            }
        )
    )
    unit = next(iter(adapter.discover(glob)))
    s = adapter.read(unit, None, now=LATER).session
    assert s.cwd == "/work/proj"
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv[-2:] == ["--data-dir", str(custom)] and cmd.cwd == "/work/proj"
    # a working directory another agent names
    assert adapter.roots_for_cwds([str(corpus / PROJECT), str(tmp_path)]) == [db]


def test_events_results_and_subagent_link(adapter: CrushAdapter, corpus: Path) -> None:
    got = read_all(adapter, corpus / DATA)
    main = got[MAIN]
    s = main.session
    assert s.title == "Fix the failing build" and s.cwd == str(corpus / PROJECT) and s.project == "demo"
    assert s.models == ["claude-sonnet-4-5-20250929"]
    assert [e.kind for e in main.events] == [
        "text",
        "thinking",
        "text",
        "tool_use",
        "tool_use",
        "text",
        "summary",
    ]
    bash, agent = main.events[3], main.events[4]
    assert bash.input == {"command": "go build ./..."} and bash.is_error is True
    assert bash.result == "main.go:12: undefined: cfg"
    assert agent.tool_use_id == CHILD and agent.result == "cfg is defined in config.go:8."
    assert (s.accounting.lines, s.accounting.events, s.accounting.merged) == (7, 5, 2)
    assert s.compactions == 1 and s.ending is None
    # seconds and milliseconds side by side, both normalised
    assert s.started == "2025-11-30T10:53:20.000Z" and main.events[0].ts == "2025-11-30T10:53:21.000Z"
    child = got[CHILD].session
    assert child.parent is not None and (child.parent.id, child.parent.tool_use_id) == (MAIN, CHILD)
    assert adapter.resume(child) is None


def test_usage_equals_the_session_columns(adapter: CrushAdapter, corpus: Path) -> None:
    got = read_all(adapter, corpus / DATA)
    conn = sqlite3.connect(corpus / DATA / "crush.db")
    for sid, prompt, completion, cost in conn.execute(
        "SELECT id, prompt_tokens, completion_tokens, cost FROM sessions"
    ):
        s = got[sid].session
        assert (s.usage.input_tokens, s.usage.output_tokens) == (prompt, completion)
        assert s.extra["agent_cost_usd"] == cost and s.extra["usage_is_latest_call"] is True
        assert len(got[sid].usage) == 1
    conn.close()


def test_cancelled_turn_and_attachment(adapter: CrushAdapter, corpus: Path) -> None:
    r = read_all(adapter, corpus / DATA)[STOPPED]
    assert r.session.ending == "interrupted"
    attachment = r.events[1]
    assert attachment.extra["attachment"] == {"Path": "diagram.png", "MIMEType": "image/png"}


def test_wal_rows_are_seen_and_unchanged_sessions_cost_nothing(
    adapter: CrushAdapter, corpus: Path, tmp_path: Path
) -> None:
    data = tmp_path / "proj" / ".crush"
    shutil.copytree(corpus / DATA, data)
    writer = sqlite3.connect(data / "crush.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    unit = next(u for u in adapter.discover(data) if u.path.endswith(STOPPED))
    first = adapter.read(unit, None, now=LATER)
    again = adapter.read(unit, first.state, now=LATER)
    assert again.events == [] and again.reset is False and again.session.id == STOPPED
    writer.execute(
        "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
        (
            "s3",
            STOPPED,
            "user",
            '[{"type":"text","data":{"text":"go on"}}]',
            None,
            1764500400000,
            1764500400000,
        ),
    )
    writer.commit()
    assert (data / "crush.db-wal").stat().st_size > 0  # the new row sits in the WAL only
    after = adapter.read(unit, first.state, now=LATER)
    assert after.reset is True and after.events[-1].text == "go on"
    writer.close()


def test_resume(adapter: CrushAdapter, corpus: Path) -> None:
    s = read_all(adapter, corpus / DATA)[MAIN].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["crush", "--session", MAIN] and cmd.cwd == str(corpus / PROJECT)
    for bad in ("-s", "--yolo", "a b", ""):
        assert (
            adapter.resume(Session(agent="crush", id=bad, path=f"/p/.crush/crush.db#{bad}", cwd="/p")) is None
        )
    custom = Session(agent="crush", id="abc", path="/data/custom/crush.db#abc", cwd="/p")
    cmd = adapter.resume(custom)
    assert cmd is not None and cmd.argv == ["crush", "--session", "abc", "--data-dir", "/data/custom"]


def test_mirrored_copy_has_the_same_relative_paths(
    adapter: CrushAdapter, corpus: Path, tmp_path: Path
) -> None:
    """The archive keeps a database under <digest>/crush.db; a copy there must map to the same
    relative paths as the original, or both would be listed."""
    native = list(adapter.discover(corpus / DATA))
    rels = [adapter.relative_path(u, u.path) for u in native]
    mirror = tmp_path / "archive" / "crush"
    target = mirror / adapter.relative_path(native[0], native[0].files[0])
    target.parent.mkdir(parents=True)
    shutil.copy(corpus / DATA / "crush.db", target)
    copies = list(adapter.discover(mirror))
    assert [adapter.relative_path(u, u.path) for u in copies] == rels
    assert len(set(rels)) == 3 and rels[0].endswith(f"/crush.db#{MAIN}")


REAL_PROJECT = "crush/dbos-transact-golang/dbos-transact-golang"
GUIDE = "a20c5ed5-41d4-45f7-88eb-7ba0645f1341"
CLI_MD = "f306c145-4c83-492c-b575-739c30bbced4"


def test_real_database_sessions_tools_and_counters(adapter: CrushAdapter, corpus: Path) -> None:
    db = corpus / REAL_PROJECT / ".crush" / "crush.db"
    got = read_all(adapter, corpus / REAL_PROJECT)
    assert sorted(got) == sorted([GUIDE, CLI_MD])
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    for sid, res in got.items():
        s = res.session  # type: ignore[attr-defined]
        title, prompt, completion, cost, count = con.execute(
            "SELECT title, prompt_tokens, completion_tokens, cost, message_count FROM sessions WHERE id = ?",
            (sid,),
        ).fetchone()
        rows = con.execute("SELECT count(*) FROM messages WHERE session_id = ?", (sid,)).fetchone()[0]
        assert s.title == title and s.models == ["gpt-5"] and s.cwd == str(corpus / REAL_PROJECT)
        assert (s.usage.input_tokens, s.usage.output_tokens) == (prompt, completion)
        assert s.extra["agent_cost_usd"] == cost and s.extra["message_count"] == count == rows
        assert s.accounting.lines == rows and s.accounting.balanced() and s.accounting.bad == 0
        assert not [e for e in res.events if e.kind == "unknown"]  # type: ignore[attr-defined]
    s = got[GUIDE].session  # type: ignore[attr-defined]
    assert (s.started, s.ended, s.ending) == (
        "2025-08-09T03:11:00.000Z",
        "2025-08-09T03:55:40.000Z",
        "interrupted",
    )
    events = got[GUIDE].events  # type: ignore[attr-defined]
    calls = [e for e in events if e.kind == "tool_use"]
    n_results = con.execute(
        "SELECT count(*) FROM messages m, json_each(m.parts) j WHERE m.session_id = ? AND json_extract(j.value, '$.type') = 'tool_result'",
        (GUIDE,),
    ).fetchone()[0]
    assert len(calls) == n_results == 40 and all(e.result is not None for e in calls)
    assert {e.tool for e in calls} == {"bash", "edit", "glob", "grep", "ls", "view", "write"}
    # tool rows end with a finish part: folded, so every tool row merges into its calls
    assert (
        s.accounting.merged
        == con.execute(
            "SELECT count(*) FROM messages WHERE session_id = ? AND role = 'tool'", (GUIDE,)
        ).fetchone()[0]
    )
    errors = [e for e in events if e.kind == "system"]
    assert [e.subtype for e in errors].count("finish:permission_denied") == 3
    assert any(e.subtype == "finish:error" and e.text == "API Error" for e in errors)
    # write and edit carry the diff Crush recorded
    write = next(e for e in calls if e.tool == "write")
    (change,) = write.extra["edit"]["files"]
    assert change["path"] == "/Users/max/codeZ/dbos-transact-golang/CRUSH.md" and change["numbered"]
    assert change["hunks"][0]["lines"][0] == "+CRUSH quickstart for agents"
    edit = next(e for e in calls if e.tool == "edit")
    assert edit.extra["edit"]["files"][0]["path"] == edit.input["file_path"]
    assert {ln[0] for h in edit.extra["edit"]["files"][0]["hunks"] for ln in h["lines"]} >= {"-", "+"}
    changed = [e for e in calls if "edit" in e.extra]
    assert len(changed) == 7  # every write/edit that succeeded; the denied ones have no metadata
    for e in changed:  # Crush's own additions/removals: exactly, where its diff is recorded (write);
        # for edit (the whole file before and after) the net change (two diffs may align a line differently)
        lines = [ln for f in e.extra["edit"]["files"] for h in f["hunks"] for ln in h["lines"]]
        meta = e.extra["metadata"]
        added, removed = sum(ln[0] == "+" for ln in lines), sum(ln[0] == "-" for ln in lines)
        assert added - removed == meta["additions"] - meta["removals"]
        if e.tool == "write":
            assert (added, removed) == (meta["additions"], meta["removals"])
    con.close()


def test_hand_made_database_has_the_schema_crush_writes(adapter: CrushAdapter, corpus: Path) -> None:
    """An empty database Crush itself made (migration 20260127000000, tests/corpus/crush/slopmeter):
    it lists no session, and the hand-made sample has exactly its data tables and their columns
    (the hand-made one lacks only Crush's migration bookkeeping)."""
    real = corpus / "crush/slopmeter/slopmeter/.crush/crush.db"
    assert list(adapter.discover(real.parent)) == []

    bookkeeping = {"goose_db_version", "sqlite_sequence"}

    def schema(db: Path) -> dict[str, list[tuple[str, str]]]:
        con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        try:
            tables = [
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            ]
            return {
                t: [(r[1], r[2]) for r in con.execute(f"SELECT * FROM pragma_table_info('{t}')")]
                for t in tables
                if t not in bookkeeping
            }
        finally:
            con.close()

    con = sqlite3.connect(f"file:{real}?mode=ro&immutable=1", uri=True)
    assert con.execute("SELECT max(version_id) FROM goose_db_version").fetchone() == (20260127000000,)
    con.close()
    got = schema(real)
    assert sorted(got) == ["files", "messages", "read_files", "sessions"]
    assert schema(corpus / DATA / "crush.db") == got
