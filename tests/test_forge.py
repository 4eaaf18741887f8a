"""Forge on its hand-made database (tests/corpus/forge/synthetic-agtail/.forge.db, built from
forge 54cecac's migrations and ContextRecord; see PROVENANCE)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.forge import ForgeAdapter
from agtaild.cli import main

SAMPLE = Path(__file__).parent / "corpus" / "forge" / "synthetic-agtail"
MAIN, CHILD, OLD, BROKEN, EMPTY = (
    "3f1c2a9e-7b4d-4c1e-9a55-0d2b6e8f1a01", "8c0e5d21-4f3a-4b7c-8e19-6a2d9c3b7e02",
    "b2d4f6a8-1c3e-4a5b-9d7f-2e4c6a8b0c03", "e5a7c9b1-3d5f-4e6a-8b0c-4d6f8a0c2e04",
    "0a9b8c7d-6e5f-4a3b-9c1d-5e7f9a1b3c05",
)  # fmt: skip
LATER = 4_000_000_000.0


def _read(root: Path = SAMPLE) -> dict:
    adapter = ForgeAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _context(cid: str) -> dict:
    with sqlite3.connect(f"file:{SAMPLE / '.forge.db'}?mode=ro&immutable=1", uri=True) as conn:
        (text,) = conn.execute(
            "SELECT context FROM conversations WHERE conversation_id = ?", (cid,)
        ).fetchone()
    return json.loads(text)


def test_every_conversation_with_a_context_is_a_session_and_every_message_is_counted() -> None:
    read = _read()
    assert sorted(read) == sorted([MAIN, CHILD, OLD, BROKEN])  # EMPTY has no context: Forge lists it nowhere
    for cid in (MAIN, CHILD, OLD):
        s = read[cid].session
        assert s.accounting.lines == len(_context(cid)["messages"]) + 1 and s.accounting.balanced(), cid
        assert s.bad_lines == 0
    main_session = read[MAIN].session
    assert main_session.title == "Fix the greeting" and main_session.cwd == "/home/dev/demo-app"
    assert main_session.project == "demo-app" and main_session.models == ["claude-sonnet-4-5-20250929"]
    assert (main_session.started, main_session.ended) == (
        "2026-11-30T10:00:00.120Z",
        "2026-11-30T10:04:10.500Z",
    )
    assert main_session.first_prompt == "Fix the greeting in hello.py and run the tests"
    assert main_session.messages == 8  # two prompts, six assistant texts
    assert main_session.extra["files_changed"]["/home/dev/demo-app/hello.py"] == {
        "lines_added": 1, "lines_removed": 1, "tool": "patch"
    }  # fmt: skip


def test_usage_is_forges_own_per_message_counts() -> None:
    r = _read()[MAIN]
    entries = [e for e in _context(MAIN)["messages"] if isinstance(e, dict) and "usage" in e]
    prompt = sum(e["usage"]["prompt_tokens"]["actual"] for e in entries)
    cached = sum(e["usage"]["cached_tokens"]["actual"] for e in entries)
    completion = sum(e["usage"]["completion_tokens"]["actual"] for e in entries)
    u = r.session.usage
    assert (u.input_tokens + u.cache_read_tokens, u.cache_read_tokens, u.output_tokens) == (
        prompt,
        cached,
        completion,
    )
    assert len(r.usage) == len(entries) == 8 and u.total_tokens == prompt + completion
    first = r.usage[0]
    assert (first.key, first.model, first.usage.input_tokens, first.usage.output_tokens) == (
        "message:5", "claude-sonnet-4-5-20250929", 1200, 40
    )  # fmt: skip


def test_text_thinking_tools_results_errors_and_edits() -> None:
    events = _read()[MAIN].events
    kinds = [(e.kind, e.role, e.subtype) for e in events[:6]]
    assert kinds == [
        ("system", "system", None), ("system", "system", None), ("text", "user", None),
        ("system", "user", "attachment"), ("thinking", "assistant", None), ("text", "assistant", None),
    ]  # fmt: skip
    assert events[2].extra["sent"].startswith("<task>Fix the greeting")  # what the model got, kept
    assert events[4].text == "The user wants the typo fixed; read hello.py."
    tools = [e for e in events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error, t.extra.get("exit_code")) for t in tools] == [
        ("read", False, None), ("patch", False, None), ("shell", True, 127), ("shell", False, 0),
        ("write", False, None), ("sage", False, None), ("remove", False, None),
    ]  # fmt: skip
    assert "No module named pytest" in tools[2].result and tools[2].input == {
        "command": "python -m pytest -q",
        "cwd": "/home/dev/demo-app",
    }
    patch = tools[1].extra["edit"]["files"][0]
    assert patch["path"] == "/home/dev/demo-app/hello.py" and patch["hunks"][0]["lines"] == [
        '-    return "helo"',
        '+    return "hello"',
    ]
    write = tools[4].extra["edit"]["files"][0]
    assert write["op"] == "create" and write["hunks"][0]["lines"][0] == "+import hello"
    assert tools[6].extra["edit"]["files"][0] == {
        "path": "/home/dev/demo-app/notes.txt",
        "op": "delete",
        "hunks": [],
        "numbered": False,
        "cut": 0,
    }
    assert events[-1].kind == "unknown" and events[-1].raw == 42  # a record of no known shape, kept
    prompts = [e.text for e in events if e.kind == "text" and e.role == "user"]
    assert prompts == [
        "Fix the greeting in hello.py and run the tests",
        "Thanks! Also remove the old notes.txt",
    ]


def test_subagent_is_a_child_of_the_call_that_ran_it() -> None:
    read = _read()
    child = read[CHILD].session
    assert child.origin == "subagent" and child.title == "Review hello.py for other typos"
    assert child.parent is not None and (child.parent.id, child.parent.tool_use_id) == (MAIN, "toolu_06SAGE")
    spawn = next(e for e in read[MAIN].events if e.tool == "sage")
    assert spawn.extra["subagent"] == CHILD and spawn.result.startswith("<task_completed")
    grep = next(e for e in read[CHILD].events if e.kind == "tool_use")
    assert grep.tool == "fs_search" and grep.result == "" and grep.is_error is False  # an "empty" output
    adapter = ForgeAdapter()
    assert adapter.resume(child) is None
    cmd = adapter.resume(read[MAIN].session)
    assert (
        cmd is not None
        and cmd.argv == ["forge", f"--conversation-id={MAIN}"]
        and cmd.cwd == "/home/dev/demo-app"
    )


def test_older_rows_compaction_failed_patch_and_a_call_left_open() -> None:
    r = _read()[OLD]
    s = r.session
    assert s.cwd == "/home/dev/old-app" and s.models == ["gpt-5"] and s.compactions == 1
    assert s.title == "Now append a log line to app.py"  # no title in the row: the first prompt
    assert [e.kind for e in r.events].count("summary") == 1
    patch = next(e for e in r.events if e.tool == "patch")
    assert patch.is_error is True and patch.extra["edit_failed"] is True
    assert patch.extra["edit"]["files"][0]["hunks"][0]["lines"] == [
        " main()",
        "+log('started')",
    ]  # appended after the match
    assert [(u.key, u.usage.input_tokens, u.usage.cache_read_tokens, u.usage.output_tokens) for u in r.usage] == [
        ("context", 1000, 4000, 300)
    ]  # fmt: skip
    assert s.ending == "interrupted"  # the shell call never got its result
    adapter = ForgeAdapter()
    unit = next(u for u in adapter.discover(SAMPLE) if u.path.endswith(OLD))
    recent = adapter.read(unit, None, now=1_759_306_200.0 + 10)  # ten seconds after updated_at
    assert recent.session.ending is None


def test_a_torn_context_is_one_bad_record_and_the_row_stays() -> None:
    s = _read()[BROKEN].session
    assert s.title == "Torn" and s.truncated and s.bad_lines == 1 and s.accounting.balanced()
    assert "not JSON" in s.extra["context_error"]


def test_default_roots_follow_forge(tmp_path: Path) -> None:
    adapter = ForgeAdapter()
    assert adapter.default_roots({"FORGE_CONFIG": str(tmp_path / "cfg")}, tmp_path) == [tmp_path / "cfg"]
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".forge"]
    (tmp_path / "forge").mkdir()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / "forge", tmp_path / ".forge"]
    assert adapter.databases(SAMPLE) == [SAMPLE / ".forge.db"] and adapter.databases(
        SAMPLE / ".forge.db"
    ) == [SAMPLE / ".forge.db"]


def test_a_locked_or_damaged_database_is_an_error_not_a_deletion(tmp_path: Path) -> None:
    root = tmp_path / "forge"
    shutil.copytree(SAMPLE, root)
    adapter = ForgeAdapter()
    unit = next(u for u in adapter.discover(root) if u.path.endswith(MAIN))
    (root / ".forge.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    from agtaild.errors import AgtailError

    with pytest.raises(AgtailError):
        adapter.read(unit, None, now=LATER)


def test_cli_lists_searches_and_shows(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"forge={SAMPLE}"]
    assert main([*args, "list", "--json"]) == 0
    listed = {row["id"]: row for row in json.loads(capsys.readouterr().out)["sessions"]}
    assert set(listed) == {MAIN, CHILD, OLD, BROKEN} and listed[MAIN]["title"] == "Fix the greeting"
    assert main([*args, "search", "pytest", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {MAIN}
    assert main([*args, "show", MAIN]) == 0
    out = capsys.readouterr().out
    assert "Fix the greeting in hello.py" in out and "hello.py" in out


def test_a_finished_subagent_is_not_read_again_for_other_conversations_writes(tmp_path: Path) -> None:
    root = tmp_path / "forge"
    shutil.copytree(SAMPLE, root)
    adapter = ForgeAdapter()
    unit = next(u for u in adapter.discover(root) if u.path.endswith(CHILD))
    first = adapter.read(unit, None, now=LATER)
    with sqlite3.connect(root / ".forge.db") as conn:  # the parent writes again, within the hour
        conn.execute(
            "UPDATE conversations SET updated_at = '2026-11-30 11:01:00' WHERE conversation_id = ?", (MAIN,)
        )
    again = adapter.read(unit, first.state, now=LATER)
    assert again.events and again.session.parent is not None  # recent: read again, its link may have landed
    with sqlite3.connect(root / ".forge.db") as conn:  # a day later, another conversation writes
        conn.execute(
            "UPDATE conversations SET updated_at = '2026-12-01 12:00:00' WHERE conversation_id = ?", (OLD,)
        )
    settled = adapter.read(unit, again.state, now=LATER)
    with sqlite3.connect(root / ".forge.db") as conn:
        conn.execute(
            "UPDATE conversations SET updated_at = '2026-12-02 12:00:00' WHERE conversation_id = ?", (OLD,)
        )
    assert adapter.read(unit, settled.state, now=LATER).events == []  # no re-read: nothing of it changed
