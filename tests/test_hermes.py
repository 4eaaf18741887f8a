"""Hermes Agent on its real recording (tests/corpus/real/hermes-0.19.0, 0.19.0) and on damaged copies."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from agtaild.adapters.hermes import HermesAdapter

REAL = Path(__file__).parent / "corpus" / "real" / "hermes-0.19.0"
LATER = 4_000_000_000.0
BASIC, APIERROR, SUBAGENT, CHILD = (
    "20261201_210116_96277f", "20261201_210251_12d094", "20261201_210341_219a8c", "20261201_210441_49afe2"
)  # fmt: skip


def _read(root: Path) -> dict:
    adapter = HermesAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_every_session_row_and_hermes_own_counters() -> None:
    read = _read(REAL)
    with sqlite3.connect(REAL / "state.db") as conn:
        sessions = {r[0]: r[1:] for r in conn.execute("SELECT id, input_tokens, output_tokens, message_count FROM sessions")}
        counts = dict(conn.execute("SELECT session_id, count(*) FROM messages GROUP BY 1").fetchall())
    assert sorted(read) == sorted(sessions) and len(read) == 7
    for sid, result in read.items():
        s = result.session
        assert s.accounting.lines == counts.get(sid, 0) + 1 and s.accounting.balanced(), (sid, s.accounting)
        assert (s.usage.input_tokens, s.usage.output_tokens) == sessions[sid][:2], sid
    assert read[BASIC].session.usage.input_tokens == 20383


def test_basic_session_tools_results_and_edits() -> None:
    r = _read(REAL)[BASIC]
    s = r.session
    assert s.title and s.title.startswith("[[S:hermes/basic]]") and s.origin == "cli" and s.models == ["stub-model"]
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("terminal", False), ("write_file", False), ("patch", False), ("terminal", True), ("terminal", False)
    ]  # fmt: skip
    assert tools[3].result == "cat: does-not-exist.txt: No such file or directory" and tools[3].extra["exit_code"] == 1
    assert tools[4].result == "alpha\ngamma"
    hunk = tools[2].extra["edit"]["files"][0]["hunks"][0]
    assert hunk["lines"] == [" alpha", "-beta", "+gamma"]
    assert tools[1].extra["edit"]["files"][0]["op"] == "create"
    assert [e.text for e in r.events if e.kind == "thinking"] == ["The user wants a tour: list files first."]
    assert len([e for e in r.events if e.kind == "text" and e.role == "user"]) == 2  # the continue landed here


def test_subagent_and_endings() -> None:
    read = _read(REAL)
    child = read[CHILD].session
    assert child.parent is not None and child.parent.id == SUBAGENT and child.origin == "subagent"
    assert child.parent.tool_use_id == "call_b331228a141945668c71"  # the delegate_task whose goal it got
    spawn = next(e for e in read[SUBAGENT].events if e.tool == "delegate_task")
    assert spawn.tool_use_id == child.parent.tool_use_id and spawn.extra["subagent"] == CHILD
    assert read[APIERROR].session.ending == "error"  # Hermes dumped the failed request
    assert read["20261201_210521_9448f3"].session.ending == "interrupted"  # SIGINT: only the prompt
    assert read["20261201_210553_44c289"].session.ending == "interrupted"  # SIGKILL during the call
    assert read["20261201_210512_8329ed"].session.ending is None  # one-shot, closed normally
    assert read[BASIC].session.ending is None
    adapter = HermesAdapter()
    cmd = adapter.resume(read[BASIC].session)
    assert cmd is not None and cmd.argv == ["hermes", f"--resume={BASIC}"] and cmd.cwd == read[BASIC].session.cwd
    assert adapter.resume(child) is None


def test_a_prompt_still_waiting_is_not_interrupted_yet() -> None:
    adapter = HermesAdapter()
    unit = next(u for u in adapter.discover(REAL) if u.path.endswith("#20261201_210521_9448f3"))
    with sqlite3.connect(REAL / "state.db") as conn:
        (ts,) = conn.execute("SELECT max(timestamp) FROM messages WHERE session_id='20261201_210521_9448f3'").fetchone()
    assert adapter.read(unit, None, now=ts + 5).session.ending is None
    assert adapter.read(unit, None, now=ts + 500).session.ending == "interrupted"


def test_bad_cells_lose_only_themselves(tmp_path: Path) -> None:
    root = tmp_path / "hermes"
    shutil.copytree(REAL, root, symlinks=True)
    with sqlite3.connect(root / "state.db") as conn:
        conn.execute("UPDATE messages SET tool_calls='[{\"id\": ' WHERE id=2")
        conn.execute("UPDATE messages SET content=NULL, role='mystery' WHERE id=3")
    r = _read(root)[BASIC]
    assert r.session.accounting.balanced() and r.session.accounting.lines == 15
    assert any(e.kind == "unknown" and e.role == "mystery" for e in r.events)
    assert len([e for e in r.events if e.kind == "tool_use"]) == 4  # the call whose JSON broke is gone, not the rest
    assert r.session.usage.input_tokens == 20383


def test_roots_profiles() -> None:
    adapter = HermesAdapter()
    home = Path("/h")
    assert adapter.default_roots({}, home) == [home / ".hermes"]
    assert adapter.default_roots({"HERMES_HOME": "/x"}, home) == [Path("/x")]


def test_profile_databases_are_found(tmp_path: Path) -> None:
    root = tmp_path / "hermes"
    (root / "profiles" / "work").mkdir(parents=True)
    shutil.copy(REAL / "state.db", root / "profiles" / "work" / "state.db")
    assert HermesAdapter().databases(root) == [root / "profiles" / "work" / "state.db"]


def test_older_session_files_are_read_unless_the_database_has_them(tmp_path: Path) -> None:
    legacy = Path(__file__).parent / "corpus" / "hermes" / "agent-sessions"
    read = _read(legacy)
    assert sorted(read) == ["20260429_hermes_large", "20260429_hermes_schema_drift", "20260429_hermes_small"]
    large = read["20260429_hermes_large"]
    assert large.session.origin == "telegram" and large.session.models == ["gpt-5.2"]
    assert [(e.tool, e.result) for e in large.events if e.kind == "tool_use"] == [("shell", "/Users/alexm/Repository/Codex-History")]
    assert large.session.accounting.balanced() and large.session.accounting.metadata == 1  # the session_meta record
    assert not large.session.resumable
    root = tmp_path / "hermes"
    shutil.copytree(REAL, root, symlinks=True)
    shutil.copy(legacy / "sessions" / "session_20260429_hermes_small.json", root / "sessions")
    shutil.copy(legacy / "sessions" / "session_20260429_hermes_small.json", root / "sessions" / f"session_{BASIC}.json")
    ids = [u.path for u in HermesAdapter().discover(root)]
    assert sum(p.endswith(".json") for p in ids) == 1 and len(ids) == 8  # the copy named like a database session is left out
    (root / "sessions" / "session_torn.json").write_text('{"session_id": "torn", "messages": [')
    torn = _read(root)["torn"].session
    assert torn.bad_lines == 1 and torn.truncated
