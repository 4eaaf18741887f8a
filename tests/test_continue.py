"""Continue adapter: the real `cn` 1.5.47 recordings and a hand-made IDE-style session
(reasoning, tool message, thinking message, summary, an unfinished call) in tests/corpus."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.continue_dev.adapter import ContinueAdapter
from agtaild.errors import AgtailError
from agtaild.model import Session

REAL = "real/continue-1.5.47"
BASIC = "c57ca217-7723-4f2a-b3f7-0146aca883c5"
SUB = "0616e0d3-211c-4fbf-93f2-0b33d4c3024b"
MULTI = "d62063b0-f8c3-4f8d-8201-b90c4324ec0f"
SYNTH = "continue/synthetic-agtail/.continue"
IDE = "5e55a0aa-0000-4000-8000-00000000c0de"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> ContinueAdapter:
    return ContinueAdapter()


def read(adapter: ContinueAdapter, corpus: Path, sid: str, root: str = REAL):
    units = {Path(u.path).stem: u for u in adapter.discover(corpus / root)}
    return adapter.read(units[sid], None, now=LATER)


def test_discovers_session_documents_not_the_index(adapter: ContinueAdapter, corpus: Path) -> None:
    units = list(adapter.discover(corpus / REAL))
    assert sorted(Path(u.path).stem for u in units) == sorted([BASIC, SUB, MULTI])
    # the sessions folder works as --root as well
    assert len(list(adapter.discover(corpus / REAL / "sessions"))) == 3
    # the index travels with an export, but is no fingerprinted file of the unit
    assert units[0].files == [units[0].path]
    assert adapter.native_files(units[0])[-1].endswith("sessions/sessions.json")
    assert adapter.default_roots({"CONTINUE_GLOBAL_DIR": "/x/cont"}, Path("/h")) == [Path("/x/cont")]
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.continue")]


def test_basic_session_events_results_and_errors(adapter: ContinueAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, BASIC)
    s = r.session
    assert (
        s.id == BASIC and s.title == "Create hello.py, run it, add a Japanese greeting. [[S:continue/basic]]"
    )
    assert s.cwd == "/tmp/rt/continue/home/src/demo-app" and s.project == "demo-app"
    assert s.models == ["mock-model"] and s.messages == 10
    assert s.started == "2026-11-30T16:02:34.310Z"  # the index's dateCreated
    assert [e.kind for e in r.events] == ["text", "text"] + ["tool_use"] * 8 + ["text"]
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["Bash", "Write", "Read", "Edit", "Bash", "Read", "Bash", "Checklist"]
    assert tools[0].input == {"command": "ls -la && git status --short"}
    assert [t.is_error for t in tools] == [False, False, False, False, False, True, True, False]
    assert "File does not exist" in tools[5].result and "exit code 3" in tools[6].result
    assert "こんにちは" in tools[4].result
    assert s.accounting.lines == 10 and s.accounting.balanced() and s.accounting.events == 10
    assert s.ending is None


@pytest.mark.parametrize("sid", [BASIC, SUB, MULTI])
def test_usage_equals_the_session_totals_continue_records(
    adapter: ContinueAdapter, corpus: Path, sid: str
) -> None:
    r = read(adapter, corpus, sid)
    doc = json.loads((corpus / REAL / "sessions" / f"{sid}.json").read_bytes())
    totals = doc["usage"]
    u = r.session.usage
    # Continue's promptTokens include the cached tokens; agtail's input excludes them
    assert u.input_tokens + u.cache_read_tokens + u.cache_write_tokens == totals["promptTokens"]
    assert u.output_tokens == totals["completionTokens"]
    assert len(r.usage) == sum(1 for h in doc["history"] if h["message"]["role"] == "assistant")
    assert r.session.extra["agent_usage"]["totalCost"] == totals["totalCost"]


def test_failed_subagent_call_and_multi_turn(adapter: ContinueAdapter, corpus: Path) -> None:
    sub = read(adapter, corpus, SUB)
    call = next(e for e in sub.events if e.kind == "tool_use")
    assert call.tool == "Subagent" and call.is_error is True and "No active session" in call.result
    assert sub.session.parent is None
    multi = read(adapter, corpus, MULTI)
    prompts = [e.text for e in multi.events if e.kind == "text" and e.role == "user"]
    assert len(prompts) == 3 and prompts[2].endswith("[[S:continue/mt3]]")


def test_ide_session_reasoning_tool_message_summary_and_open_call(
    adapter: ContinueAdapter, corpus: Path
) -> None:
    r = read(adapter, corpus, IDE, SYNTH)
    s = r.session
    assert s.cwd == "/home/dev/src/agtail demo"  # a file:// URI, decoded
    assert s.title == "Fix the flaky parser test" and s.models == ["claude-sonnet-4-5"]
    assert [e.kind for e in r.events] == [
        "text", "thinking", "text", "tool_use", "thinking", "text", "summary", "text", "tool_use",
    ]  # fmt: skip
    assert r.events[1].ts == "2025-11-30T10:53:20.000Z"  # reasoning.startAt
    assert r.events[3].result == "def test_parse(): ..."  # the tool message merged into its call
    assert (s.accounting.events, s.accounting.merged) == (5, 1)
    assert s.compactions == 1 and s.ending == "interrupted" and r.events[-1].result is None
    assert s.usage.cache_write_tokens == 200 and s.usage.input_tokens == 300 + 400
    # a fresh file is not called interrupted yet
    unit = next(adapter.discover(corpus / SYNTH))
    fresh = adapter.read(unit, None, now=os.stat(unit.path).st_mtime + 1)
    assert fresh.session.ending is None


def test_rewritten_document_is_a_reset_and_torn_document_is_bad_not_lost(
    adapter: ContinueAdapter, corpus: Path, tmp_path: Path
) -> None:
    root = tmp_path / ".continue"
    shutil.copytree(corpus / REAL, root)
    path = root / "sessions" / f"{MULTI}.json"
    unit = next(u for u in adapter.discover(root) if u.path == str(path))
    first = adapter.read(unit, None, now=LATER)
    assert first.reset and first.state is None
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    # while it may still be being rewritten: an error, so the index keeps what it stored
    with pytest.raises(AgtailError, match="being rewritten"):
        adapter.read(unit, None, now=os.stat(path).st_mtime + 1)
    # settled and still torn: one bad record, flagged truncated
    torn = adapter.read(unit, None, now=LATER)
    assert torn.reset and torn.session.accounting.bad == 1 and torn.session.truncated
    assert torn.events == []


def test_resume_forks_by_id_and_refuses_option_like_ids(adapter: ContinueAdapter, corpus: Path) -> None:
    s = read(adapter, corpus, BASIC).session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["cn", "--fork", BASIC] and cmd.cwd == s.cwd
    for bad in ("-x", "--help", "a b", ""):
        assert adapter.resume(Session(agent="continue", id=bad)) is None
