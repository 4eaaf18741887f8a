"""Grok Build adapter: session directories, chunk joining, tool calls, usage, fallbacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.grok.adapter import GrokAdapter

REAL = "grok/entireio-cli/.grok/sessions"
SYNTH = "grok/synthetic-agtail/.grok/sessions"
LONG_AGO = 1e12


def _unit(corpus: Path, rel: str) -> Unit:
    (unit,) = GrokAdapter().discover(corpus / rel)
    return unit


def _read(unit: Unit, now: float = LONG_AGO) -> ReadResult:
    return GrokAdapter().read(unit, None, now=now)


def _copy(corpus: Path, rel: str, tmp_path: Path) -> Path:
    """A copy of the sample's sessions root; returns the session directory in it."""
    root = tmp_path / "sessions"
    shutil.copytree(corpus / rel, root)
    (folder,) = [p for p in root.glob("*/*") if p.is_dir()]
    return folder


def test_discover_units_are_directories(corpus: Path) -> None:
    unit = _unit(corpus, SYNTH)
    assert Path(unit.path).name == "019b2c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
    assert [Path(f).name for f in unit.files] == ["summary.json", "updates.jsonl", "chat_history.jsonl"]
    assert [Path(f).name for f in _unit(corpus, REAL).files] == ["summary.json", "updates.jsonl"]


def test_real_capture(corpus: Path) -> None:
    res = _read(_unit(corpus, REAL))
    s = res.session
    assert s.agent == "grok" and s.id == "01a03a9f-0f3b-78d2-bad3-cf2ad4e0ff2e"
    assert s.title == "Create hello.txt"
    assert s.cwd == "/private/tmp/scratch/grok-live" and s.project == "grok-live"
    assert s.first_prompt == "Create a file named hello.txt containing exactly the word hello. Then stop."
    assert s.models == ["grok-4.6"]
    assert s.started == "2026-08-25T20:31:38.978Z"
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (17, 1, 2, 14) and acct.balanced()
    hooks = [e for e in res.events if e.kind == "hook"]
    assert [h.hook.event for h in hooks if h.hook] == [
        "session_start",
        "user_prompt_submit",
        "pre_tool_use",
        "post_tool_use",
        "stop",
        "session_end",
        "stop",
    ]
    assert hooks[2].hook is not None and hooks[2].hook.tool == "write"
    assert hooks[0].hook is not None and "success (130 ms)" in (hooks[0].hook.text or "")
    (write,) = [e for e in res.events if e.kind == "tool_use"]
    assert write.tool == "write" and write.input == {"file_path": "hello.txt", "content": "hello\n"}
    assert write.result == "The file /private/tmp/scratch/grok-live/hello.txt has been created."
    assert write.is_error is False and write.extra["status"] == "completed"
    assert [e.kind for e in res.events if e.role == "assistant"] == [
        "thinking",
        "text",
        "tool_use",
        "thinking",
        "text",
    ]
    cmd = GrokAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["grok", f"--resume={s.id}"] and cmd.cwd == s.cwd


def test_real_capture_usage(corpus: Path) -> None:
    res = _read(_unit(corpus, REAL))
    u = res.session.usage
    # turn_completed: inputTokens 31658 of which 15744 cached, outputTokens 399 (357 reasoning)
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        15914,
        15744,
        399,
        357,
    )
    assert u.total_tokens == 32057  # Grok's own totalTokens
    (rec,) = res.usage
    assert rec.model == "grok-4.6" and rec.key.startswith("556780c0-")
    assert res.session.extra["recorded_cost_usd"] == pytest.approx(0.042094)


def test_synthetic_chunks_are_joined(corpus: Path) -> None:
    res = _read(_unit(corpus, SYNTH))
    s = res.session
    assert s.title == "Tailer skips first line of new sessions" and s.git_branch == "main"
    thinking = [e for e in res.events if e.kind == "thinking"]
    assert [t.text for t in thinking] == [
        "The tailer probably seeks to EOF before the file's first write lands. "
        "Check how the watcher opens new files.\n"
    ]
    texts = [e.text for e in res.events if e.kind == "text" and e.role == "assistant"]
    # the three streamed chunks make the one message chat_history.jsonl holds whole
    history = [
        json.loads(line)
        for line in (Path(_unit(corpus, SYNTH).path) / "chat_history.jsonl").read_text().splitlines()
    ]
    assert texts == [h["content"] for h in history if h["type"] == "assistant" and h["content"]]
    assert [e.text for e in res.events if e.kind == "text" and e.role == "user"] == [
        "Why does `agtail tail` miss the first line of new sessions?",
        "Fix it.",
    ]
    acct = s.accounting
    # 21 updates lines: 5 chunk continuations and 4 tool updates merged; 12 chat_history lines skipped
    assert (acct.lines, acct.metadata, acct.merged, acct.skipped, acct.events) == (34, 1, 7, 12, 14)


def test_synthetic_tools_plan_and_usage(corpus: Path) -> None:
    res = _read(_unit(corpus, SYNTH))
    tools = {e.tool: e for e in res.events if e.kind == "tool_use"}
    assert sorted(tools) == ["read_file", "run_terminal_command", "search_replace"]
    failed = tools["run_terminal_command"]
    assert failed.is_error is True and failed.extra["status"] == "failed"
    assert failed.result.endswith("1 failed in 0.31s\nexit code: 1")
    assert failed.extra["raw_output"]["exit_code"] == 1
    assert tools["read_file"].result.startswith("def on_created(path):")
    assert tools["search_replace"].extra["diffs"][0]["path"] == "/home/dev/src/agtail-demo/agtail/watch.py"
    (plan,) = [e for e in res.events if e.subtype == "plan"]
    assert plan.text == (
        "[completed] Reproduce with tests/test_watch.py\n[in_progress] Open new files at offset 0, existing files at EOF"
    )
    u = res.session.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        13600,
        35800,
        652,
        250,
    )
    assert len(res.usage) == 2
    assert res.session.extra["recorded_cost_usd"] == pytest.approx(0.04)


def test_chat_history_is_the_fallback_without_updates(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, SYNTH, tmp_path)
    (folder / "updates.jsonl").unlink()
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    res = _read(unit)
    s = res.session
    acct = s.accounting
    # system prompt → metadata; 3 tool results joined to their calls
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (13, 2, 3, 8) and acct.balanced()
    read = next(e for e in res.events if e.tool == "read_file")
    assert read.input == {"path": "agtail/watch.py"} and read.result.startswith("def on_created(path):")
    reminder = next(e for e in res.events if e.kind == "system")
    assert reminder.subtype == "system_reminder" and "Workspace:" in (reminder.text or "")
    assert s.first_prompt == "Why does `agtail tail` miss the first line of new sessions?"
    assert s.messages == 5  # 2 prompts + the 3 assistant messages that have text


def test_garbage_and_torn_lines(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, REAL, tmp_path)
    updates = folder / "updates.jsonl"
    lines = updates.read_bytes().splitlines(keepends=True)
    junk = [
        b"garbage\n",
        b"[]\n",
        b'{"method":"session/update","params":{"update":{"sessionUpdate":"new_kind"}}}\n',
    ]
    updates.write_bytes(b"".join(lines[:3] + junk + lines[3:]) + b'{"timestamp":17876899')
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    settled = _read(unit)
    s = settled.session
    assert s.bad_lines == 2 and s.bad_line_numbers == [4, 20] and s.truncated
    assert s.accounting.balanced() and s.accounting.lines == 17 + 4
    unknown = [e for e in settled.events if e.kind == "unknown"]
    assert [e.subtype for e in unknown] == [None, "new_kind"]
    # while the directory is still being written the torn last line is not counted yet
    fresh = _read(unit, now=updates.stat().st_mtime + 1)
    assert (
        fresh.session.bad_lines == 1 and not fresh.session.truncated and fresh.session.accounting.balanced()
    )


def test_long_cwd_group_and_subagent_parent(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, SYNTH, tmp_path)
    group = folder.parent.rename(folder.parent.parent / "agtail-demo-0123456789abcdef")
    (group / ".cwd").write_text("/home/dev/src/agtail-demo\n")
    summary = json.loads((group / folder.name / "summary.json").read_text())
    del summary["info"]["cwd"]
    summary.update(parent_session_id="019b0000-aaaa-7000-8000-000000000001", session_kind="subagent")
    (group / folder.name / "summary.json").write_text(json.dumps(summary))
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    s = _read(unit).session
    assert s.cwd == "/home/dev/src/agtail-demo" and s.project == "agtail-demo"
    assert s.parent is not None and s.parent.id == "019b0000-aaaa-7000-8000-000000000001"
    assert s.forked_from is None and s.extra["session_kind"] == "subagent"


def test_rewind_marks_dropped_prompts_inactive(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, SYNTH, tmp_path)
    marker = {
        "timestamp": 1787900070,
        "method": "_x.ai/session/update",
        "params": {
            "sessionId": folder.name,
            "update": {"sessionUpdate": "rewind_marker", "target_prompt_index": 1, "created_at": "x"},
        },
    }
    with open(folder / "updates.jsonl", "a") as fh:
        fh.write(json.dumps(marker) + "\n")
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    events = _read(unit).events
    marks = {(e.kind, e.text): e.extra["branch"] for e in events if e.kind == "text"}
    assert marks[("text", "Fix it.")] == "inactive"
    assert marks[("text", "Why does `agtail tail` miss the first line of new sessions?")] == "active"
    assert events[-1].subtype == "rewind_marker" and events[-1].text == "rewound to prompt 1"


def test_default_roots(tmp_path: Path) -> None:
    adapter = GrokAdapter()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".grok" / "sessions"]
    assert adapter.default_roots({"GROK_HOME": str(tmp_path / "g")}, tmp_path) == [
        tmp_path / "g" / "sessions"
    ]


def test_native_files_leave_out_locks(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, SYNTH, tmp_path)
    (folder / "session.lock").write_text("")
    (folder / "compaction_checkpoints").mkdir()
    (folder / "compaction_checkpoints" / "c1.json").write_text("{}")
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    names = [Path(f).relative_to(folder).as_posix() for f in GrokAdapter().native_files(unit)]
    assert names == ["chat_history.jsonl", "summary.json", "updates.jsonl", "compaction_checkpoints/c1.json"]


def test_summary_fields_of_the_wrong_type(corpus: Path, tmp_path: Path) -> None:
    folder = _copy(corpus, SYNTH, tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    summary.update(parent_session_id="p1", session_kind={"kind": "subagent"}, generated_title=7)
    (folder / "summary.json").write_text(json.dumps(summary))
    (unit,) = GrokAdapter().discover(tmp_path / "sessions")
    s = _read(unit).session
    assert s.parent is None and s.forked_from is not None and s.forked_from.id == "p1"
    assert s.title == "Tailer skips first line of new sessions"  # session_summary, the next choice
