"""Factory Droid adapter: facts checked by eye on the real 0.225.2 recordings and the peer
fixture (0.81.0) in tests/corpus/."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.droid.adapter import DroidAdapter, settings_usage
from agtaild.model import Session
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = "real/droid-0.225.2/sessions"
SLUG = "-tmp-rt-droid-home-src-demo-app"
BASIC = "05c715e6-0b1b-4fba-8ecd-5bd59cda720d"
MULTI = "38aa7ab3-a4ce-4dde-8e3f-fc59ffa2425b"
SUB = "f28363a7-d66a-40de-a013-f0414e61aa54"
DEMO_APP = "/tmp/rt/droid/home/src/demo-app"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> DroidAdapter:
    return DroidAdapter()


def read_all(adapter: DroidAdapter, root: Path) -> dict[str, object]:
    return {u.hints["id"]: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def test_discovery_sidecars_and_roots(adapter: DroidAdapter, corpus: Path, tmp_path: Path) -> None:
    units = {u.hints["id"]: u for u in adapter.discover(corpus / REAL)}
    assert set(units) == {BASIC, MULTI, SUB}
    assert [Path(f).name for f in units[BASIC].files] == [f"{BASIC}.jsonl", f"{BASIC}.settings.json"]
    factory = tmp_path / ".factory"
    shutil.copytree(corpus / "real/droid-0.225.2", factory)
    assert {u.hints["id"] for u in adapter.discover(factory)} == {BASIC, MULTI, SUB}  # ~/.factory as a root
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".factory" / "sessions"]


def test_basic_session(adapter: DroidAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[BASIC]
    s: Session = res.session  # type: ignore[attr-defined]
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:droid/basic]]"
    assert (s.cwd, s.project, s.models, s.ending) == (DEMO_APP, "demo-app", ["custom:mock-model"], None)
    assert s.programmatic and s.origin == "exec"  # tags: [{"name": "exec"}]
    events = res.events  # type: ignore[attr-defined]
    assert [e.kind for e in events][:5] == ["system", "text", "thinking", "text", "tool_use"]
    assert events[0].subtype == "context" and "<system-reminder>" in events[0].text
    tools = [e for e in events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["Execute", "Create", "Read", "Edit", "Execute", "Read", "Execute"]
    assert tools[4].result.startswith("Hello, world! こんにちは") and tools[4].is_error is False
    assert tools[5].is_error and "ENOENT" in tools[5].result
    assert tools[6].is_error and tools[6].result.startswith("Error: Command failed (exit code: 3)")
    assert s.accounting.balanced() and s.accounting.merged == 7 and s.accounting.lines == 19


def test_usage_equals_the_settings_totals(adapter: DroidAdapter, corpus: Path) -> None:
    for sid in (BASIC, MULTI, SUB):
        res = read_all(adapter, corpus / REAL)[sid]
        settings = json.loads((corpus / REAL / SLUG / f"{sid}.settings.json").read_text())
        expected = settings_usage(settings["tokenUsage"])
        assert [r.usage for r in res.usage] == [expected]  # type: ignore[attr-defined]
        assert res.session.usage == expected  # type: ignore[attr-defined]
        assert expected is not None and expected.input_tokens == settings["tokenUsage"]["inputTokens"]


def test_multi_turn(adapter: DroidAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[MULTI]
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]  # type: ignore[attr-defined]
    assert [p.rsplit(" ", 1)[-1] for p in prompts] == ["[[S:droid/mt1]]", "[[S:droid/mt2]]", "[[S:droid/mt3]]"]
    cmd = adapter.resume(res.session)  # type: ignore[attr-defined]
    assert cmd is not None and cmd.argv == ["droid", "--resume", MULTI] and cmd.cwd == DEMO_APP
    assert adapter.resume(Session(agent="droid", id="-x")) is None


def test_task_subagent_links_child_to_parent_call(adapter: DroidAdapter, corpus: Path, tmp_path: Path) -> None:
    factory = tmp_path / ".factory"
    shutil.copytree(corpus / "real/droid-0.225.2", factory)
    parent = read_all(adapter, factory / "sessions")[SUB]
    task = next(e for e in parent.events if e.tool == "Task")  # type: ignore[attr-defined]
    assert task.is_error and "Could not reach the daemon" in task.result  # the offline run's failure
    # The recorded child never appeared (no daemon offline); write one where Droid would.
    child_id = "833758c6-9907-4a13-9ca1-6d6cfe3ab282"
    start = {"type": "session_start", "id": child_id, "title": "Count lines", "version": 2, "cwd": DEMO_APP}
    (factory / "sessions" / SLUG / f"{child_id}.jsonl").write_text(json.dumps(start) + "\n")
    child = read_all(adapter, factory / "sessions")[child_id].session  # type: ignore[attr-defined]
    assert child.parent is not None and (child.parent.id, child.parent.tool_use_id) == (SUB, task.tool_use_id)
    assert child.extra["subagent_type"] == "worker"


def test_fork_and_old_fixture(adapter: DroidAdapter, corpus: Path, tmp_path: Path) -> None:
    old = read_all(adapter, corpus / "droid/agent-sessions/sessions")["droid_s1"]
    tool = next(e for e in old.events if e.kind == "tool_use")  # type: ignore[attr-defined]
    assert tool.is_error and "No such file" in tool.result  # no is_error flag: the "Error:" prefix
    assert old.session.ending is None  # type: ignore[attr-defined]  # format 1 writes no turn outcomes
    lines = (corpus / REAL / SLUG / f"{MULTI}.jsonl").read_text().splitlines()
    head = json.loads(lines[0]) | {"id": "fork-1", "parent": MULTI, "forkedAtMessageId": "x"}
    dst = tmp_path / "s" / "fork-1.jsonl"
    dst.parent.mkdir()
    dst.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    s = read_all(adapter, tmp_path / "s")["fork-1"].session  # type: ignore[attr-defined]
    assert s.forked_from is not None and s.forked_from.id == MULTI and s.parent is None


@pytest.mark.parametrize(
    ("tail", "ending"),
    [
        ('{"type":"agent_turn_outcome","turnId":"t","reason":"model_request_rejected"}', "error"),
        ('{"type":"message","id":"u9","message":{"role":"user","content":[{"type":"text","text":"more"}]}}', "interrupted"),
        ('{"type":"message","id":"a9","message":{"role":"assistant","content":[{"type":"tool_use","id":"c9","name":"Execute","input":{}}]}}', "interrupted"),
    ],
)
def test_endings(adapter: DroidAdapter, corpus: Path, tmp_path: Path, tail: str, ending: str) -> None:
    src = (corpus / REAL / SLUG / f"{MULTI}.jsonl").read_text()
    dst = tmp_path / "s" / "x.jsonl"
    dst.parent.mkdir()
    dst.write_text(src + tail + "\n")
    unit = next(iter(adapter.discover(tmp_path / "s")))
    assert adapter.read(unit, None, now=LATER).session.ending == ending
    assert adapter.read(unit, None, now=os.stat(dst).st_mtime + 0.5).session.ending in (None, "error")


@pytest.mark.parametrize("sid", [BASIC, MULTI, SUB])
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: DroidAdapter, corpus: Path, tmp_path: Path, sid: str, settled: bool
) -> None:
    src = corpus / REAL / SLUG / f"{sid}.jsonl"
    dst = tmp_path / SLUG / f"{sid}.jsonl"
    dst.parent.mkdir()
    shutil.copy(corpus / REAL / SLUG / f"{sid}.settings.json", dst.with_name(f"{sid}.settings.json"))
    unit = Unit(agent="droid", path=str(dst), files=[str(dst)], root=str(tmp_path), hints={"id": sid})
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    once = read_once(adapter, unit, now=os.stat(dst).st_mtime + (100 if settled else 0.5))
    assert grown.snapshot() == once.snapshot()


def test_bad_lines_counted(adapter: DroidAdapter, corpus: Path, tmp_path: Path) -> None:
    lines = (corpus / REAL / SLUG / f"{BASIC}.jsonl").read_bytes().splitlines(keepends=True)
    dst = tmp_path / "s" / "x.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(b"".join([*lines[:2], b"not json\n", *lines[2:], b'{"type":"mess']))
    s = adapter.read(next(iter(adapter.discover(tmp_path / "s"))), None, now=LATER).session
    assert s.bad_lines == 2 and s.truncated and s.accounting.balanced() and s.accounting.lines == len(lines) + 2
