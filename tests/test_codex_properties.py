"""Property tests: whatever the bytes, the Codex reader raises nothing and loses nothing."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.adapters.codex.adapter import CodexAdapter
from agtaild.adapters.codex.parser import CodexParser
from tests.conftest import CORPUS
from tests.replay_helpers import read_once, replay_growing_file

SETTLED = 4_000_000_000.0
REAL_DIR = CORPUS / "real/codex-0.171.0/sessions/2026/11/30"
REAL_FILES = sorted(REAL_DIR.glob("*.jsonl"))
SAMPLE = REAL_DIR / "rollout-2026-11-30T00-25-36-01a229d7-c676-78a1-a3ee-2b022b275b04.jsonl"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Record vocabulary, so random objects reach the handlers instead of bouncing off the dispatch.
TYPES = ["session_meta", "response_item", "event_msg", "turn_context", "compacted", "token_usage_record",
         "world_state", "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
         "local_shell_call", "web_search_call", "user_message", "agent_message", "agent_reasoning", "token_count",
         "task_started", "task_complete", "turn_aborted", "item_completed", "exec_command_end", "patch_apply_end",
         "mcp_tool_call_end", "context_compacted", "thread_name_updated", "UserMessage", "AgentMessage", "Reasoning",
         "CommandExecution", "FileChange", "CollabAgentToolCall", "ContextCompaction", "Plan", "error"]
KEYS = ["type", "payload", "timestamp", "id", "call_id", "info", "item", "content", "text", "message", "output",
        "arguments", "summary", "role", "total_token_usage", "last_token_usage", "input_tokens", "output_tokens",
        "cached_input_tokens", "usage", "thread_token_usage", "thread_id", "source", "subagent", "thread_spawn",
        "parent_thread_id", "forked_from_id", "model", "exit_code", "status", "error", "summary_text", "cwd", "git"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                    st.sampled_from(TYPES), st.text(max_size=20),
                    st.sampled_from(["2026-03-01T10:00:00Z", "2025-01-01T00:00:00.5+02:00", "garbage", ""]))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=25,
)
garbage = st.one_of(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
                    json_values.map(lambda v: json.dumps(v).encode()))


def read_bytes(tmp: Path, data: bytes, name: str = "rollout-2026-03-01T10-00-00-fuzz.jsonl") -> Any:
    path = tmp / "sessions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    adapter = CodexAdapter()
    unit = next(u for u in adapter.discover(tmp / "sessions") if u.path == str(path))
    return adapter.read(unit, now=SETTLED)


def nonempty_lines(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if line.strip())


def assert_sound(result: Any, data: bytes) -> None:
    acct = result.session.accounting
    assert acct.balanced(), acct
    assert acct.lines == nonempty_lines(data)
    assert acct.bad == result.session.bad_lines
    # Handlers cope with every shape themselves; the reader's last-resort net stays unused.
    assert not [e for e in result.events if "error" in e.extra], [e.raw for e in result.events if "error" in e.extra]
    assert len({e.seq for e in result.events}) == len(result.events)


@FUZZ
@given(lines=st.lists(st.tuples(st.integers(0, 10_000), garbage), max_size=8))
def test_garbage_lines_in_a_real_rollout(lines: list[tuple[int, bytes]]) -> None:
    original = SAMPLE.read_bytes().split(b"\n")
    body = list(original[:-1])
    for position, junk in lines:
        body.insert(position % (len(body) + 1), junk)
    data = b"\n".join(body) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        result = read_bytes(Path(tmp), data)
    assert_sound(result, data)
    not_json = 0
    for _, junk in lines:
        try:
            msgspec.json.decode(junk)
        except (msgspec.DecodeError, UnicodeDecodeError):
            not_json += bool(junk.strip())
    assert result.session.bad_lines == not_json
    assert result.session.first_prompt == "Create hello.py, run it, add a Japanese greeting. [[S:codex/basic]]"


@FUZZ
@given(records=st.lists(json_values, min_size=1, max_size=12))
def test_random_records_never_raise(records: list[Any]) -> None:
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    with tempfile.TemporaryDirectory() as tmp:
        result = read_bytes(Path(tmp), data)
    assert_sound(result, data)


@FUZZ
@given(records=st.lists(json_values, min_size=1, max_size=12))
def test_random_records_inside_envelopes_never_raise(records: list[Any]) -> None:
    kinds = ["response_item", "event_msg", "session_meta", "turn_context", "compacted", "token_usage_record"]
    data = b"".join(
        json.dumps({"timestamp": "2026-03-01T10:00:00Z", "type": kinds[i % len(kinds)], "payload": r}).encode() + b"\n"
        for i, r in enumerate(records)
    )
    with tempfile.TemporaryDirectory() as tmp:
        result = read_bytes(Path(tmp), data)
    assert_sound(result, data)


@FUZZ
@given(records=st.lists(json_values, min_size=1, max_size=10))
def test_random_records_read_line_by_line_equal_one_read(records: list[Any]) -> None:
    kinds = ["response_item", "event_msg", "session_meta", "token_usage_record", "compacted", "turn_context"]
    lines = [json.dumps({"timestamp": f"2026-03-01T10:00:{i:02d}Z", "type": kinds[i % len(kinds)], "payload": r})
             for i, r in enumerate(records)]
    data = "".join(line + "\n" for line in lines).encode()
    cuts, pos = [], 0
    for line in lines:
        pos += len(line.encode()) + 1
        cuts.append(pos)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions" / "rollout-2026-03-01T10-00-00-fuzz.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        adapter = CodexAdapter()
        unit = next(iter(adapter.discover(path.parent)))
        replayed = replay_growing_file(adapter, path, path, cuts, unit, settled=True)
        assert replayed.snapshot() == read_once(CodexAdapter(), unit, now=SETTLED).snapshot()


@FUZZ
@given(index=st.integers(0, len(REAL_FILES) - 1), cut=st.floats(0.0, 1.0))
def test_files_cut_at_random_bytes(index: int, cut: float) -> None:
    full = REAL_FILES[index].read_bytes()
    data = full[: int(len(full) * cut)]
    with tempfile.TemporaryDirectory() as tmp:
        result = read_bytes(Path(tmp), data, REAL_FILES[index].name)
    assert_sound(result, data)
    torn = bool(data) and not data.endswith(b"\n")
    assert result.session.truncated == (torn and result.session.bad_lines == 1)
    assert result.session.bad_lines <= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(1, SAMPLE.stat().st_size - 1), max_size=10), settled=st.booleans())
def test_incremental_reads_at_random_cuts(cuts: list[int], settled: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(REAL_DIR.parent.parent.parent, home / "sessions")
        path = home / "sessions" / SAMPLE.relative_to(REAL_DIR.parent.parent.parent)
        adapter = CodexAdapter()
        unit = next(u for u in adapter.discover(home / "sessions") if u.path == str(path))
        replayed = replay_growing_file(adapter, path, path, cuts, unit, settled=settled)
        assert replayed.snapshot() == read_once(CodexAdapter(), unit, now=SETTLED).snapshot()


def test_ten_megabyte_lines(tmp_path: Path) -> None:
    big_output = "x" * (10 * 1024 * 1024)
    lines = [
        {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": {"id": "big", "cwd": "/w"}},
        {"timestamp": "2026-03-01T10:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "yes x"}', "call_id": "c"}},
        {"timestamp": "2026-03-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c", "output": big_output}},
    ]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in lines) + b"{" + b"y" * (10 * 1024 * 1024) + b"\n"
    result = read_bytes(tmp_path, data)
    assert_sound(result, data)
    call = result.events[0]
    assert call.tool == "exec_command" and call.result == big_output
    assert result.session.bad_lines == 1 and result.session.bad_line_numbers == [4]
    assert (result.session.accounting.events, result.session.accounting.merged) == (1, 1)


def test_deeply_nested_lines(tmp_path: Path) -> None:
    deep_args = "[" * 800 + "]" * 800
    lines = [
        b'{"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": {"id": "deep"}}',
        json.dumps({"timestamp": "2026-03-01T10:00:01Z", "type": "response_item",
                    "payload": {"type": "function_call", "name": "f", "arguments": deep_args, "call_id": "c"}}).encode(),
        b'{"timestamp": "2026-03-01T10:00:02Z", "type": "response_item", "payload": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b"[" * 100_000,
    ]
    data = b"\n".join(lines) + b"\n"
    result = read_bytes(tmp_path, data)
    assert_sound(result, data)
    assert result.session.bad_line_numbers == [3, 4]  # deeper than the decoder goes: bad lines
    assert result.events[0].tool == "f"


def test_parser_state_round_trips_through_msgpack(tmp_path: Path) -> None:
    adapter = CodexAdapter()
    unit = next(u for u in adapter.discover(SAMPLE.parent.parent.parent.parent) if u.path == str(SAMPLE))
    parser = CodexParser(adapter, unit, None)
    parser.record(json.loads(SAMPLE.read_bytes().split(b"\n")[0]), 1, 0)
    state = msgspec.msgpack.decode(msgspec.msgpack.encode(parser.st), type=CodexParser.State)
    assert state == parser.st
