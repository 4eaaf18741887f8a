"""Amazon Q Developer CLI on its hand-made database (tests/corpus/amazon-q/synthetic-agtail/
data.sqlite3, built from q 1.19.7's migrations and ConversationState; see PROVENANCE)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from agtaild.adapters.amazon_q import AmazonQAdapter
from agtaild.cli import main
from agtaild.errors import AgtailError

SAMPLE = Path(__file__).parent / "corpus" / "amazon-q" / "synthetic-agtail"
API, NOTES = "c0ffee00-1111-4222-8333-444455556666", "d00dfeed-aaaa-4bbb-8ccc-ddddeeeeffff"
LATER = 4_000_000_000.0


def _read(root: Path = SAMPLE) -> dict:
    adapter = AmazonQAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _state(key: str) -> dict:
    with sqlite3.connect(f"file:{SAMPLE / 'data.sqlite3'}?mode=ro&immutable=1", uri=True) as conn:
        (text,) = conn.execute("SELECT value FROM conversations WHERE key = ?", (key,)).fetchone()
    return json.loads(text)


def test_one_session_per_directory_named_by_its_conversation_id() -> None:
    read = _read()
    assert sorted(read) == sorted([API, NOTES, "%2Fhome%2Fdev%2Fbroken"])
    s = read[API].session
    assert (s.cwd, s.project, s.title, s.models) == (
        "/home/dev/demo-api",
        "demo-api",
        "The /health endpoint returns 500, fix it",
        ["claude-sonnet-4"],
    )
    assert (s.started, s.ended) == (
        "2025-11-29T22:05:00.000Z",
        "2025-11-29T22:06:07.000Z",
    )  # request times, in UTC
    history = _state("/home/dev/demo-api")["history"]
    assert s.accounting.lines == 1 + 2 * len(history) and s.accounting.balanced()
    assert s.messages == 6 and s.usage.is_zero() and read[API].usage == []  # Q keeps no token counts
    assert read[API].session.path.endswith("data.sqlite3#%2Fhome%2Fdev%2Fdemo-api")


def test_tools_results_exit_codes_thinking_and_edits() -> None:
    events = _read()[API].events
    assert [e.kind for e in events[:3]] == ["text", "text", "thinking"]
    assert events[2].text == "Read the handler first, then fix the status code."
    tools = [e for e in events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error, t.extra.get("exit_code")) for t in tools] == [
        ("fs_read", False, None), ("execute_bash", True, 1), ("fs_write", False, None), ("fs_write", False, None),
        ("execute_bash", False, 0),
    ]  # fmt: skip
    assert (
        tools[1].result == "/usr/bin/python: No module named pytest"
        and tools[1].input["command"] == "python -m pytest -q"
    )
    assert tools[0].result == "def health():\n    return 500\n"
    assert tools[2].extra["edit"]["files"][0]["hunks"][0]["lines"] == ["-    return 500", "+    return 200"]
    created = tools[3].extra["edit"]["files"][0]
    assert created["op"] == "create" and created["path"] == "/home/dev/demo-api/CHANGES.md"
    assert tools[4].result == "200\n" and tools[4].ts == "2025-11-29T22:06:00.500Z"
    prompts = [e.text for e in events if e.kind == "text" and e.role == "user"]
    assert prompts == ["The /health endpoint returns 500, fix it", "Check it by calling health()"]


def test_compaction_cancelled_tools_a_bad_entry_and_a_call_left_open() -> None:
    r = _read()[NOTES]
    s = r.session
    assert (
        s.compactions == 1
        and r.events[0].kind == "summary"
        and r.events[0].text.startswith("The user keeps a notes folder")
    )
    cancelled = next(e for e in r.events if e.tool == "execute_bash")
    assert cancelled.is_error and cancelled.extra["cancelled"] and cancelled.extra["outside_context"]
    typed = [e for e in r.events if e.kind == "text" and e.role == "user"]
    assert [e.text for e in typed] == [
        "Clean the build folder",
        "No, don't delete anything. Add two todos instead.",
    ]
    assert typed[1].extra["media"] == [{"type": "Png"}]  # the image's kind, never its bytes
    insert, append = [e.extra["edit"]["files"][0] for e in r.events if e.tool == "fs_write"]
    assert (
        insert["hunks"][0] == {"old_start": 3, "new_start": 3, "lines": ["+- call the bank"]}
        and insert["numbered"]
    )
    assert append["hunks"][0]["lines"] == ["+- water plants"] and not append["numbered"]
    assert any(e.kind == "unknown" and e.raw == "not a history entry" for e in r.events)
    assert s.accounting.balanced() and s.ending == "interrupted"  # use_aws never got its result
    adapter = AmazonQAdapter()
    unit = next(u for u in adapter.discover(SAMPLE) if u.path.endswith("%2Fnotes"))
    assert adapter.read(unit, None, now=1_764_540_033.5 + 5).session.ending is None  # still running, maybe


def test_a_torn_value_is_one_bad_record() -> None:
    s = _read()["%2Fhome%2Fdev%2Fbroken"].session
    assert s.truncated and s.bad_lines == 1 and s.accounting.balanced() and s.cwd == "/home/dev/broken"


def test_resume_is_q_chat_resume_in_the_directory() -> None:
    adapter = AmazonQAdapter()
    cmd = adapter.resume(_read()[API].session)
    assert cmd is not None and cmd.argv == ["q", "chat", "--resume"] and cmd.cwd == "/home/dev/demo-api"


def test_default_roots(tmp_path: Path) -> None:
    adapter = AmazonQAdapter()
    roots = adapter.default_roots({"XDG_DATA_HOME": str(tmp_path / "xdg")}, tmp_path)
    if sys.platform == "darwin":
        assert roots == [tmp_path / "Library" / "Application Support" / "amazon-q"]
    else:
        assert roots == [tmp_path / "xdg" / "amazon-q"]
        assert adapter.default_roots({}, tmp_path) == [tmp_path / ".local" / "share" / "amazon-q"]
    assert adapter.databases(SAMPLE) == [SAMPLE / "data.sqlite3"]


def test_a_database_before_the_conversations_table_has_no_sessions_and_a_damaged_one_is_an_error(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old" / "data.sqlite3"
    old.parent.mkdir()
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB)")
    adapter = AmazonQAdapter()
    assert list(adapter.discover(old.parent)) == []
    root = tmp_path / "q"
    shutil.copytree(SAMPLE, root)
    unit = next(u for u in adapter.discover(root) if u.path.endswith("demo-api"))
    (root / "data.sqlite3").write_bytes(b"not sqlite at all")
    with pytest.raises(AgtailError):
        adapter.read(unit, None, now=LATER)


def test_cli_lists_searches_and_shows(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"amazon-q={SAMPLE}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = {row["id"]: row for row in json.loads(capsys.readouterr().out)["sessions"]}
    assert {API, NOTES} <= set(listed) and listed[API]["cwd"] == "/home/dev/demo-api"
    assert main([*args, "search", "pytest", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {API}
    assert main([*args, "show", API]) == 0
    assert "health() returns 200." in capsys.readouterr().out
