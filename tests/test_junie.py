"""Junie on a real IDE-hosted session (tests/corpus/junie/observer, a peer's Apache-2.0 fixture)
and on hand-made lines (tests/corpus/junie/handmade) from the peer catalogues of its kinds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.junie import JunieAdapter
from agtaild.cli import main
from tests.conftest import CORPUS
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = CORPUS / "junie" / "observer" / "sessions"
MADE = CORPUS / "junie" / "handmade" / "sessions"
REAL_ID, MADE_ID = "session-260816-220304-lrfz", "session-261130-101500-hm01"
LATER = 4_000_000_000.0


def _lines(path: Path) -> list[dict]:
    out = []
    for raw in path.read_text().splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def _read(root: Path):
    adapter = JunieAdapter()
    (unit,) = list(adapter.discover(root))
    return adapter.read(unit, None, now=LATER)


def test_the_real_session_steps_collapse_and_usage_equals_its_rows() -> None:
    r = _read(REAL)
    s = r.session
    lines = _lines(REAL / REAL_ID / "events.jsonl")
    assert s.accounting.lines == len(lines) == 219 and s.accounting.balanced() and s.accounting.bad == 0
    assert s.cwd == "/home/marmutapp/parking-game" and s.project == "parking-game"
    assert s.title == "Python Hello World Program Creation and File Management" and s.ending is None
    rows = [row for line in lines if (line.get("event") or {}).get("agentEvent", {}).get("kind") == "LlmResponseMetadataEvent"
            for row in line["event"]["agentEvent"]["modelUsage"]]  # fmt: skip
    assert len(r.usage) == len(rows) == 22
    assert s.usage.input_tokens == sum(x["inputTokens"] for x in rows)
    assert s.usage.output_tokens == sum(x["outputTokens"] for x in rows)
    assert s.usage.cache_read_tokens == sum(x["cacheInputTokens"] for x in rows)
    assert s.usage.cache_write_tokens == sum(x["cacheCreateTokens"] for x in rows)
    assert s.extra["reported_cost_usd"] == pytest.approx(sum(x["cost"] for x in rows))
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("terminal", True), ("file_changes", False), ("terminal", False), ("file_changes", False), ("terminal", False)
    ]  # fmt: skip
    assert "No such file or directory" in tools[0].result and tools[2].result == "Hello World"
    create, modify = tools[1].extra["edit"]["files"][0], tools[3].extra["edit"]["files"][0]
    assert create["op"] == "create" and create["path"] == "hello_world.py"
    assert '+print("hello Junie")' in modify["hunks"][0]["lines"]
    patch = next(e for e in r.events if e.subtype == "patch")
    assert "edit" not in patch.extra  # the FileChanges blocks already hold the edits
    result = [e for e in r.events if e.kind == "text" and e.role == "assistant"]
    assert len(result) == 1 and result[0].text.startswith("### Summary")
    assert [e.kind for e in r.events if e.kind == "thinking"] == ["thinking", "thinking"]


def test_replayed_usage_subagent_choice_failure_and_broken_lines() -> None:
    r = _read(MADE)
    s = r.session
    assert s.cwd == "/home/dev/src/gamma-lib" and s.extra["cwd_from"] == "index.jsonl"  # no directory event
    assert s.title == "Fix the gamma parser"
    assert len(r.usage) == 3  # the usage line written twice counts once
    assert (s.usage.input_tokens, s.usage.cache_read_tokens, s.usage.cache_write_tokens) == (
        1800 + 640 + 3,
        10800,
        9000 + 420,
    )
    assert s.bad_lines == 2 and s.truncated and s.accounting.balanced()
    assert s.ending == "interrupted"  # ends on CancelAgentEvent
    by_tool = {e.tool: e for e in r.events if e.kind == "tool_use"}
    assert by_tool["terminal"].is_error and by_tool["terminal"].extra["status"] == "FAILED"
    search = by_tool["idea/search_in_files_by_text"]
    assert (
        search.sidechain
        and search.extra["subagent"] == "android-qa-agent-1"
        and search.input == {"searchText": "parseGamma"}
    )
    assert (
        by_tool["custom_agent"].result.startswith("The sign is lost")
        and by_tool["custom_agent"].is_error is False
    )
    ask = by_tool["ask_user"]
    assert ask.result == "Add the test" and ask.is_error is False and ask.input["options"][0]["id"] == "Yes"
    edit = by_tool["file_changes"].extra["edit"]["files"][0]
    assert edit["op"] == "update" and edit["path"] == "src/main/kotlin/Gamma.kt"
    failure = next(e for e in r.events if e.subtype == "error")
    assert failure.is_error and failure.extra["error_code"] == "ConnectionFailed"
    prompts = [e.text for e in r.events if e.kind == "text" and e.role == "user"]
    assert prompts == [
        "Run the unit tests and fix the gamma parser",
        "Add the test",
        "Try again and add the regression test",
    ]
    assert [e.raw["kind"] for e in r.events if e.kind == "unknown"] == ["QuotaWarningEvent"]
    assert not any("env" in json.dumps(e.raw or {}) for e in r.events)


def test_reading_in_steps_equals_one_read(tmp_path: Path) -> None:
    adapter = JunieAdapter()
    for root, sid in ((REAL, REAL_ID), (MADE, MADE_ID)):
        src = root / sid / "events.jsonl"
        dst = tmp_path / root.parent.name / sid / "events.jsonl"
        dst.parent.mkdir(parents=True)
        dst.write_bytes(src.read_bytes())
        (unit,) = list(adapter.discover(dst.parent.parent))
        once = read_once(adapter, unit, now=LATER)
        stepped = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes(), 7), unit, settled=True)
        assert stepped.snapshot() == once.snapshot(), sid


def test_resume_roots_and_cli(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter = JunieAdapter()
    s = _read(REAL).session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["junie", f"--session-id={REAL_ID}", "--resume"]
    assert cmd.cwd == "/home/marmutapp/parking-game"
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.junie/sessions")]
    assert adapter.default_roots({"JUNIE_HOME": "/j"}, Path("/h")) == [Path("/j/sessions")]
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"junie={REAL}",
        "--root",
        f"junie={MADE}",
    ]
    assert main([*base, "list", "--json"]) == 0
    assert {row["id"] for row in json.loads(capsys.readouterr().out)["sessions"]} == {REAL_ID, MADE_ID}
    assert main([*base, "search", "gamma", "--json"]) == 0
    assert {h["session"]["id"] for h in json.loads(capsys.readouterr().out)["hits"]} == {MADE_ID}
    assert main([*base, "show", f"junie:{REAL_ID}", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["session"]["title"].startswith("Python Hello World") and any(
        e["tool"] == "terminal" for e in shown["events"]
    )
    shutil.copytree(MADE, isolated_home / ".junie" / "sessions")
    assert (
        main(["--no-daemon", "--data-dir", str(tmp_path / "d2"), "list", "--agent", "junie", "--json"]) == 0
    )
    assert [row["id"] for row in json.loads(capsys.readouterr().out)["sessions"]] == [MADE_ID]
