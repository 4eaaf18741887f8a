"""Qoder CLI on hand-made samples of its 1.1.52 transcript writer (tests/corpus/qoder/handmade)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.qoder import QoderAdapter
from agtaild.cli import main
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

PROJECTS = Path(__file__).parent / "corpus" / "qoder" / "handmade" / "projects"
SLUG = PROJECTS / "-home-dev-demo-app"
MAIN = "8e41c2d7-3a5f-4b96-a0d1-7c2e9f4b6a13"
CHILD = "agent-a3f9c1e27b4d05816"
LATER = 4_000_000_000.0


def _read(root: Path = PROJECTS) -> dict:
    adapter = QoderAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_records_events_and_accounting() -> None:
    read = _read()
    assert sorted(read) == [MAIN, CHILD]
    r = read[MAIN]
    s = r.session
    assert (s.agent, s.title, s.cwd, s.version, s.origin, s.git_branch) == (
        "qoder", "Fix failing sum test", "/home/dev/demo-app", "1.1.52", "cli", "main"
    )  # fmt: skip
    lines = (SLUG / f"{MAIN}.jsonl").read_text().splitlines()
    assert s.accounting.lines == len(lines) and s.accounting.balanced() and s.bad_lines == 1
    # runtime-config, workspace-directories, token-stats, ai-title, active-leaf, last-prompt
    assert s.accounting.metadata == 6 and not [e for e in r.events if e.kind == "unknown"]
    assert s.extra["model_setting"] == "auto"
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("Bash", True),
        ("Edit", False),
        ("Agent", False),
        ("Write", False),
    ]
    assert tools[0].result.startswith("Exit code 1")
    hunk = tools[1].extra["edit"]["files"][0]["hunks"][0]
    assert hunk["lines"][1:3] == ["-  return a + b + 1;", "+  return a + b;"] and hunk["old_start"] == 1
    assert [e.text for e in r.events if e.kind == "thinking"] == ["Run the tests first to see the failure."]
    assert s.compactions == 1 and [e.subtype for e in r.events if e.kind in ("system", "summary")] == [
        "compact_boundary",
        "compact_summary",
    ]


def test_usage_credits_and_models() -> None:
    read = _read()
    s = read[MAIN].session
    assert s.models == ["auto", "deepseek-v4"]
    # Qoder's own model: token counts zeroed in the file, credits instead; the custom model keeps them
    assert (s.usage.input_tokens, s.usage.output_tokens, s.usage.cache_read_tokens) == (
        2310 + 2460,
        96 + 12,
        1800 + 2048,
    )
    assert s.extra["credits"] == pytest.approx(0.42 + 0.35 + 0.2 + 0.18)  # one per response, not per line
    assert len(read[MAIN].usage) == 6
    assert read[CHILD].session.extra["credits"] == pytest.approx(0.09)


def test_subagent_is_a_child_and_resume() -> None:
    read = _read()
    child = read[CHILD].session
    assert child.parent is not None and (child.parent.agent, child.parent.id, child.parent.tool_use_id) == (
        "qoder",
        MAIN,
        "toolu_qd_0003",
    )
    assert child.extra["agent_type"] == "general-purpose" and child.first_prompt.startswith("Read every file")
    adapter = QoderAdapter()
    cmd = adapter.resume(read[MAIN].session)
    assert (
        cmd is not None and cmd.argv == ["qodercli", f"--resume={MAIN}"] and cmd.cwd == "/home/dev/demo-app"
    )
    assert adapter.resume(child) is None
    start = adapter.start_command("fix it", "/w")
    assert start is not None and start.argv == ["qodercli", "--", "fix it"] and start.cwd == "/w"
    assert adapter.start_command("--yolo", "/w") is None  # qodercli reads options even after --


def test_roots() -> None:
    adapter = QoderAdapter()
    home = Path("/h")
    assert adapter.default_roots({}, home) == [home / ".qoder/projects", home / ".qoderwork/projects"]
    assert adapter.default_roots({"QODER_CONFIG_DIR": "/c"}, home) == [Path("/c/projects")]
    assert adapter.default_roots({"QODER_CLI_HOME": "/q", "QODER_CONFIG_DIR_NAME": ".qd"}, home)[0] == Path(
        "/q/.qd/projects"
    )
    assert adapter.default_roots({"GEMINI_CLI_HOME": "/g"}, home)[0] == Path("/g/.qoder/projects")
    assert adapter.plugins_dir_for(PROJECTS) is None


def test_qoderwork_root_marks_its_sessions(tmp_path: Path) -> None:
    shutil.copytree(PROJECTS, tmp_path / ".qoderwork" / "projects")
    read = _read(tmp_path / ".qoderwork" / "projects")
    assert read[MAIN].session.extra["app"] == "QoderWork" and "app" not in _read()[MAIN].session.extra


def test_steps_equal_one_read(tmp_path: Path) -> None:
    adapter = QoderAdapter()
    src = SLUG / f"{MAIN}.jsonl"
    dst = tmp_path / "projects" / "p" / src.name
    dst.parent.mkdir(parents=True)
    dst.write_bytes(src.read_bytes())
    (unit,) = list(adapter.discover(tmp_path / "projects"))
    stepped = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes(), 3), unit, settled=True)
    once = read_once(adapter, unit, now=dst.stat().st_mtime + 100.0)
    assert stepped.snapshot() == once.snapshot()


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"qoder={PROJECTS}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(row["id"] for row in listed) == sorted([MAIN, CHILD]) and {
        row["agent"] for row in listed
    } == {"qoder"}
    assert main([*args, "search", "CHANGES.md", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {MAIN}
    assert main([*args, "show", MAIN]) == 0
    shown = capsys.readouterr().out
    assert "npm test" in shown and "sum.js" in shown and "CHANGES.md lists both fixes." in shown
