"""Claude Code usage: one record per API response, ccusage's de-duplication rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude.usage import MAX_REMEMBERED
from tests.claude_code_helpers import SETTLED, assistant_line, find_unit, read_path, usage_dict
from tests.replay_helpers import Store

SPOTTER = "claude-code/spotter/projects"
SPOTTER_MAIN = "-home-USER-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def test_split_response_counts_its_final_usage_once(corpus: Path) -> None:
    """msg_01AjAt… is written on lines 8, 9, 10 and 15; output_tokens is 9 until line 15 (209)."""
    root = corpus / SPOTTER
    result = read_path(root, root / SPOTTER_MAIN)
    records = {r.key: r for r in result.usage}
    record = records["msg_01AjAtmphJjr4oSLfTyzk8LA:req_011CY4Jzjjv1AvJJJhrqsAMj"]
    assert (record.usage.output_tokens, record.usage.cache_read_tokens) == (209, 17842)
    assert record.model == "claude-opus-4-6"
    assert [e.kind for e in result.events if e.source["line"] in (8, 9, 10, 15)] == ["text", "thinking", "tool_use", "tool_use"]
    # The session total is the sum of its records.
    assert result.session.usage.total_tokens == sum(r.usage.total_tokens for r in result.usage)
    assert result.session.usage.output_tokens == sum(r.usage.output_tokens for r in result.usage)


def _read(tmp_path: Path, lines: list[dict[str, Any]]) -> Any:
    root = tmp_path / "projects"
    path = root / "-w" / "u.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return read_path(root, path)


def test_dedup_rules(tmp_path: Path) -> None:
    result = _read(tmp_path, [
        assistant_line("a", "m1", "r1", usage_dict(10, 1, 100, 5)),
        assistant_line("b", "m1", "r1", usage_dict(10, 50, 100, 5)),           # same response, final output count
        assistant_line("c", "m1", "r1", usage_dict(10, 1, 100, 5)),            # a smaller copy changes nothing
        assistant_line("d", "m2", None, usage_dict(3, 4)),                     # no requestId
        assistant_line("e", "m2", None, usage_dict(3, 4)),
        assistant_line("f", "m3", "r3", usage_dict(7, 7), sidechain=True),     # a sidechain copy first …
        assistant_line("g", "m3", "r3-main", usage_dict(7, 2)),                # … the main-thread copy wins
        assistant_line("h", "m1", "r1-replay", usage_dict(99, 99), sidechain=True),  # sidechain replay: ignored
        assistant_line("i", None, None, usage_dict(1, 1)),                     # no message id: never merged
        assistant_line("j", None, None, usage_dict(1, 1)),
    ])  # fmt: skip
    usage = {r.key: (r.usage.input_tokens, r.usage.output_tokens) for r in result.usage}
    assert usage == {"m1:r1": (10, 50), "m2:": (3, 4), "m3:r3": (7, 2), "line:i": (1, 1), "line:j": (1, 1)}
    assert result.session.usage.input_tokens == 10 + 3 + 7 + 1 + 1
    assert result.session.usage.output_tokens == 50 + 4 + 2 + 1 + 1
    assert result.session.usage.total_tokens == 10 + 50 + 100 + 5 + 3 + 4 + 7 + 2 + 2 + 2


def test_cache_writes_and_fast_mode(tmp_path: Path) -> None:
    breakdown = {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 12}
    result = _read(tmp_path, [
        assistant_line("a", "m1", "r1", usage_dict(1, 2, 3, 999, cache_creation=breakdown)),
        assistant_line("b", "m2", "r2", usage_dict(1, 2, 3, 40, speed="fast")),
    ])  # fmt: skip
    first, second = result.usage
    assert (first.usage.cache_read_tokens, first.usage.cache_write_tokens) == (3, 42)  # the breakdown, as ccusage
    # Fast mode keeps the model's own name: the pricing table prices models, not modes.
    assert (second.model, second.usage.cache_write_tokens) == ("claude-opus-4-8", 40)


def test_lines_ccusage_rejects(tmp_path: Path) -> None:
    bad_version = assistant_line("a", "m1", "r1", usage_dict(5, 5))
    bad_version["version"] = "dev"
    null_request = assistant_line("b", "m2", "r2", usage_dict(5, 5))
    null_request["requestId"] = None
    no_time = assistant_line("c", "m3", "r3", usage_dict(5, 5))
    del no_time["timestamp"]
    result = _read(tmp_path, [bad_version, null_request, no_time, assistant_line("d", "m4", "r4", usage_dict(5, 5))])
    assert [r.key for r in result.usage] == ["m4:r4"]
    assert len([e for e in result.events if e.kind == "text"]) == 4  # the messages are still there


def test_remembered_responses_stay_bounded(tmp_path: Path) -> None:
    n = MAX_REMEMBERED + 300
    root = tmp_path / "projects"
    path = root / "-w" / "long.jsonl"
    path.parent.mkdir(parents=True)
    with open(path, "w") as fh:
        for i in range(n):
            fh.write(json.dumps(assistant_line(f"u{i}", f"m{i}", f"r{i}", usage_dict(1, 2, 3, 4))) + "\n")
    adapter = ClaudeCodeAdapter()
    unit = find_unit(adapter, root, path)
    store = Store()
    store.apply(adapter.read(unit, None, now=SETTLED))
    assert len(store.usage) == n
    assert store.session["usage"]["total_tokens"] == 10 * n
    with open(path, "a") as fh:  # a copy of the newest response and a new one, in a later read
        fh.write(json.dumps(assistant_line("x", f"m{n - 1}", f"r{n - 1}", usage_dict(1, 2, 3, 4))) + "\n")
        fh.write(json.dumps(assistant_line("y", "new", "r", usage_dict(1, 1))) + "\n")
    result = adapter.read(unit, store.state, now=SETTLED)
    assert not result.reset and [r.key for r in result.usage] == ["new:r"]
    assert result.session.usage.total_tokens == 10 * n + 2


def test_resume_replays_share_keys_across_files(corpus: Path) -> None:
    """dag_resume.jsonl replays dag_simple's prefix (same message ids and request ids) before its
    own turn: the replayed responses get the same keys, so the index counts them once."""
    root = corpus / "claude-code/claude-code-log/projects"
    first = read_path(root, root / "-synthetic-claude-code-log-test-data/dag_simple.jsonl")
    resumed = read_path(root, root / "-synthetic-claude-code-log-test-data/dag_resume.jsonl")
    assert [r.key for r in first.usage] == ["b:req_1", "d:req_2"]
    assert [r.key for r in resumed.usage] == ["b:req_1", "d:req_2", "g:req_3"]
    everything = {r.key: r.usage.total_tokens for r in [*first.usage, *resumed.usage]}
    assert sum(everything.values()) == 15 + 23 + 30
