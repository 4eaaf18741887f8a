"""OpenClaw on its real recording (tests/corpus/real/openclaw-2026.9.6, 2026.9.6) and on damaged copies."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import zstandard

from agtaild.adapters.openclaw import OpenClawAdapter
from agtaild.model import Session

REAL = Path(__file__).parent / "corpus" / "real" / "openclaw-2026.9.6"
DB = REAL / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
LATER = 4_000_000_000.0


def _entries(db: Path, session_id: str) -> list[dict]:
    out = []
    with sqlite3.connect(db) as conn:
        for text, z in conn.execute(
            "SELECT event_json, event_zstd FROM transcript_events WHERE session_id=? ORDER BY seq", (session_id,)
        ):
            out.append(json.loads(text if text is not None else zstandard.ZstdDecompressor().decompress(z)))
    return out


def _read(root: Path) -> dict[str, tuple]:
    adapter = OpenClawAdapter()
    out = {}
    for unit in adapter.discover(root):
        result = adapter.read(unit, None, now=LATER)
        out[result.session.id] = (result, unit)
    return out


def test_every_session_and_row_of_the_recording() -> None:
    read = _read(REAL)
    with sqlite3.connect(DB) as conn:
        rows = dict(conn.execute("SELECT session_id, count(*) FROM transcript_events GROUP BY 1").fetchall())
    assert sorted(read) == sorted(rows) == ["apierror", "basic", "interrupted", "killed", "subagent"]
    for sid, (result, _unit) in read.items():
        acct = result.session.accounting
        assert acct.lines == rows[sid] and acct.balanced() and acct.bad == 0, (sid, acct)


def test_basic_session_usage_tools_and_edits_as_openclaw_recorded_them() -> None:
    result, _ = _read(REAL)["basic"]
    s = result.session
    assistant = [e["message"] for e in _entries(DB, "basic") if e.get("message", {}).get("role") == "assistant"]
    assert s.usage.input_tokens == sum(m["usage"]["input"] for m in assistant) == 74103
    assert s.usage.output_tokens == sum(m["usage"]["output"] for m in assistant) == 124
    assert len(result.usage) == len(assistant) == 7
    assert s.cwd and s.cwd.endswith("/home/src/demo-app") and s.models == ["stub-model"]
    assert s.title and s.title.startswith("[[S:openclaw/basic]]")
    assert s.extra["session_key"] == "agent:main:explicit:basic" and s.extra["openclaw_agent"] == "main"
    tools = [e for e in result.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("exec", False), ("write", False), ("edit", False), ("exec", True), ("exec", False)
    ]  # fmt: skip
    assert tools[3].extra["exit_code"] == 1 and "No such file" in tools[3].result
    assert {f["path"] for t in tools[1:3] for f in t.extra["edit"]["files"]} == {"notes.txt"}
    prompts = [e.text for e in result.events if e.kind == "text" and e.role == "user"]
    assert len(prompts) == 2 and "[[S:openclaw/continue]]" in prompts[1]  # the resumed turn, same session


def test_endings_nested_tool_and_compressed_row() -> None:
    read = _read(REAL)
    assert read["apierror"][0].session.ending == "error"
    assert read["interrupted"][0].session.ending == "interrupted"  # only the prompt was kept
    assert read["killed"][0].session.ending == "interrupted"  # a call without its result
    assert read["basic"][0].session.ending is None
    sub = read["subagent"][0]
    nested = [e for e in sub.events if e.subtype == "nested_tool"]
    assert [(e.tool, e.is_error) for e in nested] == [("sessions_spawn", True)]
    assert nested[0].extra["parent_tool_use_id"] == "call_a22c0a4765b140c3a128"
    assert nested[0].extra["child_session_key"].startswith("agent:main:subagent:")
    # seq 7 of this session is stored zstd-compressed: it is the tool_call's result
    spawn = next(e for e in sub.events if e.tool == "tool_call")
    assert spawn.result and "published reply runtime missing" in spawn.result


def test_a_session_that_is_still_waiting_is_not_called_interrupted_yet() -> None:
    adapter = OpenClawAdapter()
    unit = next(u for u in adapter.discover(REAL) if u.path.endswith("#killed"))
    with sqlite3.connect(DB) as conn:
        (last_ms,) = conn.execute("SELECT max(created_at) FROM transcript_events WHERE session_id='killed'").fetchone()
    soon = adapter.read(unit, None, now=last_ms / 1000 + 10)
    assert soon.session.ending is None
    assert adapter.read(unit, soon.state, now=last_ms / 1000 + 1000).session.ending == "interrupted"


def test_broken_rows_are_counted_and_the_rest_read(tmp_path: Path) -> None:
    root = tmp_path / "state"
    shutil.copytree(REAL, root, symlinks=True)
    db = root / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute("UPDATE transcript_events SET event_json='{\"type\": \"mess' WHERE session_id='basic' AND seq=3")
        conn.execute(
            "UPDATE transcript_events SET event_zstd=X'28b52ffd00', event_utf8_bytes=5 WHERE session_id='subagent' AND seq=7"
        )
    read = _read(root)
    basic, sub = read["basic"][0].session, read["subagent"][0].session
    assert (basic.bad_lines, basic.accounting.lines, basic.accounting.balanced()) == (1, 24, True)
    assert (sub.bad_lines, sub.accounting.lines) == (1, 10)
    assert basic.usage.input_tokens == 74103  # nothing else lost


def test_legacy_jsonl_sessions_and_roots(tmp_path: Path) -> None:
    legacy = Path(__file__).parent / "corpus" / "openclaw" / "agent-sessions"
    read = _read(legacy)
    assert sorted(read) == ["openclaw-stage0-drift", "openclaw-stage0-large", "openclaw-stage0-small"]
    small = read["openclaw-stage0-small"][0]
    assert small.session.title == "List files" and small.session.cwd == "/tmp/repo"
    assert [e.result for e in small.events if e.kind == "tool_use"] == ["main.swift\nResources\n"]
    adapter = OpenClawAdapter()
    home = tmp_path / "h"
    assert adapter.default_roots({}, home) == [home / ".openclaw"]
    assert adapter.default_roots({"OPENCLAW_PROFILE": "work"}, home) == [home / ".openclaw-work"]
    assert adapter.default_roots({"OPENCLAW_HOME": str(tmp_path / "o")}, home) == [tmp_path / "o" / ".openclaw"]
    assert adapter.default_roots({"OPENCLAW_STATE_DIR": str(tmp_path / "s")}, home) == [tmp_path / "s"]


def test_resume_opens_the_session_by_its_key() -> None:
    adapter = OpenClawAdapter()
    s = _read(REAL)["basic"][0].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["openclaw", "tui", "--local", "--session=agent:main:explicit:basic"]
    assert cmd.cwd == s.cwd
    for key in ("-rf", "agent main", None):
        assert adapter.resume(Session(agent="openclaw", id="x", extra={"session_key": key})) is None
