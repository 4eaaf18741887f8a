"""GitHub Copilot CLI adapter: facts checked by eye on the real 1.0.102 recordings and the
peer fixtures (1.0.11, 1.0.77) and the synthetic 0.0.420-shaped file in tests/corpus/."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.copilot_cli.adapter import CopilotCliAdapter
from agtaild.adapters.copilot_cli.values import shutdown_metrics
from agtaild.model import Session, Usage
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = "real/copilot-1.0.102/session-state"
BASIC = "7f6ae62c-987b-427b-a0b3-4b3bad09410e"
MULTI = "56018dd1-6f6c-4f55-b251-d71758460850"
SUB = "c1da4415-a1ed-431a-9b28-3fa187b7f5bc"
FIXTURES = "copilot-cli/agent-sessions/session-state"
SYNTH = "copilot-cli/synthetic-agtail/.copilot/session-state"
DEMO_APP = "/tmp/rt/copilot/home/src/demo-app"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> CopilotCliAdapter:
    return CopilotCliAdapter()


def read_all(adapter: CopilotCliAdapter, root: Path) -> dict[str, object]:
    return {u.hints["id"]: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def last_shutdown_usage(path: Path) -> Usage:
    """The agent's own totals: the last session.shutdown's modelMetrics, summed over models."""
    total = Usage()
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["type"] == "session.shutdown":
            total = Usage()
            for _, usage in shutdown_metrics(obj["data"]).values():
                total.add(usage)
    return total.fix_total()


def test_discovers_both_layouts_and_copilot_home(adapter: CopilotCliAdapter, corpus: Path, tmp_path: Path) -> None:
    assert {u.hints["id"] for u in adapter.discover(corpus / REAL)} == {BASIC, MULTI, SUB}
    home = tmp_path / "cp"
    shutil.copytree(corpus / REAL, home / "session-state")
    shutil.copy(corpus / REAL / BASIC / "events.jsonl", home / "session-state" / "flat-id.jsonl")
    units = list(adapter.discover(home))  # the COPILOT_HOME folder works as a root too
    assert sorted(u.hints["id"] for u in units) == sorted([BASIC, MULTI, SUB, "flat-id"])
    assert adapter.default_roots({"COPILOT_HOME": str(home)}, tmp_path) == [home / "session-state"]
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".copilot" / "session-state"]
    basic = next(u for u in units if u.hints["id"] == BASIC)
    assert [Path(f).name for f in basic.files] == ["events.jsonl", "workspace.yaml"]
    (home / "session-state" / BASIC / "inuse.123.lock").write_text("1")
    names = [Path(f).name for f in adapter.native_files(basic)]
    assert "workspace.yaml" in names and "tracking.json" in names and "inuse.123.lock" not in names


def test_basic_session(adapter: CopilotCliAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[BASIC]
    s: Session = res.session  # type: ignore[attr-defined]
    assert s.id == BASIC and s.title == "Create hello.py, run it, add a Japanese greeting. [[S:copilot/basic]]"
    assert (s.cwd, s.project, s.git_branch, s.models, s.version) == (DEMO_APP, "demo-app", "main", ["mock-model"], "1.0.102")
    assert s.started == "2026-11-30T16:09:31.559Z" and s.ending is None
    events = res.events  # type: ignore[attr-defined]
    assert [(e.kind, e.role) for e in events][:5] == [
        ("text", "user"), ("system", "system"), ("thinking", "assistant"), ("text", "assistant"), ("tool_use", "assistant")
    ]
    tools = [e for e in events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["bash", "create", "view", "edit", "bash", "view", "bash"]
    assert tools[0].input == {"command": "ls -la && git status --short", "description": "List project files"}
    assert "hello.py" not in (tools[0].result or "") and tools[4].result.startswith("Hello, world!")
    missing, failing = tools[5], tools[6]
    assert missing.is_error and missing.result == "Path does not exist"
    assert failing.is_error and failing.extra["exit_code"] == 3 and "boom" in failing.result
    assert [t.is_error for t in tools[:5]] == [False] * 5
    assert events[-1].kind == "text" and "こんにちは" in events[-1].text
    assert s.accounting.balanced() and s.accounting.bad == 0 and s.accounting.merged == 14


def test_usage_equals_the_shutdown_totals(adapter: CopilotCliAdapter, corpus: Path) -> None:
    for sid in (BASIC, MULTI, SUB):
        res = read_all(adapter, corpus / REAL)[sid]
        expected = last_shutdown_usage(corpus / REAL / sid / "events.jsonl")
        got = Usage()
        for rec in res.usage:  # type: ignore[attr-defined]
            got.add(rec.usage)
        assert got.fix_total() == expected, sid
        assert res.session.usage == expected, sid  # type: ignore[attr-defined]
    # 1.0.102 input counts include the cache: 1234 in, 800 of it cached → 434 fresh
    basic = read_all(adapter, corpus / REAL)[BASIC]
    first = basic.usage[0].usage  # type: ignore[attr-defined]
    assert (first.input_tokens, first.cache_read_tokens, first.output_tokens, first.reasoning_tokens) == (434, 800, 56, 12)


def test_usage_from_shutdown_only_builds(adapter: CopilotCliAdapter, corpus: Path) -> None:
    synth = read_all(adapter, corpus / SYNTH)["c4d5e6f7-0819-4a2b-9c3d-4e5f60718293"]
    assert synth.session.usage.input_tokens == 18230 - 16384  # type: ignore[attr-defined]
    assert synth.session.usage.cache_read_tokens == 16384 and synth.session.models == ["claude-sonnet-4.5"]  # type: ignore[attr-defined]
    old = read_all(adapter, corpus / FIXTURES)
    assert old["copilot_stage0_small"].session.usage.total_tokens == 115  # type: ignore[attr-defined]
    assert old["aaaabbbb-1111-2222-3333-ccccddddeeee"].session.usage.is_zero()  # type: ignore[attr-defined]


def test_cumulative_shutdowns_replace_and_a_drop_starts_a_segment(
    adapter: CopilotCliAdapter, tmp_path: Path
) -> None:
    def shutdown(count: int, tokens: int) -> str:
        metrics = {"m": {"requests": {"count": count}, "usage": {"inputTokens": tokens, "outputTokens": 1}}}
        return json.dumps({"type": "session.shutdown", "data": {"modelMetrics": metrics}, "id": str(count)})

    dst = tmp_path / "s" / "events.jsonl"
    dst.parent.mkdir()
    dst.write_text("\n".join([shutdown(1, 10), shutdown(3, 30), shutdown(1, 5)]) + "\n")
    unit = next(iter(adapter.discover(tmp_path)))
    s = adapter.read(unit, None, now=LATER).session
    assert (s.usage.input_tokens, s.usage.output_tokens) == (35, 2)


def test_multi_turn_resume_appends(adapter: CopilotCliAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[MULTI]
    s = res.session  # type: ignore[attr-defined]
    users = [e.text for e in res.events if e.kind == "text" and e.role == "user"]  # type: ignore[attr-defined]
    assert [u.rsplit(" ", 1)[-1] for u in users] == ["[[S:copilot/mt1]]", "[[S:copilot/mt2]]", "[[S:copilot/mt3]]"]
    assert [e.subtype for e in res.events if e.kind == "system"].count("session.resume") == 2  # type: ignore[attr-defined]
    assert s.extra["shutdowns"] == 3 and s.title.startswith("README を書いてください")
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["copilot", f"--resume={MULTI}"] and cmd.cwd == DEMO_APP


def test_inline_subagent_is_a_sidechain_of_the_task_call(adapter: CopilotCliAdapter, corpus: Path) -> None:
    events = read_all(adapter, corpus / REAL)[SUB].events  # type: ignore[attr-defined]
    task = next(e for e in events if e.tool == "task")
    assert task.result == "hello.py has 6 lines." and not task.sidechain
    side = [e for e in events if e.sidechain]
    assert len(side) == 7 and all(e.extra["parent_tool_use_id"] == task.tool_use_id for e in side)
    inner = next(e for e in side if e.kind == "tool_use")
    assert inner.input["command"] == "wc -l hello.py" and inner.result.startswith("6 hello.py")
    assert len({e.extra["agent_id"] for e in side}) == 1 and side[0].extra["agent_id"].startswith("9e572d7e")
    started = next(e for e in events if e.subtype == "subagent.started")
    assert started.tool_use_id == task.tool_use_id


def test_fixture_catalogue_errors_hooks_abort(adapter: CopilotCliAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / FIXTURES)["copilot_stage0_small"]
    sub = {e.subtype for e in res.events}  # type: ignore[attr-defined]
    assert {"session.error", "hook.start", "abort", "session.truncation", "system.notification"} <= sub
    err = next(e for e in res.events if e.subtype == "session.error")  # type: ignore[attr-defined]
    assert err.is_error and err.text == "Example model error"
    shell = next(e for e in res.events if e.tool == "shell")  # type: ignore[attr-defined]
    assert shell.input == {"command": "ls"} and shell.result == "a.txt\nb.txt\n"  # arguments were a JSON string
    assert res.session.accounting.balanced()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("extra_line", "ending"),
    [
        ({"type": "abort", "data": {"reason": "user_abort"}}, "interrupted"),
        ({"type": "session.error", "data": {"errorType": "query", "message": "400", "statusCode": 400}}, "error"),
    ],
)
def test_endings(adapter: CopilotCliAdapter, corpus: Path, tmp_path: Path, extra_line: dict, ending: str) -> None:
    src = (corpus / REAL / MULTI / "events.jsonl").read_text(encoding="utf-8")
    dst = tmp_path / "x" / "events.jsonl"
    dst.parent.mkdir()
    dst.write_text(src + json.dumps(extra_line) + "\n", encoding="utf-8")
    unit = next(iter(adapter.discover(tmp_path)))
    assert adapter.read(unit, None, now=LATER).session.ending == ending


def test_killed_during_a_tool_is_interrupted(adapter: CopilotCliAdapter, corpus: Path, tmp_path: Path) -> None:
    lines = (corpus / REAL / BASIC / "events.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if b'"tool.execution_start"' in ln) + 1
    dst = tmp_path / "x" / "events.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(b"".join(lines[:cut]))
    unit = next(iter(adapter.discover(tmp_path)))
    assert adapter.read(unit, None, now=LATER).session.ending == "interrupted"
    assert adapter.read(unit, None, now=os.stat(dst).st_mtime + 0.5).session.ending is None


@pytest.mark.parametrize("rel", [f"{REAL}/{BASIC}", f"{REAL}/{MULTI}", f"{REAL}/{SUB}", f"{FIXTURES}/copilot_stage0_small"])
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: CopilotCliAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel / "events.jsonl"
    dst = tmp_path / "s" / "events.jsonl"
    unit = Unit(agent=adapter.id, path=str(dst), files=[str(dst)], root=str(tmp_path), hints={"id": "s"})
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    once = read_once(adapter, unit, now=os.stat(dst).st_mtime + (100 if settled else 0.5))
    assert grown.snapshot() == once.snapshot()


def test_bad_lines_are_counted_and_ids_are_checked(adapter: CopilotCliAdapter, corpus: Path, tmp_path: Path) -> None:
    lines = (corpus / REAL / BASIC / "events.jsonl").read_bytes().splitlines(keepends=True)
    dst = tmp_path / "x" / "events.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(b"".join([*lines[:3], b"{nope\n", b"[1,2]\n", *lines[3:]]))
    s = adapter.read(next(iter(adapter.discover(tmp_path))), None, now=LATER).session
    assert s.bad_lines == 1 and s.accounting.lines == len(lines) + 2 and s.accounting.balanced()
    assert adapter.resume(Session(agent=adapter.id, id="--help")) is None
    assert adapter.resume(Session(agent=adapter.id, id="a b")) is None
