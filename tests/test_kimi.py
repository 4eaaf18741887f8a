"""Kimi adapter: Kimi CLI 1.51.0 real recordings and the Kimi Code (wire 1.4) peer fixtures."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.kimi.adapter import KimiAdapter
from agtaild.adapters.kimi.code import code_usage
from agtaild.adapters.kimi.wire import kimi_usage
from agtaild.model import Session, Usage
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = "real/kimi-1.51.0/sessions"
BUCKET = "9a7947a2fa46d9375f2653d098a36f7a"  # md5("/tmp/rt/kimi/home/src/demo-app")
BASIC = "d6cbef0f-4972-4a22-9a3e-a4362f27af1d"
MULTI = "f169b8a7-3520-48dd-931c-2182626a2991"
SUB = "388a4c18-ae42-4c44-b234-3013896caa89"
CHILD = "a42a12b30"
CODE = "kimi/agent-sessions/sessions"
CODE_MAIN = "1bcbe023-4f7e-4971-9dc9-43b8756045b0"
DEMO_APP = "/tmp/rt/kimi/home/src/demo-app"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> KimiAdapter:
    return KimiAdapter()


def read_all(adapter: KimiAdapter, root: Path) -> dict[str, object]:
    return {u.hints["id"]: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def wire_usage(path: Path, *, nested: bool = False) -> Usage:
    """What Kimi recorded: the sum of every StatusUpdate.token_usage (usage.record for Kimi Code)."""
    total = Usage()
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        msg = obj.get("message") or {}
        if msg.get("type") == "StatusUpdate":
            total.add(kimi_usage(msg["payload"]["token_usage"]) or Usage())
        if obj.get("type") == "usage.record":
            total.add(code_usage(obj["usage"]) or Usage())
    return total.fix_total()


def test_discovery_and_roots(adapter: KimiAdapter, corpus: Path, tmp_path: Path) -> None:
    assert set(read_all(adapter, corpus / REAL)) == {BASIC, MULTI, SUB, CHILD}
    share = tmp_path / "kimi"
    shutil.copytree(corpus / "real/kimi-1.51.0", share)
    assert len(list(adapter.discover(share))) == 4  # the share dir itself works as a root
    assert adapter.default_roots({"KIMI_SHARE_DIR": str(share)}, tmp_path) == [
        share / "sessions",
        tmp_path / ".kimi-code" / "sessions",
    ]


def test_basic_session(adapter: KimiAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[BASIC]
    s: Session = res.session  # type: ignore[attr-defined]
    assert s.cwd == DEMO_APP and s.project == "demo-app"  # from kimi.json by md5 of the work dir
    assert s.title == "Create hello.py, run it, add a Japanese greeting.…"  # state.json custom_title
    assert s.first_prompt == "Create hello.py, run it, add a Japanese greeting. [[S:kimi/basic]]"
    assert s.started == "2026-11-30T16:06:15.233Z" and s.ending is None
    events = res.events  # type: ignore[attr-defined]
    assert [e.kind for e in events][:4] == ["text", "thinking", "text", "tool_use"]
    tools = [e for e in events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == [
        "Shell", "WriteFile", "ReadFile", "StrReplaceFile", "Shell", "ReadFile", "Shell", "SetTodoList",
    ]
    assert tools[0].input == {"command": "ls -la && git status --short"}
    assert tools[4].result == "Hello, world! こんにちは、worldさん\n" and not tools[4].is_error
    assert tools[5].is_error and tools[5].result.endswith("does not exist.")
    assert tools[6].is_error and tools[6].result == "boom\n" and tools[6].extra["message"] == "Command failed with exit code: 3."
    assert s.extra["todos"][0]["title"] == "Add tests"
    assert s.accounting.balanced() and s.accounting.merged == 8


def test_usage_equals_the_recorded_steps(adapter: KimiAdapter, corpus: Path) -> None:
    sessions = read_all(adapter, corpus / REAL)
    for sid, path in [
        (BASIC, corpus / REAL / BUCKET / BASIC / "wire.jsonl"),
        (MULTI, corpus / REAL / BUCKET / MULTI / "wire.jsonl"),
        (CHILD, corpus / REAL / BUCKET / SUB / "subagents" / CHILD / "wire.jsonl"),
    ]:
        res = sessions[sid]
        expected = wire_usage(path)
        assert res.session.usage == expected, sid  # type: ignore[attr-defined]
        total = Usage()
        for rec in res.usage:  # type: ignore[attr-defined]
            total.add(rec.usage)
        assert total.fix_total() == expected
    # the parent does not count its subagent's mirrored steps: 2 own steps
    assert sessions[SUB].session.usage.input_tokens == 2 * 434  # type: ignore[attr-defined]


def test_subagent_is_a_child_of_the_agent_call(adapter: KimiAdapter, corpus: Path) -> None:
    sessions = read_all(adapter, corpus / REAL)
    call = next(e for e in sessions[SUB].events if e.tool == "Agent")  # type: ignore[attr-defined]
    assert call.input["subagent_type"] == "coder" and call.result.startswith("agent_id: a42a12b30")
    child = sessions[CHILD].session  # type: ignore[attr-defined]
    assert child.parent is not None and (child.parent.id, child.parent.tool_use_id) == (SUB, call.tool_use_id)
    assert child.title == "Count lines in hello.py" and child.extra["subagent_type"] == "coder"
    assert child.cwd == DEMO_APP and adapter.resume(child) is None
    assert [e.tool for e in sessions[CHILD].events if e.kind == "tool_use"] == ["Shell"]  # type: ignore[attr-defined]


def test_multi_turn_and_resume(adapter: KimiAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[MULTI]
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]  # type: ignore[attr-defined]
    assert [p.rsplit(" ", 1)[-1] for p in prompts] == ["[[S:kimi/mt1]]", "[[S:kimi/mt2]]", "[[S:kimi/mt3]]"]
    cmd = adapter.resume(res.session)  # type: ignore[attr-defined]
    assert cmd is not None and cmd.argv == ["kimi", "--session", MULTI] and cmd.cwd == DEMO_APP
    assert adapter.resume(Session(agent="kimi", id="--yolo")) is None


@pytest.mark.parametrize(
    ("cut_marker", "keep_marker", "ending"),
    [
        ('"ToolCall"', True, "interrupted"),  # SIGKILL during a tool: the call has no result
        ('"StepBegin"', True, "interrupted"),  # turn never ended
    ],
)
def test_killed_endings(
    adapter: KimiAdapter, corpus: Path, tmp_path: Path, cut_marker: str, keep_marker: bool, ending: str
) -> None:
    lines = (corpus / REAL / BUCKET / BASIC / "wire.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if cut_marker.encode() in ln) + 1
    dst = tmp_path / "sessions" / BUCKET / "x" / "wire.jsonl"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"".join(lines[:cut]))
    unit = next(iter(adapter.discover(tmp_path / "sessions")))
    assert adapter.read(unit, None, now=LATER).session.ending == ending
    assert adapter.read(unit, None, now=os.stat(dst).st_mtime + 0.5).session.ending is None


def test_step_interrupted_ending(adapter: KimiAdapter, corpus: Path, tmp_path: Path) -> None:
    src = (corpus / REAL / BUCKET / MULTI / "wire.jsonl").read_text()
    extra = [
        {"timestamp": 1796054790.0, "message": {"type": "TurnBegin", "payload": {"user_input": "again"}}},
        {"timestamp": 1796054790.1, "message": {"type": "StepBegin", "payload": {"n": 1}}},
        {"timestamp": 1796054790.2, "message": {"type": "ContentPart", "payload": {"type": "text", "text": "This is a very long"}}},
        {"timestamp": 1796054790.3, "message": {"type": "ContentPart", "payload": {"type": "text", "text": " streamed ans"}}},
        {"timestamp": 1796054790.4, "message": {"type": "StepInterrupted", "payload": {}}},
        {"timestamp": 1796054790.5, "message": {"type": "TurnEnd", "payload": {}}},
    ]
    dst = tmp_path / "sessions" / BUCKET / "x" / "wire.jsonl"
    dst.parent.mkdir(parents=True)
    dst.write_text(src + "".join(json.dumps(o) + "\n" for o in extra))
    res = adapter.read(next(iter(adapter.discover(tmp_path / "sessions"))), None, now=LATER)
    assert res.session.ending == "interrupted"
    assert res.events[-2].text == "This is a very long streamed ans"  # streamed parts joined
    assert res.session.accounting.balanced()


def test_kimi_code_sessions(adapter: KimiAdapter, corpus: Path) -> None:
    sessions = read_all(adapter, corpus / CODE)
    main = sessions[CODE_MAIN]
    s = main.session  # type: ignore[attr-defined]
    assert s.title == "hi" and s.cwd == "/private/tmp/as-agent-lab/kimi/project"
    assert s.models == ["moonshot-ai/kimi-k2.7-code"] and s.compactions == 1
    wire = corpus / CODE / "wd_project_ac3bb318f98e" / f"session_{CODE_MAIN}" / "agents" / "main" / "wire.jsonl"
    assert s.usage == wire_usage(wire)
    child = sessions[f"{CODE_MAIN}-agent-0"].session  # type: ignore[attr-defined]
    assert child.parent is not None and child.parent.id == CODE_MAIN and not child.resumable
    assert adapter.resume(s) is None  # Kimi Code's resume flag is unverified
    other = sessions["9eb1bf57-c1af-48a5-b658-0e8d9fe794f5"].events  # type: ignore[attr-defined]
    assert [e.subtype for e in other if e.kind == "system"][:2] == ["turn.cancel", "turn.cancel"]
    assert any(e.subtype == "steer" and e.text == "stop" for e in other)


@pytest.mark.parametrize(
    "rel",
    [
        f"{REAL}/{BUCKET}/{BASIC}/wire.jsonl",
        f"{REAL}/{BUCKET}/{SUB}/wire.jsonl",
        f"{CODE}/wd_project_ac3bb318f98e/session_{CODE_MAIN}/agents/main/wire.jsonl",
    ],
)
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: KimiAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel
    dst = tmp_path / "b" / "s" / "wire.jsonl"
    hints = {"id": "s", "kimi_code": True, "agent_id": "main", "session": "s"} if "agents" in rel else {"id": "s"}
    unit = Unit(agent="kimi", path=str(dst), files=[str(dst)], root=str(tmp_path), hints=hints)
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    once = read_once(adapter, unit, now=os.stat(dst).st_mtime + (100 if settled else 0.5))
    assert grown.snapshot() == once.snapshot()
