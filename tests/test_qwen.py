"""Qwen Code adapter: the real 0.15.10 recordings, the 0.21.x peer fixtures, and the
hand-made error/kill/checkpoint samples in tests/corpus/qwen/synthetic-agtail."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.qwen.adapter import QwenAdapter
from agtaild.model import Session, Usage
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = "real/qwen-0.15.10"
CHATS = f"{REAL}/projects/-tmp-rt-qwen-home-src-demo-app/chats"
BASIC = f"{CHATS}/71f3d6dc-4f49-4116-bbb0-74b6299299e8.jsonl"
SUB = f"{CHATS}/34dff3b8-0c36-4e16-8978-e46af706c7d4.jsonl"
MULTI = f"{CHATS}/c41dc55d-7628-4955-a6f6-27fe28a0cf91.jsonl"
SYNTH = "qwen/synthetic-agtail/.qwen"
ERR = f"{SYNTH}/projects/-home-dev-src-demo-app/chats/aaaaaaaa-1111-4222-8333-444444444444.jsonl"
KILL = f"{SYNTH}/projects/-home-dev-src-demo-app/chats/bbbbbbbb-1111-4222-8333-444444444444.jsonl"
SYSREC = f"{SYNTH}/projects/-home-dev-src-demo-app/chats/dddddddd-1111-4222-8333-444444444444.jsonl"
HOOKS = "qwen/agent-sessions/projects/-tmp-as-qwen-fixture-project/chats/019f0000-0000-7000-8000-000000000001.jsonl"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> QwenAdapter:
    return QwenAdapter()


def read(adapter: QwenAdapter, corpus: Path, rel: str, root: str = REAL):
    units = {u.path: u for u in adapter.discover(corpus / root)}
    return adapter.read(units[str(corpus / rel)], None, now=LATER)


def test_discovers_jsonl_chats_and_old_checkpoints(
    adapter: QwenAdapter, corpus: Path, tmp_path: Path
) -> None:
    assert sorted(u.path for u in adapter.discover(corpus / REAL)) == sorted(
        str(corpus / p) for p in (BASIC, SUB, MULTI)
    )
    # the projects folder itself works as --root too; meta.json and todos/ are not sessions
    assert len(list(adapter.discover(corpus / REAL / "projects"))) == 3
    synth = sorted(Path(u.path).name for u in adapter.discover(corpus / SYNTH))
    assert synth == [
        "aaaaaaaa-1111-4222-8333-444444444444.jsonl",
        "bbbbbbbb-1111-4222-8333-444444444444.jsonl",
        "dddddddd-1111-4222-8333-444444444444.jsonl",
        "session-2025-08-01T10-00-cccccccc.json",
    ]
    archive = tmp_path / "projects" / "-x" / "chats" / "archive"
    archive.mkdir(parents=True)
    shutil.copy(corpus / BASIC, archive / "old.jsonl")
    units = list(adapter.discover(tmp_path))
    assert [u.archived for u in units] == [True]


def test_default_roots_follow_qwen_home_and_runtime_dir(adapter: QwenAdapter, tmp_path: Path) -> None:
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".qwen"]
    env = {"QWEN_HOME": str(tmp_path / "qh"), "QWEN_RUNTIME_DIR": str(tmp_path / "rt")}
    assert adapter.default_roots(env, tmp_path) == [tmp_path / "rt", tmp_path / "qh"]


def test_basic_session_events_in_order_with_results_merged(adapter: QwenAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, BASIC)
    s = r.session
    assert s.id == "71f3d6dc-4f49-4116-bbb0-74b6299299e8"
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:qwen/basic]]"
    assert s.cwd == "/tmp/rt/qwen/home/src/demo-app" and s.project == "demo-app"
    assert s.git_branch == "main" and s.version == "0.15.10" and s.models == ["mock-model"]
    assert (s.started, s.ended) == ("2026-11-30T16:00:43.013Z", "2026-11-30T16:00:45.594Z")
    assert [e.kind for e in r.events] == [
        "text", "thinking", "text", "tool_use", "tool_use", "tool_use", "thinking",
        "tool_use", "tool_use", "tool_use", "tool_use", "tool_use", "text",
    ]  # fmt: skip
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == [
        "run_shell_command", "write_file", "read_file", "edit", "run_shell_command",
        "read_file", "run_shell_command", "todo_write",
    ]  # fmt: skip
    assert all(t.result is not None for t in tools)
    missing = tools[5]
    assert missing.is_error is True and "File not found" in str(missing.result)
    assert missing.extra["errorType"] == "file_not_found"
    # exit code 3 is a "success" for Qwen's shell tool: the code is only in the output
    assert tools[6].is_error is False and "Exit Code: 3" in str(tools[6].result)
    assert "日本語" in r.events[-1].text
    acct = s.accounting
    assert (acct.lines, acct.events, acct.merged, acct.metadata, acct.bad) == (38, 10, 8, 20, 0)
    assert s.ending is None and s.messages == 10


def _sum(records: list) -> Usage:
    total = Usage()
    for rec in records:
        total.add(rec.usage)
    return total.fix_total()


def test_usage_equals_the_assistant_records_and_the_subagent_summary(
    adapter: QwenAdapter, corpus: Path
) -> None:
    r = read(adapter, corpus, BASIC)
    # nine model responses, each 1234 prompt (800 cached) + 56 completion (12 reasoning in two)
    assert len(r.usage) == 9
    assert r.session.usage.input_tokens == 9 * (1234 - 800)
    assert r.session.usage.cache_read_tokens == 9 * 800
    assert r.session.usage.output_tokens == 9 * 56
    assert r.session.usage.reasoning_tokens == 24
    total = _sum(r.usage)
    assert (total.input_tokens, total.output_tokens, total.cache_read_tokens) == (
        r.session.usage.input_tokens,
        r.session.usage.output_tokens,
        r.session.usage.cache_read_tokens,
    )
    # The subagent's spend exists only in telemetry; Qwen's own executionSummary for the
    # agent call says 2468 input (1600 cached) + 112 output: the subagent records add up to it.
    sub = read(adapter, corpus, SUB)
    agent_call = next(e for e in sub.events if e.tool == "agent")
    summary = agent_call.extra["subagent"]["executionSummary"]
    side = [u for u in sub.usage if u.key.startswith("chatcmpl-")]
    side_total = _sum(side)
    assert side_total.input_tokens + side_total.cache_read_tokens == summary["inputTokens"]
    assert side_total.cache_read_tokens == summary["cachedTokens"]
    assert side_total.output_tokens == summary["outputTokens"]


def test_subagent_turns_are_sidechain_events_of_the_parent(adapter: QwenAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, SUB)
    agent_call = next(e for e in r.events if e.tool == "agent")
    assert agent_call.result == "hello.py has 6 lines." and agent_call.is_error is False
    assert agent_call.extra["subagent"]["terminateReason"] == "GOAL"
    side = [e for e in r.events if e.sidechain]
    assert [(e.kind, e.tool) for e in side] == [("tool_use", "run_shell_command"), ("text", None)]
    assert {e.extra["subagent"] for e in side} == {"general-purpose"}
    assert {e.extra["parent_tool_use_id"] for e in side} == {agent_call.tool_use_id}
    assert r.session.extra["subagent_tool_calls"] == 1
    assert r.session.parent is None


def test_resumed_turns_stay_in_one_session(adapter: QwenAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, MULTI)
    prompts = [e.text for e in r.events if e.kind == "text" and e.role == "user"]
    assert [p.split("[[")[-1] for p in prompts] == ["S:qwen/mt1]]", "S:qwen/mt2]]", "S:qwen/mt3]]"]
    # the memory extractor side request is a sidechain answer, not the agent's reply
    memory = [e for e in r.events if e.sidechain]
    assert [e.extra["subagent"] for e in memory] == ["managed-auto-memory-extractor"]


def test_endings_error_and_killed(adapter: QwenAdapter, corpus: Path) -> None:
    err = read(adapter, corpus, ERR, SYNTH)
    assert err.session.ending == "error"
    assert [(e.kind, e.is_error) for e in err.events] == [("text", None), ("system", True)]
    assert err.events[1].extra["status_code"] == 400
    kill = read(adapter, corpus, KILL, SYNTH)
    assert kill.session.ending == "interrupted"
    assert kill.session.compactions == 1
    assert [e.kind for e in kill.events] == ["text", "summary", "tool_use"]
    assert kill.events[2].result is None
    # a file still being written is not called interrupted yet
    units = {u.path: u for u in adapter.discover(corpus / SYNTH)}
    fresh = adapter.read(units[str(corpus / KILL)], None, now=os.stat(corpus / KILL).st_mtime + 1)
    assert fresh.session.ending is None


def test_old_json_checkpoint_replays_through_the_gemini_reader(adapter: QwenAdapter, corpus: Path) -> None:
    units = [u for u in adapter.discover(corpus / SYNTH) if u.path.endswith(".json")]
    r = adapter.read(units[0], None, now=LATER)
    s = r.session
    assert s.agent == "qwen" and s.id == "cccccccc-1111-4222-8333-444444444444"
    assert s.models == ["qwen3-coder-plus"] and s.title == "List the checkpoint files please"
    assert [e.kind for e in r.events] == ["text", "thinking", "text", "tool_use", "text"]
    assert r.events[3].result == "a.txt\nb.txt"
    assert s.usage.input_tokens == 1000 and s.usage.cache_read_tokens == 100
    assert adapter.resume(s) is None and s.accounting.balanced()


def test_system_records_title_compression_rewind_and_unknown(adapter: QwenAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, SYSREC, SYNTH)
    s = r.session
    assert s.title == "README summary"  # the custom_title record wins over the first prompt
    assert s.first_prompt == "Summarise @README.md [[S:qwen/at]]"
    kinds = [(e.kind, e.subtype) for e in r.events]
    assert kinds == [
        ("system", "slash_command"), ("text", None), ("system", "at_command"), ("text", None),
        ("system", "rewind"), ("summary", "chat_compression"), ("unknown", "future_record_kind"),
    ]  # fmt: skip
    assert r.events[0].text == "/about" and r.events[2].text == "@ read: README.md"
    assert r.events[4].extra == {"truncatedCount": 2}
    assert r.events[5].text.startswith("<state_snapshot>") and r.events[5].raw["newTokenCount"] == 1200
    assert r.events[6].raw["systemPayload"] == {"x": 1}  # kept raw
    assert s.compactions == 1 and (s.accounting.lines, s.accounting.metadata) == (8, 1)


def test_hook_context_and_notifications(adapter: QwenAdapter, corpus: Path) -> None:
    r = read(adapter, corpus, HOOKS, "qwen/agent-sessions")
    kinds = [(e.kind, e.subtype) for e in r.events]
    assert kinds[:2] == [("text", None), ("hook", "prompt_context")]
    assert r.events[0].text == "Inspect the synthetic fixture."
    assert kinds[-1] == ("system", "notification")
    assert r.session.first_prompt == "Inspect the synthetic fixture."


def test_resume_command_and_refused_ids(adapter: QwenAdapter, corpus: Path) -> None:
    s = read(adapter, corpus, BASIC).session
    cmd = adapter.resume(s)
    assert cmd is not None
    assert cmd.argv == ["qwen", "--resume", "71f3d6dc-4f49-4116-bbb0-74b6299299e8"]
    assert cmd.cwd == "/tmp/rt/qwen/home/src/demo-app"
    for bad in ("-rf", "--help", "a b", "x;y", ""):
        assert adapter.resume(Session(agent="qwen", id=bad, path="/x.jsonl")) is None


@pytest.mark.parametrize("rel", [BASIC, SUB, MULTI, ERR, KILL, SYSREC, HOOKS])
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: QwenAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel
    dst = tmp_path / "x.jsonl"
    unit = Unit(agent="qwen", path=str(dst), files=[str(dst)], root=str(tmp_path))
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    later = os.stat(dst).st_mtime + 100
    grown.apply(adapter.read(unit, grown.state, now=later))  # the file settles: endings are decided
    once = read_once(adapter, unit, now=later)
    assert grown.snapshot() == once.snapshot()
    assert once.session["accounting"]["lines"] == len(src.read_bytes().splitlines())
