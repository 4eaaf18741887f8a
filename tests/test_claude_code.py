"""The Claude Code adapter on real session files: facts checked by eye in the corpus files."""

from __future__ import annotations

import json
from pathlib import Path

from agtaild.adapters import get_adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.model import ParentRef, Session
from tests.claude_code_helpers import SETTLED, by_tool_use_id, read_path

REAL = "real/claude-2.1.197/projects"
DEMO = "-tmp-rt-claude-home-src-demo-app"
LOG = "claude-code/claude-code-log/projects"
SPOTTER = "claude-code/spotter/projects"
SPOTTER_MAIN = "-home-USER-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
WORKTREES = "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1"


def test_registered_with_roots_and_samples(corpus: Path) -> None:
    adapter = get_adapter("claude-code")
    assert isinstance(adapter, ClaudeCodeAdapter)
    assert "CLAUDE_CONFIG_DIR" in adapter.env_vars
    for sample in adapter.sample_roots:
        assert (corpus / sample).is_dir(), sample


def test_default_roots(tmp_path: Path) -> None:
    adapter = ClaudeCodeAdapter()
    home = tmp_path
    assert adapter.default_roots({}, home) == [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]
    env = {"CLAUDE_CONFIG_DIR": f"{tmp_path}/work, {tmp_path}/alt/projects"}
    assert adapter.default_roots(env, home) == [tmp_path / "work" / "projects", tmp_path / "alt" / "projects"]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert adapter.default_roots(env, home)[1] == tmp_path / "xdg" / "claude" / "projects"


def test_discovery_layouts(corpus: Path) -> None:
    adapter = ClaudeCodeAdapter()
    units = {Path(u.path).name: u for u in adapter.discover(corpus / LOG)}
    # 0-byte session files are not sessions; journal.jsonl and workflow JSON are not transcripts.
    assert "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl" not in units
    assert "journal.jsonl" not in units
    # 2.1.x subagent: its own unit, with the .meta.json among its files.
    sub = units["agent-a36efb2a1231c41e2.jsonl"]
    assert sub.hints["parent_id"] == "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    assert [Path(f).name for f in sub.files] == ["agent-a36efb2a1231c41e2.jsonl", "agent-a36efb2a1231c41e2.meta.json"]
    # 2.0.x flat subagent (parent known only from the lines) and workflow agents.
    assert units["agent-ea02459f.jsonl"].hints["subagent"] is True
    workflow = units["agent-ag000002.jsonl"]
    assert workflow.hints["workflow"] == "wf_demo01"
    assert workflow.hints["parent_id"] == "11110000-0000-4000-8000-000000000001"
    assert len(units) == 93  # the non-empty *.jsonl files but journal.jsonl


def test_plain_session_from_the_real_cli(corpus: Path) -> None:
    root = corpus / REAL
    result = read_path(root, root / DEMO / "cd61be5e-6fcd-4c16-b5d5-281dd40378d1.jsonl")
    s = result.session
    assert s.first_prompt == (
        "Create hello.py with a greet() function, run it, and add a Japanese greeting. [[S:claude/basic]]"
    )
    assert s.title == s.first_prompt
    assert (s.cwd, s.project, s.git_branch, s.version) == ("/tmp/rt/claude/home/src/demo-app", "demo-app", "main", "2.1.197")
    assert (s.origin, s.programmatic, s.models) == ("sdk-cli", True, ["claude-opus-4-8"])
    assert (s.started, s.ended) == ("2026-11-30T00:28:10.328Z", "2026-11-30T00:28:10.943Z")
    # One user prompt, two assistant texts; the queue-operation and last-prompt lines are metadata.
    assert s.messages == 3
    acct = s.accounting
    assert (acct.lines, acct.events, acct.merged, acct.metadata, acct.skipped, acct.bad) == (24, 12, 7, 5, 0, 0)
    # Lines 6-8 are one API response split over three lines: three events, one usage record.
    first_response = [e for e in result.events if e.source["line"] in (6, 7, 8)]
    assert [e.kind for e in first_response] == ["thinking", "text", "tool_use"]
    keys = [u.key for u in result.usage]
    assert keys.count("msg_mock6947b0f8c3834523984a65b4:req_d5255f4cdab64f6bb5be7f79") == 1
    assert len(keys) == 8  # eight API responses over eleven assistant lines
    assert all(e.uuid for e in result.events)
    assert result.events[2].parent_uuid == result.events[1].uuid


def test_tool_results_merge_into_their_tool_use(corpus: Path) -> None:
    root = corpus / REAL
    result = read_path(root, root / "-tmp-rt-claude-home-src-hooked-app/d257ca0a-dc0a-4e79-b042-64c0b55eefcd.jsonl")
    bash = by_tool_use_id(result, "toolu_mockb04beaa5107e443fad59bb15")
    assert bash.tool == "Bash"
    assert bash.input["command"] == "echo hook-test > hooked.txt && cat hooked.txt"
    assert bash.result == "hook-test"
    assert bash.is_error is False
    assert bash.extra["tool_use_result"]["stdout"] == "hook-test"
    write = by_tool_use_id(result, "toolu_mockcf0da057ea434bbf9d4180ff")
    assert write.result.startswith("File created successfully at: /tmp/rt/claude/home/src/hooked-app/notes.md")
    assert not [e for e in result.events if e.kind == "tool_result"]
    assert result.session.accounting.merged == 2


def test_hook_events_with_their_tool(corpus: Path) -> None:
    root = corpus / REAL
    result = read_path(root, root / "-tmp-rt-claude-home-src-hooked-app/d257ca0a-dc0a-4e79-b042-64c0b55eefcd.jsonl")
    hooks = [(e.hook.event, e.hook.tool, e.hook.command, e.text) for e in result.events if e.kind == "hook" and e.hook]
    assert hooks == [
        ("SessionStart", None, "echo 'session-start hook: welcome'", "session-start hook: welcome"),
        ("UserPromptSubmit", None, "echo 'prompt hook: 追加コンテキスト (extra context)'", "prompt hook: 追加コンテキスト (extra context)"),
        ("PreToolUse", "Bash", "echo 'pre-bash hook ok'", "pre-bash hook ok"),
        ("PostToolUse", "Bash", "echo 'post-tool hook: done'", "post-tool hook: done"),
        ("PostToolUse", "Write", "echo 'post-tool hook: done'", "post-tool hook: done"),
    ]


def test_legacy_typeless_hook_lines(corpus: Path) -> None:
    """1.0.56: "Running PostToolUse:Edit..." and "... [uv run ruff format] completed ..." lines."""
    root = corpus / LOG
    path = root / "-Users-dain-workspace-claude-code-log-sample/12a546d1-83a7-49a6-abba-5400db340b43.jsonl"
    result = read_path(root, path)
    hooks = [e for e in result.events if e.kind == "hook" and e.tool_use_id == "toolu_01WNpswoNc7ESvLcau8ygDnH"]
    assert [(h.hook.event, h.hook.tool, h.hook.command) for h in hooks] == [
        ("PostToolUse", "Edit", None),
        ("PostToolUse", "Edit", "uv run ruff format"),
    ]
    assert hooks[1].text == "PostToolUse:Edit [uv run ruff format] completed successfully: 36 files left unchanged"
    assert by_tool_use_id(result, "toolu_01WNpswoNc7ESvLcau8ygDnH").tool == "Edit"


def test_spotter_compaction_progress_hooks_and_subagent_tag(corpus: Path) -> None:
    root = corpus / SPOTTER
    result = read_path(root, root / SPOTTER_MAIN)
    s = result.session
    assert s.compactions == 1
    boundary = next(e for e in result.events if e.subtype == "compact_boundary")
    assert boundary.kind == "system"
    assert boundary.extra["compactMetadata"] == {"trigger": "manual", "preTokens": 142431}
    summary = next(e for e in result.events if e.kind == "summary")
    assert summary.text.startswith("This session is being continued from a previous conversation that ran out of context.")
    assert s.title == (
        "Work on bead spotter-4te. Run bd show spotter-4te to see the issue details and bd ready to find "
        "available subtasks. Start with the first ready task."
    )
    task = by_tool_use_id(result, "toolu_01Hf8v1Za7y4af8VUwSR4CXU")
    assert task.tool == "Task"
    assert task.extra["subagent"] == "agent-aac57f5"
    progress_hooks = [e for e in result.events if e.subtype == "hook_progress" and e.tool_use_id == task.tool_use_id]
    assert {(e.hook.event, e.hook.tool) for e in progress_hooks} == {("PostToolUse", "Task")}
    assert "${CLAUDE_PLUGIN_ROOT}/scripts/tool-call-capture.sh" in {e.hook.command for e in progress_hooks}
    # bash_progress lines only stream what the tool result holds in full.
    assert s.accounting.skipped == 249
    assert s.accounting.balanced()


def test_subagent_links_to_the_spawning_tool_use(corpus: Path) -> None:
    root = corpus / LOG
    adapter = ClaudeCodeAdapter()
    child = read_path(root, root / WORKTREES / "subagents/agent-a36efb2a1231c41e2.jsonl", adapter).session
    assert child.id == "agent-a36efb2a1231c41e2"
    assert child.parent == ParentRef(
        agent="claude-code", id="ef958aa1-0e93-49f0-bb71-150f63befcd1", tool_use_id="toolu_017y4gSjMWeQ3L2DAKiygU2y"
    )
    assert child.extra["description"] == "Round 2: alice comparison"
    assert child.resumable is False
    assert adapter.resume(child) is None
    parent = read_path(root, root / f"{WORKTREES}.jsonl", adapter)
    spawn = by_tool_use_id(parent, "toolu_017y4gSjMWeQ3L2DAKiygU2y")
    assert spawn.tool == "Agent"
    assert spawn.extra["subagent"] == child.id


def test_subagent_links_in_other_versions(corpus: Path) -> None:
    real = corpus / REAL
    child = read_path(real, real / DEMO / "77734736-bfec-415b-bcc2-49975539e98b/subagents/agent-abeadf394adf045da.jsonl")
    assert child.session.parent == ParentRef(
        agent="claude-code", id="77734736-bfec-415b-bcc2-49975539e98b", tool_use_id="toolu_mock92219ede43e14397a6fdded8"
    )
    assert child.session.first_prompt.startswith("Count the lines of hello.py in the current directory")
    spotter = corpus / SPOTTER
    child = read_path(spotter, spotter / SPOTTER_MAIN.replace(".jsonl", "/subagents/agent-aac57f5.jsonl"))
    assert child.session.parent.tool_use_id == "toolu_01Hf8v1Za7y4af8VUwSR4CXU"
    log = corpus / LOG
    flat = read_path(log, log / "-Users-dain-workspace-coderabbit-review-helper/agent-ea02459f.jsonl").session
    assert flat.parent == ParentRef(
        agent="claude-code", id="cb2e607c-c758-415a-8b45-c49e4631906a", tool_use_id="toolu_01HD7PpSCWhP2gP8dXvJiyZN"
    )
    warmup = read_path(log, log / "-Users-dain-workspace-coderabbit-review-helper/agent-0c78cdae.jsonl").session
    assert warmup.first_prompt == "Warmup"
    assert warmup.parent is not None and warmup.parent.tool_use_id is None


def test_inline_sidechain_stays_in_its_session(corpus: Path) -> None:
    """1.0.x: a Task subagent's lines sit in the session file with isSidechain true."""
    root = corpus / LOG
    result = read_path(root, root / "-synthetic-claude-code-log-test-data/sidechain.jsonl")
    sidechain = [e for e in result.events if e.sidechain]
    assert len(sidechain) == 6
    assert sidechain[0].text.startswith("I need to debug a failing test in the claude-code-log project.")
    # The subagent's prompt is not the session's first prompt.
    assert result.session.first_prompt is None
    assert result.session.parent is None


def test_titles(corpus: Path) -> None:
    sessions = corpus / "claude-code/agent-sessions/projects"
    small = read_path(sessions, sessions / "-tmp-agent-sessions-stage0-2026-07/small.jsonl").session
    assert small.title == "Stage0 small fixture"  # custom-title beats ai-title and summary
    log = corpus / LOG
    titled = read_path(log, log / "-synthetic-claude-code-log-test-data/representative_messages.jsonl").session
    assert titled.title.startswith("User learned about Python decorators, including basic decorators")
    # fe869ecb starts with 15 summaries whose leaves are in other sessions: not its title.
    resumed = read_path(log, log / "-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl")
    assert resumed.session.title == "Hey Claude, can you please add a Github Action to run tests and linting? You can test it with `act`."
    assert len([e for e in resumed.events if e.kind == "summary"]) == 15
    # Only a slash command and its injected expansion: the command is the title of last resort.
    viewer = corpus / "claude-code/claude-code-viewer/projects"
    init = read_path(viewer, viewer / "sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl").session
    assert (init.first_prompt, init.title) == (None, "/init")


def test_injected_user_text_is_system(corpus: Path) -> None:
    log = corpus / LOG
    result = read_path(log, log / "-Users-dain-workspace-claude-code-log-sample/326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl")
    first_user = [e for e in result.events if e.role == "user"][:3]
    assert [(e.kind, e.subtype) for e in first_user] == [("system", "meta"), ("system", "bash"), ("system", "bash")]
    assert first_user[0].text.startswith("Caveat: The messages below were generated by the user")
    assert first_user[1].text == "<bash-input>uv run ty check</bash-input>"
    assert result.session.first_prompt == "please fix these"


def test_images_become_placeholders(corpus: Path) -> None:
    log = corpus / LOG
    result = read_path(log, log / "-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl")
    image = next(e for e in result.events if e.subtype == "image")
    assert image.text == "[image: image/png]"
    assert image.extra["media"] == {"type": "image", "source_type": "base64", "media_type": "image/png", "base64_chars": 197988}
    assert "base64" not in json.dumps([e.text for e in result.events])


def test_interrupted_ending_and_cwd_changes(corpus: Path) -> None:
    spotter = corpus / SPOTTER
    short = read_path(spotter, spotter / "-home-marco-projects-spotter/short.jsonl").session
    assert short.ending == "interrupted"
    viewer = corpus / "claude-code/claude-code-viewer/projects"
    moved = read_path(viewer, viewer / "sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").session
    assert moved.cwd == "/path/to/Demo"
    assert moved.extra["cwds"] == ["/path/to/Demo/todo-app", "/path/to/Demo/todo-app/types"]


def test_every_corpus_file_reads_and_balances(corpus: Path) -> None:
    adapter = ClaudeCodeAdapter()
    sessions = 0
    for sample in adapter.sample_roots:
        for unit in adapter.discover(corpus / sample):
            result = adapter.read(unit, None, now=SETTLED)
            acct = result.session.accounting
            nonblank = sum(1 for line in Path(unit.path).read_bytes().split(b"\n") if line.strip())
            assert acct.balanced() and acct.lines == nonblank, unit.path
            assert acct.bad == 0 and not result.session.truncated, unit.path
            assert [e.seq for e in result.events] == list(range(len(result.events))), unit.path
            assert not [e for e in result.events if e.kind == "unknown"], unit.path
            sessions += 1
    assert sessions == 117


def test_resume_command(corpus: Path) -> None:
    adapter = ClaudeCodeAdapter()
    root = corpus / REAL
    session = read_path(root, root / DEMO / "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", adapter).session
    command = adapter.resume(session)
    assert command is not None
    assert command.argv == ["claude", "--resume=2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"]
    assert command.cwd == "/tmp/rt/claude/home/src/demo-app"
    assert adapter.resume(Session(agent="claude-code", id="agent-x", parent=ParentRef(agent="claude-code", id="p"))) is None


def _write(path: Path, records: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _assistant(uuid: str, message: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "type": "assistant", "uuid": uuid, "timestamp": "2026-01-01T00:00:01.000Z", "sessionId": "s",
        "version": "2.1.197", "message": {"role": "assistant", "type": "message", **message}, **extra,
    }  # fmt: skip


def test_api_error_limit_and_unknown_records(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    usage = {"input_tokens": 10, "output_tokens": 4096, "cache_read_input_tokens": 0}
    path = _write(root / "-w" / "e1.jsonl", [
        {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "Write a long essay"}},
        _assistant("a1", {"id": "msg_1", "model": "claude-opus-4-8", "content": [{"type": "text", "text": "Once upon"}],
                          "stop_reason": "max_tokens", "usage": usage}, requestId="req_1"),
        {"type": "brand-new-record", "payload": {"x": 1}},
        _assistant("a2", {"id": "msg_2", "model": "claude-opus-4-8", "content": [{"type": "hologram", "data": "?"}],
                          "stop_reason": "max_tokens", "usage": usage}, requestId="req_2"),
    ])  # fmt: skip
    result = read_path(root, path)
    assert result.session.ending == "limit"
    unknown = [e for e in result.events if e.kind == "unknown"]
    assert [u.raw for u in unknown] == [{"type": "brand-new-record", "payload": {"x": 1}}, {"type": "hologram", "data": "?"}]
    assert [u.key for u in result.usage] == ["msg_1:req_1", "msg_2:req_2"]

    error_line = _assistant("a3", {
        "id": "c0ffee", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 400 invalid model"}],
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }, isApiErrorMessage=True, apiErrorStatus=400)  # fmt: skip
    path = _write(root / "-w" / "e2.jsonl", [
        {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "hi"}},
        error_line,
    ])  # fmt: skip
    result = read_path(root, path)
    error = result.events[-1]
    assert (error.kind, error.subtype, error.text) == ("system", "api_error", "API Error: 400 invalid model")
    assert error.extra["apiErrorStatus"] == 400
    assert result.usage == [] and result.session.models == []
    assert result.session.ending == "error"
