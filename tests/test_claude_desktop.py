"""Claude Desktop (Code tab, Cowork) on hand-made records and transcripts
(tests/corpus/claude-desktop/handmade, laid out as the app's data folder ``Claude/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude_desktop import ClaudeDesktopAdapter
from agtaild.cli import main

APP = Path(__file__).parent / "corpus" / "claude-desktop" / "handmade" / "Claude"
COWORK = APP / "local-agent-mode-sessions"
CODE = APP / "claude-code-sessions"
MAIN = "e5f0a1b2-c3d4-4e5f-9a0b-1c2d3e4f5a6b"
CHILD = "agent-a7c1e9f3b5d20468"
RECORD = "local_3c7a9e12-4b5d-4f6e-8a0b-1c2d3e4f5a6b"
LATER = 4_000_000_000.0


def _read(root: Path) -> dict:
    adapter = ClaudeDesktopAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_cowork_session_takes_the_records_title_folder_and_mode() -> None:
    read = _read(COWORK)
    assert sorted(read) == [CHILD, MAIN]  # the record without a transcript gives nothing
    r = read[MAIN]
    s = r.session
    assert (s.agent, s.title, s.cwd, s.project) == (
        "claude-desktop",
        "Quarterly notes summary",
        "/Users/dev/Documents",
        "Documents",
    )
    assert s.extra["transcript_cwd"] == "/sessions/brave-curie" and s.extra["desktop_mode"] == "cowork"
    assert s.extra["desktop_session_id"] == RECORD and s.extra["selected_folders"] == ["/Users/dev/Documents"]
    assert s.ended == "2026-11-23T15:00:36.500Z"  # the record's lastActivityAt, after the last line
    assert s.origin == "claude-desktop" and s.resumable is False and s.bad_lines == 1
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("Bash", False),
        ("Bash", True),
        ("Agent", False),
        ("Write", False),
    ]
    assert [e.text for e in r.events if e.kind == "thinking"] == ["List the notes first."]
    lines = [json.loads(x) for x in next(COWORK.rglob(f"{MAIN}.jsonl")).read_text().splitlines()[:-1]]
    requests = {x["message"]["id"]: x["message"]["usage"] for x in lines if x["type"] == "assistant"}
    assert s.usage.input_tokens == sum(u["input_tokens"] for u in requests.values())
    assert s.usage.cache_read_tokens == sum(u["cache_read_input_tokens"] for u in requests.values()) == 33400
    assert s.usage.cache_write_tokens == sum(u["cache_creation_input_tokens"] for u in requests.values())


def test_subagent_is_a_child_of_the_cowork_session() -> None:
    child = _read(COWORK)[CHILD].session
    assert child.parent is not None and (child.parent.agent, child.parent.id, child.parent.tool_use_id) == (
        "claude-desktop", MAIN, "toolu_cw_03"
    )  # fmt: skip
    assert (
        child.title == "Summarise q1.md, q2.md and q3.md in five bullets."
        and child.cwd == "/sessions/brave-curie"
    )
    assert child.started == "2026-11-23T15:00:09.300Z"  # not widened by the main session's record


def test_units_watch_the_record_and_nothing_is_resumed() -> None:
    adapter = ClaudeDesktopAdapter()
    units = {Path(u.path).stem: u for u in adapter.discover(COWORK)}
    record = str(next(COWORK.rglob(f"{RECORD}.json")))
    assert record in units[MAIN].files and record in adapter.native_files(units[MAIN])
    read = _read(COWORK)
    assert adapter.resume(read[MAIN].session) is None and adapter.start_command("hi", None) is None


def test_a_code_tab_session_is_listed_once_by_claude_code(tmp_path: Path) -> None:
    """The Code tab's record names a transcript in ~/.claude/projects: only claude-code lists it."""
    assert _read(CODE) == {}
    home = tmp_path / "home"
    real = (
        Path(__file__).parent
        / "corpus"
        / "real"
        / "claude-2.1.197"
        / "projects"
        / "-tmp-rt-claude-home-src-demo-app"
    )
    (home / ".claude" / "projects" / real.name).mkdir(parents=True)
    shutil.copy(
        real / "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", home / ".claude" / "projects" / real.name
    )
    shutil.copytree(APP, home / "Library" / "Application Support" / "Claude")
    desktop = ClaudeDesktopAdapter()
    found = [u for root in desktop.default_roots({}, home) for u in desktop.discover(root)]
    assert sorted(Path(u.path).stem for u in found) == [CHILD, MAIN]
    claude = ClaudeCodeAdapter()
    ids = [Path(u.path).stem for root in claude.default_roots({}, home) for u in claude.discover(root)]
    assert ids == ["2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"]


def test_roots() -> None:
    adapter = ClaudeDesktopAdapter()
    home = Path("/h")
    roots = adapter.default_roots({}, home)
    assert roots[:2] == [home / "Library/Application Support/Claude/claude-code-sessions",
                         home / "Library/Application Support/Claude/local-agent-mode-sessions"]  # fmt: skip
    assert home / ".config/Claude/local-agent-mode-sessions" in roots
    assert Path("/w/Roaming/Claude/local-agent-mode-sessions") in adapter.default_roots(
        {"APPDATA": "/w/Roaming"}, home
    )


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"claude-desktop={COWORK}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(row["id"] for row in listed) == [CHILD, MAIN] and {row["agent"] for row in listed} == {
        "claude-desktop"
    }
    assert main([*args, "search", "launches", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["agent"] for h in hits} == {"claude-desktop"}
    assert main([*args, "show", MAIN]) == 0
    shown = capsys.readouterr().out
    assert "Quarterly notes summary" in shown and "summary.md is in your outputs folder" in shown
