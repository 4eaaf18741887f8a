"""Codebuff on hand-made chats (tests/corpus/codebuff/handmade), written from the CLI's own
types (cli/src/types/chat.ts, run-state-storage.ts): see tests/corpus/PROVENANCE.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.codebuff import CodebuffAdapter
from agtaild.adapters.codebuff.adapter import started_from_chat_id
from agtaild.cli import main
from tests.conftest import CORPUS

PROJECTS = CORPUS / "codebuff" / "handmade" / "manicode" / "projects"
MAIN, SERVER, TORN, SCRATCH = (
    "2026-11-30T09-15-02.114Z", "2026-11-30T11-02-40.500Z", "2026-12-01T08-00-00.000Z", "2026-12-01T19-29-58.000Z"
)  # fmt: skip
LATER = 4_000_000_000.0


def _read(root: Path = PROJECTS) -> dict:
    adapter = CodebuffAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_every_chat_is_a_session_with_every_message_booked() -> None:
    read = _read()
    assert sorted(read) == sorted([MAIN, SERVER, TORN, SCRATCH])
    for chat_id, r in read.items():
        folder = next(PROJECTS.glob(f"*/chats/{chat_id}"))
        acct = r.session.accounting
        assert acct.balanced(), chat_id
        try:
            messages = json.loads((folder / "chat-messages.json").read_text())
        except ValueError:
            assert acct.bad == 1 and r.session.truncated and not r.events
            continue
        assert acct.lines == len(messages) + (folder / "run-state.json").is_file()


def test_blocks_tools_edits_subagent_and_usage_of_the_main_chat() -> None:
    r = _read()[MAIN]
    s = r.session
    assert s.cwd == "/home/dev/src/demo-app" and s.project == "demo-app"
    assert s.title and s.title.startswith("Rename the greeting") and s.messages == 4
    assert s.started == "2026-11-30T09:15:02.114Z" and s.ended == "2026-11-30T09:16:41.020Z"
    assert s.models == ["anthropic/claude-sonnet-4.5"] and s.ending is None
    kinds = [(e.kind, e.tool) for e in r.events if not e.sidechain]
    assert kinds == [
        ("text", None), ("thinking", None), ("tool_use", "spawn_agent"), ("tool_use", "read_files"),
        ("tool_use", "str_replace"), ("tool_use", "write_file"), ("tool_use", "run_terminal_command"), ("text", None),
        ("text", None), ("tool_use", "run_terminal_command"), ("system", None), ("text", None),
    ]  # fmt: skip
    tools = {e.tool_use_id: e for e in r.events if e.kind == "tool_use"}
    failing, passing = tools["call-term-1"], tools["call-term-2"]
    assert failing.is_error and failing.extra["exit_code"] == 1 and "AssertionError" in failing.result
    assert passing.is_error is False and passing.extra["exit_code"] == 0
    edit = tools["call-edit-1"].extra["edit"]["files"][0]
    assert (
        edit["path"] == "src/hello.ts"
        and "+export const greeting = 'Hello, gamma'" in edit["hunks"][0]["lines"]
    )
    created = tools["call-write-1"].extra["edit"]["files"][0]
    assert created["op"] == "create" and created["path"] == "NOTES.md"
    spawn = tools["call-spawn-1"]
    assert (
        spawn.input["agent_type"] == "file-picker"
        and spawn.result.startswith("src/hello.ts")
        and spawn.is_error is False
    )
    child = [e for e in r.events if e.sidechain]
    assert [(e.kind, e.tool) for e in child] == [("tool_use", "find_files"), ("text", None)]
    assert {e.extra["subagent"] for e in child} == {"agent-fp-1"}
    # usage: the Anthropic-style counters as written; OpenAI-style prompt tokens lose their cached part
    by_key = {u.key: u.usage for u in r.usage}
    assert (
        by_key["msg-a1"].input_tokens,
        by_key["msg-a1"].cache_read_tokens,
        by_key["msg-a1"].cache_write_tokens,
    ) == (1200, 5400, 800)
    assert (
        by_key["msg-a2"].input_tokens,
        by_key["msg-a2"].cache_read_tokens,
        by_key["msg-a2"].output_tokens,
    ) == (600, 2000, 210)
    assert s.usage.total_tokens == 7740 + 2810 and s.usage.output_tokens == 340 + 210
    assert s.extra["credits"] == 4.75 and s.extra["credits_used"] == 4.75


def test_cwd_from_a_bash_folder_usage_from_the_run_state_and_the_error_ending() -> None:
    r = _read()[SERVER]
    s = r.session
    assert s.cwd == "/home/dev/src/demo-app"  # the ancestor of metadata.bashCwd named like the project
    assert s.ending == "error" and r.events[-1].subtype == "error" and "529" in r.events[-1].text
    (record,) = r.usage
    assert record.model == "openai/gpt-5.1" and (record.usage.input_tokens, record.usage.output_tokens) == (
        900,
        120,
    )
    server = next(e for e in r.events if e.tool == "run_terminal_command")
    assert server.is_error and "timed out" in server.result
    ask = next(e for e in r.events if e.tool == "ask_user")
    assert ask.result == [{"questionIndex": 0, "selectedOption": "8080"}]


def test_a_chat_with_no_recorded_folder_has_no_cwd_and_keeps_what_it_does_not_know() -> None:
    r = _read()[SCRATCH]
    s = r.session
    assert s.cwd is None and s.project == "scratch" and s.resumable is False
    assert [e.kind for e in r.events] == ["text", "unknown", "unknown", "text", "system"]
    assert r.events[1].raw == "a stray string where a message belongs"
    assert r.events[2].raw["variant"] == "announcement"
    assert r.usage[0].usage.input_tokens == 300 and s.ending == "error"  # the userError banner
    assert CodebuffAdapter().resume(s) is None


def test_a_torn_file_is_one_bad_record_once_settled_and_is_read_again_while_fresh(tmp_path: Path) -> None:
    from agtaild.errors import AgtailError

    adapter = CodebuffAdapter()
    (unit,) = [u for u in adapter.discover(PROJECTS) if u.path.endswith(TORN)]
    r = adapter.read(unit, None, now=LATER)
    assert (
        r.session.truncated
        and r.session.accounting.bad == 1
        and r.session.started == "2026-12-01T08:00:00.000Z"
    )
    copy = tmp_path / "projects"
    shutil.copytree(PROJECTS, copy)
    (fresh,) = [u for u in adapter.discover(copy) if u.path.endswith(TORN)]
    (Path(fresh.path) / "chat-messages.json").touch()
    with pytest.raises(AgtailError):
        adapter.read(fresh, None)  # just written: the CLI may be rewriting it


def test_resume_continues_the_chat_in_its_project_root_only_on_the_production_build(tmp_path: Path) -> None:
    adapter = CodebuffAdapter()
    s = _read()[MAIN].session
    cmd = adapter.resume(s)
    assert (
        cmd is not None
        and cmd.argv == ["codebuff", f"--continue={MAIN}"]
        and cmd.cwd == "/home/dev/src/demo-app"
    )
    dev = tmp_path / "manicode-dev" / "projects"
    shutil.copytree(PROJECTS, dev)
    (unit,) = [u for u in adapter.discover(dev) if u.path.endswith(MAIN)]
    s_dev = adapter.read(unit, None, now=LATER).session
    assert s_dev.extra["channel"] == "manicode-dev" and adapter.resume(s_dev) is None


def test_default_roots_and_chat_ids() -> None:
    adapter = CodebuffAdapter()
    home = Path("/h")
    assert adapter.default_roots({}, home) == [
        home / ".config" / "manicode" / "projects", home / ".config" / "manicode-dev" / "projects",
        home / ".config" / "manicode-staging" / "projects",
    ]  # fmt: skip
    assert adapter.default_roots({"CODEBUFF_DATA_DIR": "/d/cb"}, home) == [Path("/d/cb/projects")]
    assert adapter.default_roots({"CODEBUFF_DATA_DIR": "/d/cb/projects"}, home) == [Path("/d/cb/projects")]
    assert started_from_chat_id("2025-12-14T10-00-00.000Z") == "2025-12-14T10:00:00.000Z"
    assert started_from_chat_id("notes") is None


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"codebuff={PROJECTS}",
    ]
    assert main([*base, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert {row["id"] for row in listed} == {MAIN, SERVER, TORN, SCRATCH}
    assert main([*base, "search", "gamma", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert {h["session"]["id"] for h in hits} >= {MAIN, SCRATCH}
    assert main([*base, "show", f"codebuff:{MAIN}", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["session"]["cwd"] == "/home/dev/src/demo-app"
    assert any(e["kind"] == "tool_use" and e["tool"] == "str_replace" for e in shown["events"])


def test_found_at_the_default_place(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(PROJECTS, isolated_home / ".config" / "manicode" / "projects")
    assert (
        main(["--no-daemon", "--data-dir", str(tmp_path / "data"), "list", "--agent", "codebuff", "--json"])
        == 0
    )
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 4
