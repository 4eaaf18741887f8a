"""DeepSeek TUI / CodeWhale on hand-made SavedSession files in 0.8.40's serde shapes (tests/corpus/deepseek-tui)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters.deepseek_tui import DeepSeekTuiAdapter
from agtaild.cli import main
from agtaild.model import ParentRef, Session

ROOT = Path(__file__).parent / "corpus" / "deepseek-tui" / "synthetic-agtail" / ".deepseek" / "sessions"
LATER = 4_000_000_000.0
BASIC = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
FORK = "f0e1d2c3-b4a5-4968-8776-655443322110"
TORN = "0d0d0d0d-2222-4333-8444-555566667777"


def _read(root: Path = ROOT) -> dict:
    adapter = DeepSeekTuiAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_sessions_not_checkpoints() -> None:
    read = _read()
    assert sorted(read) == sorted([BASIC, FORK, TORN])  # checkpoints/latest.json is no session
    for sid in (BASIC, FORK):
        acct = read[sid].session.accounting
        messages = json.loads((ROOT / f"{sid}.json").read_text())["messages"]
        assert acct.lines == len(messages) and acct.balanced() and acct.bad == 0
    torn = read[TORN].session
    assert (torn.bad_lines, torn.accounting.lines, torn.truncated) == (1, 1, True)


def test_blocks_results_and_edits() -> None:
    r = _read()[BASIC]
    s = r.session
    assert (s.cwd, s.project, s.models, s.version) == (
        "/home/dev/gamma-rs",
        "gamma-rs",
        ["deepseek-v4-pro"],
        "schema 1",
    )
    assert (s.started, s.ended, s.ending) == ("2026-12-01T18:00:00.123Z", "2026-12-01T18:04:30.654Z", None)
    assert s.title == "Build the gamma crate, fix the failing test and n"  # the TUI's own 50-character title
    first = r.events[0]
    assert first.text.startswith("[[S:deepseek/basic]]") and first.extra["turn_meta"] == '{"cache":"warm"}'
    assert s.first_prompt == first.text
    assert [e.text for e in r.events if e.kind == "thinking"] == [
        "Start by running the tests to see what fails."
    ]
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("exec_shell", True), ("read_file", False), ("edit_file", False), ("exec_shell", False),
        ("write_file", False), ("apply_patch", False), ("code_execution", False),
    ]  # fmt: skip
    assert tools[0].extra["exit_code"] == 101 and "FAILED" in tools[0].result
    assert tools[2].extra["edit"]["files"][0]["hunks"][0]["lines"] == ["-    x + 2", "+    x * 2"]
    assert tools[4].extra["edit"]["files"][0]["op"] == "create"
    patch = tools[5].extra["edit"]["files"][0]
    assert patch["path"] == "README.md" and patch["numbered"] and "+Doubles." in patch["hunks"][0]["lines"]
    assert tools[6].subtype == "server_tool_use" and tools[6].result == {"stdout": "4\n", "return_code": 0}
    assert [e.raw["type"] for e in r.events if e.kind == "unknown"] == ["citation_marker"]
    assert s.messages == 9  # 2 prompts and 7 assistant messages


def test_usage_is_the_session_total_once() -> None:
    r = _read()[BASIC]
    assert r.session.usage.total_tokens == 48211 and r.session.usage.input_tokens == 0
    assert [(u.key, u.model, u.usage.total_tokens) for u in r.usage] == [
        ("session", "deepseek-v4-pro", 48211)
    ]
    assert r.session.extra["agent_cost"]["session_cost_usd"] == 0.0312 and r.session.extra["mode"] == "agent"


def test_a_fork_links_its_parent_and_marks_what_it_copied() -> None:
    r = _read()[FORK]
    s = r.session
    assert s.forked_from == ParentRef(agent="deepseek-tui", id=BASIC) and s.parent is None
    copied = [e for e in r.events if e.extra.get("copied_from_parent")]
    assert len(copied) == 8 and all((e.source["row"] < 10) == (e in copied) for e in r.events)
    own = [e for e in r.events if not e.extra.get("copied_from_parent")]
    assert own[0].text.startswith("[[S:deepseek/fork]]") and own[-1].tool == "edit_file"
    assert s.ending == "interrupted"  # its last call has no result


def test_odd_documents(tmp_path: Path) -> None:
    doc = json.loads((ROOT / f"{BASIC}.json").read_text())
    doc["messages"][2:2] = [7, {"role": "tool", "content": []}, {"role": "user", "content": "text"}]
    (tmp_path / "odd.json").write_text(json.dumps(doc))
    (tmp_path / "null.json").write_text("null")
    read = _read(tmp_path)
    odd = read[BASIC]
    assert odd.session.accounting.balanced() and odd.session.accounting.lines == len(doc["messages"])
    assert len([e for e in odd.events if e.kind == "unknown"]) == 4
    assert read["null"].events[0].kind == "unknown" and read["null"].session.accounting.lines == 1


def test_roots_and_resume(tmp_path: Path) -> None:
    adapter = DeepSeekTuiAdapter()
    assert adapter.default_roots({}, tmp_path) == [
        tmp_path / ".deepseek" / "sessions",
        tmp_path / ".codewhale" / "sessions",
    ]
    moved = adapter.default_roots({"DEEPSEEK_HOME": str(tmp_path / "ds")}, tmp_path)
    assert moved[0] == tmp_path / "ds" / "sessions" and len(moved) == 3
    cmd = adapter.resume(Session(agent="deepseek-tui", id=BASIC, cwd="/w"))
    assert cmd is not None and (cmd.argv, cmd.cwd) == (["deepseek", f"--resume={BASIC}"], "/w")


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"deepseek-tui={ROOT}",
    ]
    assert main([*base, "list", "--json"]) == 0
    assert {s["id"] for s in json.loads(capsys.readouterr().out)["sessions"]} == {BASIC, FORK, TORN}
    assert main([*base, "search", "CHANGES.md", "--json"]) == 0
    assert BASIC in {h["session"]["id"] for h in json.loads(capsys.readouterr().out)["hits"]}
    assert main([*base, "show", BASIC, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert any(e.get("tool") == "exec_shell" and e.get("is_error") for e in shown["events"])
