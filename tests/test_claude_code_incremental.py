"""Incremental reads of Claude Code files: any number of appended chunks (cut at line ends, in
the middle of lines, at random bytes; settled or still being written) must store exactly what
one read of the whole file stores. Plus bad input: garbage lines, torn files, huge lines."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.adapters.base import Unit
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from tests.claude_code_helpers import SETTLED, find_unit
from tests.replay_helpers import Store

CASES = {
    # file (relative to the corpus) → cut after every N lines
    "claude-code/spotter/projects/-home-USER-projects-spotter-worktrees-spotter-4te/"
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": 37,
    "claude-code/claude-code-log/projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": 3,
    "claude-code/claude-code-log/projects/-Users-dain-workspace-claude-code-log-sample/"
    "12a546d1-83a7-49a6-abba-5400db340b43.jsonl": 2,
    "claude-code/claude-code-log/projects/-Users-dain-workspace-claude-code-log-sample/"
    "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl": 4,
    "claude-code/claude-code-log/projects/-synthetic-claude-code-log-test-data/sidechain.jsonl": 1,
    "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/cd61be5e-6fcd-4c16-b5d5-281dd40378d1.jsonl": 1,
    "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-hooked-app/d257ca0a-dc0a-4e79-b042-64c0b55eefcd.jsonl": 1,
    "claude-code/agent-sessions/projects/-tmp-agent-sessions-stage0-2026-07/small.jsonl": 1,
}
SUBAGENT = "claude-code/claude-code-log/projects/-experiments-worktrees"


def _line_cuts(data: bytes, every: int) -> list[int]:
    """After every ``every``-th newline, and in the middle of the line that follows."""
    cuts: list[int] = []
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    for n, end in enumerate(ends):
        if n % every == every - 1:
            cuts.append(end)
            if n + 1 < len(ends):
                cuts.append((end + ends[n + 1]) // 2)
    return cuts


def _replay(adapter: ClaudeCodeAdapter, unit: Unit, data: bytes, cuts: list[int], *, settled: bool) -> Store:
    """Grow ``unit.path`` to each cut in turn, reading after each step with the saved state."""
    store = Store()
    incremental_reads = 0
    with open(unit.path, "wb") as fh:
        written = 0
        for cut in [*sorted(set(cuts)), len(data)]:
            fh.write(data[written:cut])
            fh.flush()
            written = cut
            mtime = os.stat(unit.path).st_mtime
            result = adapter.read(unit, store.state, now=mtime + (100.0 if settled else 0.5))
            incremental_reads += not result.reset
            store.apply(result)
    assert incremental_reads >= len(set(cuts)) - 1  # the reads really continued from the state
    return store


def _whole(adapter: ClaudeCodeAdapter, unit: Unit) -> Store:
    store = Store()
    store.apply(adapter.read(unit, None, now=SETTLED))
    return store


def _copy(corpus: Path, rel: str, tmp_path: Path) -> tuple[Path, Path]:
    src = corpus / rel
    root = tmp_path / "projects"
    dst = root / src.parent.name / src.name
    dst.parent.mkdir(parents=True)
    shutil.copyfile(src, dst)
    return root, dst


@pytest.mark.parametrize("settled", [True, False], ids=["settled", "being-written"])
@pytest.mark.parametrize("rel", list(CASES), ids=[Path(p).stem[:24] for p in CASES])
def test_chunked_reads_equal_one_read(corpus: Path, tmp_path: Path, rel: str, settled: bool) -> None:
    root, dst = _copy(corpus, rel, tmp_path)
    data = dst.read_bytes()
    adapter = ClaudeCodeAdapter()
    unit = find_unit(adapter, root, dst)
    whole = _whole(adapter, unit)
    grown = _replay(adapter, unit, data, _line_cuts(data, CASES[rel]), settled=settled)
    assert grown.snapshot() == whole.snapshot()
    assert whole.session["accounting"]["bad"] == 0


@pytest.mark.parametrize("rel", list(CASES)[1:5], ids=[Path(p).stem[:24] for p in list(CASES)[1:5]])
def test_random_byte_cuts(corpus: Path, tmp_path: Path, rel: str) -> None:
    root, dst = _copy(corpus, rel, tmp_path)
    data = dst.read_bytes()
    adapter = ClaudeCodeAdapter()
    unit = find_unit(adapter, root, dst)
    whole = _whole(adapter, unit)
    rng = random.Random(rel)
    for settled in (True, False):
        cuts = [rng.randrange(1, len(data)) for _ in range(25)]
        assert _replay(adapter, unit, data, cuts, settled=settled).snapshot() == whole.snapshot()


def test_subagent_chunked_keeps_its_parent_link(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    shutil.copytree(corpus / SUBAGENT, root / "-experiments-worktrees")
    adapter = ClaudeCodeAdapter()
    child = root / "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a4ca7529859c158c2.jsonl"
    unit = find_unit(adapter, root, child)
    data = child.read_bytes()
    whole = _whole(adapter, unit)
    assert whole.session["parent"]["tool_use_id"] == "toolu_01GmrK6tgdD9D5xD6W5X9UUy"
    assert _replay(adapter, unit, data, _line_cuts(data, 5), settled=True).snapshot() == whole.snapshot()


def test_torn_last_line(corpus: Path, tmp_path: Path) -> None:
    root, dst = _copy(corpus, list(CASES)[5], tmp_path)
    data = dst.read_bytes()
    dst.write_bytes(data[:-40])  # the last line loses its end (and its newline)
    adapter = ClaudeCodeAdapter()
    unit = find_unit(adapter, root, dst)
    mtime = os.stat(dst).st_mtime
    writing = adapter.read(unit, None, now=mtime + 0.5).session
    assert (writing.truncated, writing.bad_lines) == (False, 0)  # maybe still being written
    settled = adapter.read(unit, None, now=mtime + 100).session
    lines = data.count(b"\n")
    assert (settled.truncated, settled.bad_lines, settled.bad_line_numbers) == (True, 1, [lines])
    assert settled.accounting.balanced() and settled.accounting.lines == lines


# -- bad input -------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=8,
)
_record_types = st.sampled_from(
    ["user", "assistant", "system", "attachment", "progress", "summary", "custom-title", "ai-title",
     "queue-operation", "pr-link", "agent-name", None, "mystery"]
)  # fmt: skip
_known_keys = st.sampled_from(
    ["message", "attachment", "data", "content", "toolUseResult", "subtype", "uuid", "timestamp", "cwd", "type",
     "isSidechain", "isMeta", "isCompactSummary", "requestId", "toolUseID", "summary", "leafUuid",
     "hookInfos", "entrypoint", "sessionId", "version"]
)  # fmt: skip
_message = st.fixed_dictionaries(
    {},
    optional={
        "id": _json_values, "model": _json_values, "role": _json_values, "stop_reason": _json_values,
        "usage": st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "cache_creation",
                                                  "cache_read_input_tokens", "speed"]), _json_values),
        "content": _json_values | st.lists(st.dictionaries(
            st.sampled_from(["type", "text", "id", "tool_use_id", "content", "thinking", "input", "source"]),
            _json_values | st.sampled_from(["text", "tool_use", "tool_result", "image", "thinking"])), max_size=3),
    },
)  # fmt: skip
_nested = st.dictionaries(
    st.sampled_from(["type", "hookEvent", "hookName", "toolUseID", "command", "content", "agentId", "prompt",
                     "blockingError", "stdout", "hookInfos", "input_tokens", "output_tokens", "id", "input"]),
    _json_values | st.sampled_from(["hook_success", "hook_progress", "queued_command", "agent_progress",
                                    "tool_use", "tool_result", "text", "Stop", "PreToolUse"]),
    max_size=5,
)  # fmt: skip
_records = st.builds(
    lambda kind, fields, message: {"type": kind, **fields, **({"message": message} if message else {})},
    _record_types,
    st.dictionaries(_known_keys, _json_values | _nested, max_size=6),
    st.none() | _message,
)
_garbage = st.one_of(
    st.binary(min_size=1, max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.text(max_size=60).map(lambda t: t.replace("\n", " ").replace("\r", " ").encode()),
    _json_values.map(lambda v: json.dumps(v).encode()),
    _records.map(lambda r: json.dumps(r).encode()),
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_json(line: bytes) -> bool:
    """Strict JSON (no NaN/Infinity), as a line must be to count as a record."""
    try:
        json.loads(line, parse_constant=_reject_constant)
    except ValueError:
        return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.lists(_garbage, min_size=1, max_size=12), seed=st.integers(0, 10_000))
def test_garbage_lines_never_escape(corpus: Path, tmp_path_factory: pytest.TempPathFactory, garbage: list[bytes],
                                    seed: int) -> None:  # fmt: skip
    base = (corpus / list(CASES)[6]).read_bytes().split(b"\n")[:-1]
    rng = random.Random(seed)
    lines = list(base)
    for item in garbage:
        lines.insert(rng.randrange(len(lines) + 1), item)
    root = tmp_path_factory.mktemp("garbage") / "projects"
    path = root / "-p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = ClaudeCodeAdapter().read(find_unit(ClaudeCodeAdapter(), root, path), None, now=SETTLED)
    acct = result.session.accounting
    assert acct.balanced()
    assert acct.lines == sum(1 for line in lines if line.strip())
    expected_bad = sum(1 for line in lines if line.strip() and not _is_json(line))
    assert acct.bad == result.session.bad_lines == expected_bad


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=1), settled=st.booleans())
def test_files_cut_at_any_byte(corpus: Path, tmp_path_factory: pytest.TempPathFactory, cut: int, settled: bool) -> None:
    data = (corpus / list(CASES)[2]).read_bytes()
    data = data[: cut % len(data) or 1]
    root = tmp_path_factory.mktemp("cut") / "projects"
    path = root / "-p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    adapter = ClaudeCodeAdapter()
    mtime = os.stat(path).st_mtime
    session = adapter.read(find_unit(adapter, root, path), None, now=mtime + (100.0 if settled else 0.5)).session
    assert session.accounting.balanced()
    torn = not data.endswith(b"\n") and not _is_json(data.rsplit(b"\n", 1)[-1])
    assert session.truncated == (settled and torn)


def _user_line(text: str, uuid: str) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": "s",
            "message": {"role": "user", "content": text}}  # fmt: skip


def test_ten_megabyte_lines(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path = root / "-p" / "big.jsonl"
    path.parent.mkdir(parents=True)
    huge = "パ" * (10 * 1024 * 1024 // 3)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(_user_line(huge, "u1"), ensure_ascii=False) + "\n")
        fh.write('{"type":"user","message":' + "[" * 10 + "x" * (10 * 1024 * 1024) + "\n")  # 10 MB of not-JSON
        fh.write(json.dumps(_user_line("after the big lines", "u2")) + "\n")
    adapter = ClaudeCodeAdapter()
    result = adapter.read(find_unit(adapter, root, path), None, now=SETTLED)
    texts = [e.text for e in result.events]
    assert texts[0] == huge and texts[1] == "after the big lines"
    assert (result.session.bad_lines, result.session.bad_line_numbers) == (1, [2])
    assert result.session.accounting.balanced()


def test_numbers_too_big_for_the_state(tmp_path: Path) -> None:
    """JSON integers beyond 64 bits in a waiting tool input or in usage must not break a read."""
    root = tmp_path / "projects"
    path = root / "-p" / "big-int.jsonl"
    path.parent.mkdir(parents=True)
    call = {"type": "assistant", "uuid": "a1", "timestamp": "2026-01-01T00:00:01.000Z", "requestId": "r1",
            "message": {"id": "m1", "role": "assistant", "model": "claude-opus-4-8",
                        "usage": {"input_tokens": 10**30, "output_tokens": 5},
                        "content": [{"type": "tool_use", "id": "t1", "name": "Calc", "input": {"n": 10**30}}]}}  # fmt: skip
    path.write_text(json.dumps(call) + "\n")
    adapter = ClaudeCodeAdapter()
    unit = find_unit(adapter, root, path)
    store = Store()
    store.apply(adapter.read(unit, None, now=SETTLED))
    assert store.events[0]["input"] == {"n": 10**30}
    result = {"type": "user", "uuid": "u2", "timestamp": "2026-01-01T00:00:02.000Z",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}  # fmt: skip
    with open(path, "a") as fh:
        fh.write(json.dumps(result) + "\n")
    store.apply(adapter.read(unit, store.state, now=SETTLED))
    assert store.events[0]["result"] == "ok"
    assert store.events[0]["input"] == {"n": str(10**30)}  # the waiting copy kept it as text
    assert store.usage["m1:r1"]["usage"]["input_tokens"] == 0 and store.usage["m1:r1"]["usage"]["output_tokens"] == 5
