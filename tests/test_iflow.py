"""iFlow CLI on hand-made samples of its 0.5.19 history writer (tests/corpus/iflow/handmade)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters.iflow import IflowAdapter
from agtaild.cli import main
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

PROJECTS = Path(__file__).parent / "corpus" / "iflow" / "handmade" / "projects"
SLUG = PROJECTS / "-home-dev-demo-app"
TALK = "session-3f2a9c1e-5b7d-4e8a-9c0f-1a2b3c4d5e6f"  # interactive: duplicated calls, compaction, truncated tail
PRINT = "session-7c1d5e20-93ab-4f61-b2c4-d8e9f0a1b2c3"  # -p: chunked text, usage, a failing read
LATER = 4_000_000_000.0


def _read(root: Path = PROJECTS) -> dict:
    adapter = IflowAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def test_every_line_is_accounted_and_usage_equals_the_lines() -> None:
    read = _read()
    assert sorted(read) == [TALK, PRINT]
    for sid, result in read.items():
        lines = _lines(SLUG / f"{sid}.jsonl")
        acct = result.session.accounting
        assert acct.balanced() and acct.lines == len((SLUG / f"{sid}.jsonl").read_text().splitlines())
        counted = [
            r["message"]["usage"]
            for r in lines
            if r["type"] == "assistant" and any(r["message"]["usage"].values())
        ]
        s = result.session
        assert s.usage.input_tokens == sum(u["input_tokens"] for u in counted)
        assert s.usage.output_tokens == sum(u["output_tokens"] for u in counted)
        assert s.usage.cache_read_tokens == sum(u.get("cache_read_input_tokens", 0) for u in counted)
        assert len(result.usage) == len(counted)
    assert read[PRINT].session.usage.input_tokens == 21640 and read[TALK].session.usage.total_tokens == 0
    assert {u.model for u in read[PRINT].usage} == {"Qwen3-Coder-Plus"}


def test_interactive_session_calls_once_each_with_results_errors_and_edits() -> None:
    r = _read()[TALK]
    s = r.session
    assert s.title == "The tests in demo-app fail; find out why and fix it."
    assert (s.cwd, s.project, s.git_branch, s.version, s.models) == (
        "/home/dev/demo-app",
        "demo-app",
        "main",
        "1.0.0",
        ["glm-4.7"],
    )
    tools = [e for e in r.events if e.kind == "tool_use"]
    # the writer recorded call 1 twice and calls 2 and 3 twice: each is one event
    assert [(t.tool, t.is_error, t.extra.get("exit_code")) for t in tools] == [
        ("run_shell_command", False, 0), ("run_shell_command", True, 1), ("replace", False, None),
        ("task", False, None), ("write_file", False, None),
    ]  # fmt: skip
    assert "expected 5, received 6" in tools[1].result
    replace = tools[2].extra["edit"]["files"][0]
    assert (
        replace["path"] == "/home/dev/demo-app/src/sum.js"
        and "-  return a + b + 1;" in replace["hunks"][0]["lines"]
    )
    assert replace["numbered"] is True  # from the result's fileDiff, the file's own line numbers
    written = tools[4].extra["edit"]["files"][0]
    assert written["path"] == "/home/dev/demo-app/NOTES.md" and "+# Notes" in written["hunks"][0]["lines"]
    assert tools[3].input["subagent_type"] == "general-purpose" and tools[3].result.startswith(
        "Reviewed 3 files"
    )
    assert [e.subtype for e in r.events if e.kind in ("summary", "system")] == ["compact_summary", "meta"]
    assert (
        s.compactions == 1
        and next(e for e in r.events if e.kind == "summary").extra["compression"]["newTokenCount"] == 2240
    )
    prompts = [e.text for e in r.events if e.kind == "text" and e.role == "user"]
    assert len(prompts) == 3 and s.messages == 9
    assert s.truncated and s.bad_lines == 1 and s.ending is None


def test_print_mode_chunks_failing_read_new_file_and_an_unanswered_prompt() -> None:
    r = _read()[PRINT]
    said = [e.text for e in r.events if e.kind == "text" and e.role == "assistant"]
    assert (
        said[0] == "I'll read the README."
        and said[-1] == "README: a tiny library with sum() and range(). CHANGES.md now has one line."
    )
    failing = next(e for e in r.events if e.tool == "read_file" and e.is_error)
    assert failing.result == "File not found: /home/dev/demo-app/CHANGES.md"
    created = next(e for e in r.events if e.tool == "write_file")
    assert created.extra["edit"]["files"][0]["op"] == "create"
    assert r.session.ending == "interrupted"  # the last prompt has no answer and the file is quiet
    adapter = IflowAdapter()
    (unit,) = [u for u in adapter.discover(PROJECTS) if PRINT in u.path]
    mtime = Path(unit.path).stat().st_mtime
    assert adapter.read(unit, None, now=mtime + 10).session.ending is None


def test_resume_and_roots() -> None:
    adapter = IflowAdapter()
    s = _read()[TALK].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["iflow", f"--resume={TALK}"] and cmd.cwd == "/home/dev/demo-app"
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.iflow/projects")]
    assert adapter.default_roots({"IFLOW_HOME": "/x/if"}, Path("/h")) == [Path("/x/if/projects")]


def test_steps_equal_one_read_and_broken_lines(tmp_path: Path) -> None:
    adapter = IflowAdapter()
    src = SLUG / f"{PRINT}.jsonl"
    dst = tmp_path / "projects" / "p" / src.name
    dst.parent.mkdir(parents=True)
    dst.write_bytes(src.read_bytes())
    (unit,) = list(adapter.discover(tmp_path / "projects"))
    stepped = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes(), 2), unit, settled=True)
    once = read_once(adapter, unit, now=dst.stat().st_mtime + 100.0)
    assert stepped.snapshot() == once.snapshot()
    lines = src.read_text().splitlines()
    dst.write_text("\n".join([*lines[:3], '{"type": "assistant", "message":', "[1, 2]", *lines[3:]]) + "\n")
    result = adapter.read(unit, None, now=LATER)
    s = result.session
    assert s.bad_lines == 1 and s.accounting.lines == len(lines) + 2 and s.accounting.balanced()
    assert s.usage.input_tokens == 21640 and [e.raw for e in result.events if e.kind == "unknown"] == [[1, 2]]


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"iflow={PROJECTS}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(row["id"] for row in listed) == sorted([TALK, PRINT]) and {
        row["agent"] for row in listed
    } == {"iflow"}
    assert main([*args, "search", "range.js", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {TALK}
    assert main([*args, "show", TALK]) == 0
    shown = capsys.readouterr().out
    assert "npm test" in shown and "sum.js" in shown and "NOTES.md is written." in shown
