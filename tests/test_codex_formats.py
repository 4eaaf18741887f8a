"""Codex shapes the corpus lacks or shows only once: older layouts, endings, titles, usage rules.

Files are built in tmp from the format notes (FORMATS.md §2, Part 3) or by cutting and
extending a real 0.171.0 rollout the way the real CLI ends such sessions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agtaild.adapters.base import ReadResult
from agtaild.adapters.codex.adapter import CodexAdapter
from agtaild.model import ParentRef

SETTLED = 4_000_000_000.0
REAL_BASIC = "real/codex-0.171.0/sessions/2026/11/30/rollout-2026-11-30T00-25-36-01a229d7-c676-78a1-a3ee-2b022b275b04.jsonl"
TID = "0199b000-0000-7000-8000-00000000000a"


def env(ts: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:{ts}Z", "type": kind, "payload": payload}


def meta(thread: str = TID, **extra: Any) -> dict[str, Any]:
    return env("00:00.000", "session_meta", {"id": thread, "cwd": "/home/dev/app", "originator": "codex_cli_rs",
                                             "cli_version": "0.120.0", "source": "cli", **extra})


def tokens(ts: str, last: tuple[int, ...] | None, total: tuple[int, ...] | None) -> dict[str, Any]:
    def usage(v: tuple[int, ...]) -> dict[str, int]:
        return {"input_tokens": v[0], "cached_input_tokens": v[1], "output_tokens": v[2],
                "reasoning_output_tokens": 0, "total_tokens": v[0] + v[2]}

    info = {"last_token_usage": usage(last) if last else None, "total_token_usage": usage(total) if total else None}
    return env(ts, "event_msg", {"type": "token_count", "info": info if (last or total) else None})


def write(path: Path, records: list[Any], raw: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)
    path.write_bytes(body + raw)
    return path


def read(path: Path, root: Path | None = None, *, now: float = SETTLED) -> ReadResult:
    adapter = CodexAdapter()
    root = root or path.parent
    unit = next(u for u in adapter.discover(root) if u.path == str(path))
    return adapter.read(unit, now=now)


def rollout(tmp_path: Path, records: list[Any], thread: str = TID) -> Path:
    return write(tmp_path / "sessions" / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{thread}.jsonl", records)


# -- older layouts ---------------------------------------------------------------------------
def test_pre_envelope_rollout(tmp_path: Path) -> None:
    header = {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-08-01T10:00:00.000Z",
              "instructions": None, "git": {"commit_hash": "abc", "branch": "dev"}}
    shell_output = json.dumps({"output": "1 failed\n", "metadata": {"exit_code": 1, "duration_seconds": 0.5}})
    records = [
        header,
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<user_instructions>\nbe brief\n</user_instructions>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the failing test"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Run the tests first"}], "encrypted_content": "gAAA"},
        {"type": "local_shell_call", "id": "lsc_1", "call_id": "call_1", "status": "completed",
         "action": {"type": "exec", "command": ["bash", "-lc", "pytest -q"], "timeout_ms": 10000}},
        {"type": "function_call_output", "call_id": "call_1", "output": shell_output},
        {"record_type": "state"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One test fails; fixing it."}]},
    ]
    path = write(tmp_path / "sessions" / "rollout-2025-08-01T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl", records)
    result = read(path, tmp_path / "sessions")
    s = result.session
    assert (s.id, s.started, s.git_branch, s.title) == (header["id"], "2025-08-01T10:00:00.000Z", "dev", "Fix the failing test")
    shell = next(e for e in result.events if e.kind == "tool_use")
    assert (shell.tool, shell.input["command"], shell.result, shell.is_error) == ("local_shell", ["bash", "-lc", "pytest -q"], "1 failed\n", True)
    assert [e.kind for e in result.events] == ["system", "system", "text", "thinking", "tool_use", "text"]
    assert (s.accounting.metadata, s.accounting.merged, s.accounting.events) == (3, 1, 6)
    assert (s.cwd, s.project) == ("/home/dev/app", "app")  # only the environment_context names it
    assert s.resumable is False and CodexAdapter().resume(s) is None


def test_typescript_cli_json_document(tmp_path: Path) -> None:
    doc = {
        "session": {"timestamp": "2025-04-20T12:00:00.000Z", "id": "1f0b6f5e-1c5e-4a55-9a55-1b2f3c4d5e6f", "instructions": ""},
        "items": [
            {"id": "msg_1", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the repo files"}]},
            {"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "shell", "arguments": '{"command":["ls"]}'},
            {"type": "function_call_output", "call_id": "call_a",
             "output": json.dumps({"output": "README.md\nsrc\n", "metadata": {"exit_code": 0}})},
            {"id": "msg_2", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two entries."}]},
        ],
    }
    path = tmp_path / "sessions" / "rollout-2025-04-20-1f0b6f5e-1c5e-4a55-9a55-1b2f3c4d5e6f.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, indent=2))
    result = read(path, tmp_path / "sessions")
    s = result.session
    assert (s.id, s.title, s.started, s.messages) == (doc["session"]["id"], "List the repo files", "2025-04-20T12:00:00.000Z", 2)
    ls = next(e for e in result.events if e.kind == "tool_use")
    assert ls.input == {"command": ["ls"]} and ls.result == "README.md\nsrc\n" and ls.is_error is False
    assert s.accounting.lines == 5 and s.accounting.balanced() and s.resumable is False
    assert [e.source for e in result.events] == [{"line": 2}, {"line": 3}, {"line": 5}]
    path.write_text('{"session": {"id": "x"}, "items": [')
    broken = read(path, tmp_path / "sessions").session
    assert broken.truncated and broken.bad_lines == 1 and broken.accounting.balanced()


# -- endings, from a real rollout --------------------------------------------------------------
def real_lines(corpus: Path, n: int) -> list[bytes]:
    return (corpus / REAL_BASIC).read_bytes().split(b"\n")[:n]


def test_sigint_interrupted_turn(corpus: Path, tmp_path: Path) -> None:
    turn = "01a229d7-c698-7e32-9f55-a8b2ea6ea289"
    aborted = "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"
    extra = [
        {"timestamp": "2026-11-30T00:25:40.000Z", "ordinal": 13, "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": aborted}]}},
        {"timestamp": "2026-11-30T00:25:40.001Z", "ordinal": 14, "type": "event_msg",
         "payload": {"type": "turn_aborted", "turn_id": turn, "reason": "interrupted"}},
    ]
    path = rollout(tmp_path, [*real_lines(corpus, 13), *extra], "01a229d7-c676-78a1-a3ee-2b022b275b04")
    result = read(path, tmp_path / "sessions")
    assert result.session.ending == "interrupted"
    assert [e.subtype for e in result.events if e.kind == "system"][-2:] == ["context", "turn_aborted"]
    assert result.session.title == "Create hello.py, run it, add a Japanese greeting. [[S:codex/basic]]"


def test_killed_during_a_tool_call(corpus: Path, tmp_path: Path) -> None:
    # SIGKILL mid-tool: the rollout ends with function_call + token_usage_record (line 15).
    path = rollout(tmp_path, real_lines(corpus, 15), "01a229d7-c676-78a1-a3ee-2b022b275b04")
    done = read(path, tmp_path / "sessions")
    assert done.session.ending == "interrupted"
    call = next(e for e in done.events if e.kind == "tool_use")
    assert call.input["cmd"] == "ls -la && git status --short" and call.result is None
    # The killed response's usage is only in the record; it still counts (ccusage misses it).
    assert [(r.usage.input_tokens, r.usage.cache_read_tokens, r.usage.output_tokens) for r in done.usage] == [(434, 800, 56)]
    live = read(path, tmp_path / "sessions", now=os.stat(path).st_mtime + 1.0)
    assert live.session.ending is None  # still being written: not interrupted yet


def test_failed_turn_keeps_the_error(corpus: Path, tmp_path: Path) -> None:
    for error in ("unexpected status 400 Bad Request: model not found", {"message": "unexpected status 400"}):
        failed = {"timestamp": "2026-11-30T00:25:40.000Z", "ordinal": 13, "type": "event_msg",
                  "payload": {"type": "task_complete", "turn_id": "t", "last_agent_message": None, "error": error}}
        path = rollout(tmp_path, [*real_lines(corpus, 13), failed], "01a229d7-c676-78a1-a3ee-2b022b275b04")
        result = read(path, tmp_path / "sessions")
        event = result.events[-1]
        assert (event.kind, event.subtype, event.is_error) == ("system", "error", True)
        assert event.text is not None and event.text.startswith("unexpected status 400")
        assert result.session.ending is None


def test_usage_limit_ending(tmp_path: Path) -> None:
    records = [meta(), env("00:01.000", "event_msg", {"type": "task_started", "turn_id": "t1"}),
               env("00:02.000", "event_msg", {"type": "error", "message": "You've hit your usage limit. Try again later."}),
               env("00:02.500", "event_msg", {"type": "task_complete", "turn_id": "t1", "error": "usage limit reached"})]
    assert read(rollout(tmp_path, records), tmp_path / "sessions").session.ending == "limit"


# -- titles ----------------------------------------------------------------------------------------
def test_title_from_session_index_newest_wins(tmp_path: Path) -> None:
    records = [meta(), env("00:01.000", "event_msg", {"type": "user_message", "message": "Refactor the parser"}),
               env("00:02.000", "event_msg", {"type": "thread_name_updated", "thread_id": TID, "thread_name": "Parser work"})]
    path = rollout(tmp_path, records)
    assert read(path, tmp_path / "sessions").session.title == "Parser work"
    index = [{"id": TID, "thread_name": "First name", "updated_at": "2026-03-01T10:05:00Z"},
             {"id": "other", "thread_name": "Not this one"},
             {"id": TID, "thread_name": "Parser refactor", "updated_at": "2026-03-01T11:00:00Z"}]
    write(tmp_path / "session_index.jsonl", index, raw=b'{"id": "torn')
    s = read(path, tmp_path / "sessions").session
    assert s.title == "Parser refactor" and s.first_prompt == "Refactor the parser"


def test_long_prompt_title_is_one_line(tmp_path: Path) -> None:
    prompt = "Please   look at\nthe build " + "x" * 400
    s = read(rollout(tmp_path, [meta(), env("00:01.000", "event_msg", {"type": "user_message", "message": prompt})])).session
    assert s.first_prompt == prompt and s.title is not None
    assert s.title.startswith("Please look at the build x") and len(s.title) == 200 and "\n" not in s.title


# -- discovery -------------------------------------------------------------------------------------
def test_discovery_layouts(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    dated = rollout(tmp_path, [meta()])
    flat = write(sessions / "rollout-2025-05-01T10-00-00-0196a000-0000-7000-8000-000000000001.jsonl", [meta("flat")])
    archived = write(tmp_path / "archived_sessions" / "rollout-old.jsonl", [meta("old")])
    mirror = write(sessions / "archived_sessions" / "rollout-mirrored.jsonl", [meta("mirrored")])
    write(sessions / ".hidden" / "rollout-x.jsonl", [meta("hidden")])
    (sessions / "notes.txt").write_text("not a rollout")
    (sessions / "config.json").write_text("{}")
    adapter = CodexAdapter()
    units = {u.path: u for u in adapter.discover(sessions)}
    assert set(units) == {str(dated), str(flat), str(archived), str(mirror)}
    assert [p for p, u in units.items() if u.archived] == [str(archived), str(mirror)]
    assert all(u.root == str(sessions) for u in units.values())
    assert adapter.relative_path(units[str(archived)], str(archived)) == "archived_sessions/rollout-old.jsonl"
    assert adapter.relative_path(units[str(dated)], str(dated)) == f"2026/03/01/{dated.name}"
    assert read(archived, sessions).session.archived is True


# -- usage rules -----------------------------------------------------------------------------------
def usage_of(result: ReadResult) -> list[tuple[int, int, int]]:
    return [(r.usage.input_tokens + r.usage.cache_read_tokens, r.usage.cache_read_tokens, r.usage.output_tokens)
            for r in result.usage]


def test_reemitted_and_frozen_totals_do_not_count_twice(tmp_path: Path) -> None:
    records = [meta(), env("00:00.500", "turn_context", {"model": "gpt-5", "cwd": "/home/dev/app"}),
               tokens("00:01.000", (100, 40, 10), (100, 40, 10)),
               tokens("00:02.000", (100, 40, 10), (100, 40, 10)),  # the same row again
               tokens("00:03.000", (500, 0, 50), (100, 40, 10)),  # last moves, total does not
               tokens("00:04.000", None, None),  # info: null (a rate-limit update)
               tokens("00:05.000", (20, 0, 5), (120, 40, 15))]
    result = read(rollout(tmp_path, records))
    assert usage_of(result) == [(100, 40, 10), (20, 0, 5)]
    assert [r.key for r in result.usage] == [f"{TID}:3", f"{TID}:7"] and {r.model for r in result.usage} == {"gpt-5"}
    assert result.session.accounting.metadata == 7


def test_usage_record_and_its_token_count_are_one_response(tmp_path: Path) -> None:
    def record(ts: str, thread: str, last: tuple[int, int, int], total: tuple[int, int, int]) -> dict[str, Any]:
        def u(v: tuple[int, int, int]) -> dict[str, int]:
            return {"input_tokens": v[0], "cached_input_tokens": v[1], "cache_write_input_tokens": 0,
                    "output_tokens": v[2], "reasoning_output_tokens": 0, "total_tokens": v[0] + v[2]}
        return env(ts, "token_usage_record", {"thread_id": thread, "response_id": "r", "usage": u(last), "thread_token_usage": u(total)})

    records = [meta(),
               record("00:01.000", TID, (100, 50, 5), (100, 50, 5)), tokens("00:01.100", (100, 50, 5), (100, 50, 5)),
               tokens("00:02.000", (30, 0, 3), (130, 50, 8)), record("00:02.100", TID, (30, 0, 3), (130, 50, 8)),
               record("00:03.000", "someone-else", (999, 0, 9), (999, 0, 9)),  # another thread's row
               record("00:04.000", TID, (10, 0, 1), (140, 50, 9))]  # killed before its token_count
    result = read(rollout(tmp_path, records))
    assert usage_of(result) == [(100, 50, 5), (30, 0, 3), (10, 0, 1)]


def test_normalized_to_the_anthropic_convention(tmp_path: Path) -> None:
    row = {"input_tokens": 1000, "cached_input_tokens": 300, "cache_write_input_tokens": 100,
           "output_tokens": 50, "reasoning_output_tokens": 20, "total_tokens": 1050}
    records = [meta(), env("00:01.000", "event_msg", {"type": "token_count", "info": {"last_token_usage": row, "total_token_usage": row}})]
    u = read(rollout(tmp_path, records)).session.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        600, 300, 100, 50, 20, 1050)


def fork_files(tmp_path: Path, *, with_parent: bool, reply_after: str = "09.000") -> Path:
    """A parent with two responses, and its fork: a copy of the parent's lines (new
    timestamps, one batch right after the fork's session_meta), then one new response."""
    parent_id, child_id = "0199b000-0000-7000-8000-0000000000aa", "0199b000-0000-7000-8000-0000000000bb"
    parent = [meta(parent_id), env("00:00.500", "event_msg", {"type": "user_message", "message": "Plan the release"}),
              tokens("00:01.000", (10, 0, 1), (10, 0, 1)), tokens("00:05.000", (20, 0, 2), (30, 0, 3))]
    if with_parent:
        rollout(tmp_path, parent, parent_id)
    copied = [dict(r, timestamp=f"2026-03-01T11:00:00.1{i:02d}Z") for i, r in enumerate(parent)]
    child = [
        dict(meta(child_id, forked_from_id=parent_id), timestamp="2026-03-01T11:00:00.100Z"),
        *copied,
        dict(env("", "event_msg", {"type": "user_message", "message": "Now only the changelog"}),
             timestamp="2026-03-01T11:00:00.500Z" if reply_after < "01" else "2026-03-01T11:00:05.000Z"),
        dict(tokens("", (7, 0, 1), (37, 0, 4)), timestamp=f"2026-03-01T11:00:{reply_after}Z"),
    ]
    return rollout(tmp_path, child, child_id)


def test_fork_without_its_parent_skips_the_copied_batch(tmp_path: Path) -> None:
    result = read(fork_files(tmp_path, with_parent=False))
    s = result.session
    assert s.forked_from == ParentRef("codex", "0199b000-0000-7000-8000-0000000000aa")
    assert usage_of(result) == [(7, 0, 1)]
    assert [(e.text, bool(e.extra.get("copied"))) for e in result.events] == [
        ("Plan the release", True), ("Now only the changelog", False)]
    assert s.title == "Now only the changelog" and s.first_prompt == "Now only the changelog"


def test_fork_with_its_parent_uses_the_parent_total_at_fork_time(tmp_path: Path) -> None:
    # A reply within the copy batch's second: the parent's total at fork time (33) still
    # tells the copies (totals 11 and 33) from the fork's own response (total 41).
    path = fork_files(tmp_path, with_parent=True, reply_after="00.900")
    assert usage_of(read(path, tmp_path / "sessions")) == [(7, 0, 1)]
    # Without the parent only the batch is left to go by, and the quick reply looks copied.
    (tmp_path / "sessions/2026/03/01/rollout-2026-03-01T10-00-00-0199b000-0000-7000-8000-0000000000aa.jsonl").unlink()
    assert usage_of(read(path, tmp_path / "sessions")) == []


# -- odd lines -------------------------------------------------------------------------------------
def test_deltas_begins_companions_and_orphans(tmp_path: Path) -> None:
    call = {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]', "call_id": "c1"}
    records = [
        meta(),
        env("00:01.000", "event_msg", {"type": "agent_message_delta", "delta": "Hel"}),
        env("00:01.100", "response_item", call),
        env("00:01.200", "event_msg", {"type": "exec_command_begin", "call_id": "c1", "command": ["ls"]}),
        env("00:01.300", "event_msg", {"type": "exec_command_end", "call_id": "c1", "stdout": "a\n", "stderr": "",
                                       "aggregated_output": "a\n", "exit_code": 0}),
        env("00:01.400", "response_item", {"type": "function_call_output", "call_id": "c1", "output": "a\n"}),
        env("00:01.500", "response_item", {"type": "function_call_output", "call_id": "lost", "output": "orphan"}),
        env("00:01.600", "event_msg", {"type": "exec_command_end", "call_id": "gone", "command": ["pwd"],
                                       "aggregated_output": "/x\n", "exit_code": 2}),
        env("00:01.700", "compacted", {"message": "Summary so far"}),
        env("00:01.800", "event_msg", {"type": "context_compacted"}),
        env("00:01.900", "event_msg", {"type": "agent_message", "message": "Done"}),
        env("00:02.000", "event_msg", {"type": "context_compacted"}),
        [1, 2, 3],
    ]
    path = rollout(tmp_path, records)
    with open(path, "ab") as fh:
        fh.write(b"not json at all\n{\"timestamp\": \"2026-03-01T10:00:03Z\", \"type\": \"event_msg\", \"payl")
    result = read(path)
    s = result.session
    kinds = [(e.kind, e.tool or e.subtype) for e in result.events]
    assert kinds == [("tool_use", "shell"), ("tool_result", None), ("tool_use", "exec_command"),
                     ("summary", "compaction"), ("text", None), ("summary", "compaction"), ("unknown", None)]
    ls = result.events[0]
    assert ls.input == '{"command": ["ls"]' and ls.result == "a\n" and ls.is_error is False  # arguments kept as written
    assert result.events[2].is_error is True and result.events[3].text == "Summary so far"
    assert s.compactions == 2 and s.bad_lines == 2 and s.bad_line_numbers == [14, 15] and s.truncated
    assert (s.accounting.skipped, s.accounting.merged) == (2, 3) and s.accounting.balanced()


def test_other_tool_kinds(tmp_path: Path) -> None:
    image = "iVBORw0KGgo" * 100
    records = [
        meta(),
        env("00:01.000", "response_item", {"type": "web_search_call", "id": "ws_1", "status": "completed",
                                           "action": {"type": "search", "query": "msgspec raw"}}),
        env("00:02.000", "response_item", {"type": "tool_search_call", "call_id": "ts_1", "execution": "client",
                                           "arguments": '{"query": "spawn"}'}),
        env("00:02.500", "response_item", {"type": "tool_search_output", "call_id": "ts_1",
                                           "tools": [{"type": "input_text", "text": "multi_agent_v1.spawn_agent"}]}),
        env("00:03.000", "response_item", {"type": "image_generation_call", "id": "ig_1", "status": "completed",
                                           "revised_prompt": "a red fox", "result": image}),
        env("00:04.000", "event_msg", {"type": "item_completed", "thread_id": TID, "turn_id": "t",
                                       "item": {"type": "CommandExecution", "id": "call_gone", "command": ["ls"],
                                                "aggregated_output": "a.txt\n", "exit_code": 0, "status": "completed"}}),
        env("00:05.000", "event_msg", {"type": "item_completed", "thread_id": TID, "turn_id": "t",
                                       "item": {"type": "Plan", "id": "p1", "text": "1. read\n2. write"}}),
        env("00:06.000", "event_msg", {"type": "item_completed", "thread_id": TID, "turn_id": "t",
                                       "item": {"type": "FutureItem", "id": "f1"}}),
        env("00:07.000", "response_item", {"type": "function_call", "name": "mcp__docs__search",
                                           "arguments": '{"q": "zstd"}', "call_id": "m1"}),
        env("00:07.500", "event_msg", {"type": "mcp_tool_call_end", "call_id": "m1",
                                       "invocation": {"server": "docs", "tool": "search", "arguments": {"q": "zstd"}},
                                       "result": {"Ok": {"content": [{"type": "text", "text": "3 hits"}], "isError": False}}}),
        env("00:08.000", "event_msg", {"type": "mcp_tool_call_end", "call_id": "m2",
                                       "invocation": {"server": "docs", "tool": "fetch", "arguments": {"url": "x"}},
                                       "result": {"Err": "tool call failed: timeout"}}),
    ]
    events = read(rollout(tmp_path, records)).events
    assert [(e.kind, e.tool or e.subtype) for e in events] == [
        ("tool_use", "web_search"), ("tool_use", "tool_search"), ("tool_use", "image_generation"),
        ("tool_use", "exec_command"), ("system", "plan"), ("unknown", None),
        ("tool_use", "mcp__docs__search"), ("tool_use", "mcp__docs__fetch")]
    web, search, picture, orphan = events[:4]
    assert web.input == {"type": "search", "query": "msgspec raw"} and web.result is None
    assert search.input == {"query": "spawn"} and search.result == "multi_agent_v1.spawn_agent"
    assert picture.input == {"revised_prompt": "a red fox"} and image not in str(picture.result)
    assert orphan.input == {"command": ["ls"]} and orphan.result == "a.txt\n" and orphan.is_error is False
    assert events[5].raw["item"]["type"] == "FutureItem"
    search_docs, fetch_docs = events[6:]
    assert (search_docs.result, search_docs.is_error, search_docs.extra["mcp"]["server"]) == ("3 hits", False, "docs")
    assert (fetch_docs.input, fetch_docs.result, fetch_docs.is_error) == ({"url": "x"}, "tool call failed: timeout", True)
