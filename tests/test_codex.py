"""The Codex adapter on the real corpus: facts checked by eye in the files themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import get_adapter
from agtaild.adapters.base import ReadResult
from agtaild.adapters.codex.adapter import CodexAdapter
from agtaild.model import Event, ParentRef, to_builtins

SETTLED = 4_000_000_000.0  # "now" far after every corpus file's mtime: all files are finished
REAL = "real/codex-0.171.0/sessions"
BASIC = "01a229d7-c676-78a1-a3ee-2b022b275b04"
SUB_PARENT = "01a229d7-c8d0-7813-aee6-623c81e2db6a"
SUB_CHILD = "01a229d7-c94c-72b3-84af-027dc8581e04"
RESUMED = "01a229d7-cb95-7e11-b052-3e9e4b5154fc"
SPAWN_CALL = "call_mock7394d063381f4da4990f5ea4"


def read_root(corpus: Path, root: str) -> dict[str, ReadResult]:
    adapter = CodexAdapter()
    return {r.session.id: r for r in (adapter.read(u, now=SETTLED) for u in adapter.discover(corpus / root))}


def only(events: list[Event], **match: Any) -> Event:
    found = [e for e in events if all(getattr(e, k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [(e.kind, e.tool, e.text) for e in found])
    return found[0]


def tool_by_command(events: list[Event], command: str) -> Event:
    found = [e for e in events if e.kind == "tool_use" and isinstance(e.input, dict) and e.input.get("cmd") == command]
    assert len(found) == 1, command
    return found[0]


def test_registry_and_roots(tmp_path: Path, isolated_home: Path) -> None:
    adapter = get_adapter("codex")
    assert isinstance(adapter, CodexAdapter)
    assert adapter.default_roots({}, isolated_home) == [isolated_home / ".codex" / "sessions"]
    home = tmp_path / "elsewhere"
    assert adapter.default_roots({"CODEX_HOME": str(home)}, isolated_home) == [home / "sessions"]


def test_every_sample_root_reads_balanced_without_crash(corpus: Path) -> None:
    adapter = CodexAdapter()
    files = 0
    for root in adapter.sample_roots:
        assert (corpus / root).is_dir(), root
        for unit in adapter.discover(corpus / root):
            result = adapter.read(unit, now=SETTLED)
            acct = result.session.accounting
            assert acct.balanced(), (unit.path, acct)
            assert acct.bad == 0 and not result.session.truncated, unit.path
            assert acct.lines == sum(1 for line in Path(unit.path).read_bytes().split(b"\n") if line.strip())
            files += 1
    assert files == 14


def test_real_basic_session(corpus: Path) -> None:
    result = read_root(corpus, REAL)[BASIC]
    s, events = result.session, result.events
    assert s.title == s.first_prompt == "Create hello.py, run it, add a Japanese greeting. [[S:codex/basic]]"
    assert (s.cwd, s.project, s.git_branch, s.version) == ("/tmp/rt/codex/home/src/demo-app", "demo-app", "main", "0.171.0")
    assert (s.origin, s.programmatic, s.models, s.ending) == ("exec", True, ["gpt-5.5"], None)
    assert s.started == "2026-11-30T00:25:36.641Z" and s.ended == "2026-11-30T00:25:37.085Z"
    # Each visible text is written twice (response_item + item_completed): shown once.
    only(events, kind="text", role="user")
    only(events, kind="text", text="I'll inspect the project first.")
    assert s.messages == 3
    # Injected context is kept, as system events, never as prompts.
    context = only(events, kind="system", subtype="context")
    assert context.text is not None and context.text.startswith("<environment_context>")
    only(events, kind="system", subtype="instructions", role="developer")
    # Shell calls carry their merged output (function_call + CommandExecution + output).
    run = tool_by_command(events, "python3 hello.py")
    assert run.tool == "exec_command" and run.is_error is False
    assert "Hello, world! こんにちは、worldさん" in run.result
    failing = tool_by_command(events, "python3 -c 'import sys; print(\"boom\", file=sys.stderr); sys.exit(3)'")
    assert failing.is_error is True and failing.extra["exit_code"] == 3 and "boom" in failing.result
    patches = [e for e in events if e.tool == "apply_patch"]
    assert len(patches) == 2 and all("Success. Updated the following files:" in e.result for e in patches)
    assert patches[1].input.startswith("*** Begin Patch\n*** Update File: hello.py")
    assert not [e for e in events if e.kind in ("tool_result", "unknown")]
    # Usage: six responses; ccusage reports the same (input 2604, cached 4800, output 336).
    assert len(result.usage) == 6
    u = s.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        2604, 4800, 336, 72, 7740,
    )
    assert {r.model for r in result.usage} == {"gpt-5.5"}
    assert "c6d6bd" not in json.dumps(to_builtins(events[0]))


def test_real_subagent_links_both_ways(corpus: Path) -> None:
    sessions = read_root(corpus, REAL)
    parent, child = sessions[SUB_PARENT], sessions[SUB_CHILD]
    spawn = only(parent.events, kind="tool_use", tool="spawn_agent")
    assert spawn.tool_use_id == SPAWN_CALL
    assert spawn.extra["namespace"] == "multi_agent_v1"
    assert spawn.extra["CollabAgentToolCall"]["receiver_thread_ids"] == [SUB_CHILD]
    assert '"nickname":"Herschel"' in spawn.result
    assert child.session.parent == ParentRef("codex", SUB_PARENT, SPAWN_CALL)
    assert child.session.extra["agent_nickname"] == "Herschel"
    assert child.session.title == (
        "Count the lines of hello.py in the current directory and report the number. [[S:codex/sub-inner]]"
    )
    count = tool_by_command(child.events, "wc -l hello.py")
    assert "6 hello.py" in count.result
    assert child.session.usage.total_tokens == 2580 and parent.session.usage.total_tokens == 3870
    contexts = [e.text.split(">")[0] for e in parent.events if e.subtype == "context" and e.text]
    assert contexts == ["<environment_context", "<subagent_notification"]


def test_real_resumed_session_has_three_turns(corpus: Path) -> None:
    result = read_root(corpus, REAL)[RESUMED]
    prompts = [e.text for e in result.events if e.kind == "text" and e.role == "user"]
    assert prompts == [
        "README を書いてください。 [[S:codex/mt1]]",
        "English and Japanese please. [[S:codex/mt2]]",
        "Double-check it. [[S:codex/mt3]]",
    ]
    assert result.session.title == "README を書いてください。 [[S:codex/mt1]]"
    assert result.session.messages == 6 and len(result.usage) == 5


def test_compacted_envelope_session(corpus: Path) -> None:
    result = read_root(corpus, "codex/agent-history/sessions")["compact-codex-001"]
    s = result.session
    assert (s.compactions, s.git_branch, s.models, s.version) == (1, "feature/api", ["gpt-4.5-turbo"], "0.77.0")
    assert s.first_prompt == "Help me build the API endpoints"
    summary = only(result.events, kind="summary")
    assert summary.text is not None and summary.text.startswith("**Progress + Plan Status**")
    cat = only(result.events, kind="tool_use", input={"command": "cat src/routes.py"})
    assert cat.tool == "shell" and "api = Blueprint('api', __name__)" in cat.result
    prompts = [e.text for e in result.events if e.kind == "text" and e.role == "user"]
    assert prompts[-1] == "Now add the authentication middleware" and len(prompts) == 4


def test_codex_exec_session_with_injected_context(corpus: Path) -> None:
    result = read_root(corpus, "codex/agent-history/sessions")["019e9625-802f-7e91-840a-cfe88d14117a"]
    s = result.session
    assert (s.origin, s.programmatic, s.version, s.title) == ("exec", True, "0.135.0", "[REDACTED_PROMPT]")
    assert [e.subtype for e in result.events if e.kind == "system"] == ["instructions", "context"]
    assert s.accounting.merged == 2  # user_message and agent_message repeat the response_items
    u = s.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.total_tokens) == (1675, 20864, 10, 22549)


def test_peer_catalog_world_state_and_unknown_items(corpus: Path) -> None:
    result = read_root(corpus, "codex/agent-sessions/sessions")["019b2ea4-2a8d-76e2-9cd8-58208e1f2837"]
    s = result.session
    assert (s.title, s.git_branch, s.compactions, s.models) == ("List the files", "main", 1, ["gpt-5.2"])
    unknown = [e.raw["type"] for e in result.events if e.kind == "unknown"]
    assert unknown == ["tool_call", "tool_result"]  # the peer's invented item types, kept raw
    assert result.usage == [] and s.accounting.metadata == 4  # meta, turn_context, world_state, null token_count


def test_claude_code_log_tools_reasoning_and_future_records(corpus: Path) -> None:
    result = read_root(corpus, "codex/claude-code-log/sessions")["11111111-1111-4111-8111-111111111111"]
    events = result.events
    find = only(events, kind="tool_use", tool="exec_command")
    assert find.input == {"cmd": "find . -maxdepth 1 -type f"} and find.result == "./alpha.txt\n./beta.txt"
    patch = only(events, kind="tool_use", tool="apply_patch")
    assert patch.result == "Done!" and patch.input.startswith("*** Begin Patch")
    mcp = only(events, kind="tool_use", tool="mcp__synthetic__lookup")
    assert mcp.input == {"query": "fixture"} and mcp.result == '{"status":"ok"}'
    thinking = only(events, kind="thinking")
    assert thinking.text == "I will inspect the synthetic directory."
    assert "SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER" not in json.dumps(to_builtins(events))
    future = only(events, kind="unknown")
    assert future.raw == {"timestamp": "2026-01-02T03:04:16.000Z", "type": "future_synthetic_record",
                          "payload": {"safe": "ignored"}}
    assert result.session.accounting.merged == 5  # 2 repeated texts + 3 outputs


def test_claude_code_log_spawned_child_and_archived(corpus: Path) -> None:
    sessions = read_root(corpus, "codex/claude-code-log/sessions")
    parent = sessions["22222222-2222-4222-8222-222222222222"]
    spawn = only(parent.events, kind="tool_use", tool="spawn_agent")
    assert spawn.extra["collab_tool_call"]["new_thread_id"] == "33333333-3333-4333-8333-333333333333"
    child = sessions["33333333-3333-4333-8333-333333333333"]
    assert child.session.parent == ParentRef("codex", "22222222-2222-4222-8222-222222222222", "call-spawn-001")
    copied = [e.text or e.tool for e in child.events if e.extra.get("copied")]
    assert copied == ["Spawn a synthetic researcher.", "spawn_agent"]  # timestamps older than its meta
    assert child.session.title == "Inspect fixtures."
    archived = sessions["55555555-5555-4555-8555-555555555555"]
    assert archived.session.archived is True and archived.session.title == "Archived synthetic prompt."
    assert not any(r.session.archived for k, r in sessions.items() if not k.startswith("5555"))


def test_codexbar_fork_family_counts_the_copied_usage_once(corpus: Path) -> None:
    sessions = read_root(corpus, "codex/codexbar/harness-smoke/codex-home/sessions")
    parent, child = sessions["parent-session"], sessions["child-session"]
    assert child.session.forked_from == ParentRef("codex", "parent-session")
    assert child.session.archived is True and parent.session.archived is False
    assert (parent.session.usage.input_tokens, parent.session.usage.output_tokens) == (10, 1)
    # The child's first token_count is the copy of the parent's; only its second is its own.
    assert (child.session.usage.input_tokens, child.session.usage.output_tokens) == (5, 1)
    assert [r.key for r in child.usage] == ["child-session:4"]
    assert child.session.models == ["openai/gpt-5.5"]


def test_resume_command(corpus: Path) -> None:
    adapter = CodexAdapter()
    result = read_root(corpus, REAL)[BASIC]
    command = adapter.resume(result.session)
    assert command is not None
    assert command.argv == ["codex", "resume", "--", BASIC] and command.cwd == "/tmp/rt/codex/home/src/demo-app"


@pytest.mark.parametrize("root", CodexAdapter.sample_roots)
def test_no_injected_text_becomes_a_prompt(corpus: Path, root: str) -> None:
    for result in read_root(corpus, root).values():
        for event in result.events:
            if event.kind == "text" and event.role == "user":
                assert not (event.text or "").lstrip().startswith(("<environment_context>", "<user_instructions>"))
        title = result.session.title or ""
        assert not title.startswith("<")
