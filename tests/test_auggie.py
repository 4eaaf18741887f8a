"""Auggie (Augment Code) on hand-made session files in 0.36.0's shapes (tests/corpus/auggie)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters.auggie import AuggieAdapter
from agtaild.cli import main
from agtaild.model import ParentRef, Session

ROOT = Path(__file__).parent / "corpus" / "auggie" / "synthetic-agtail" / ".augment"
LATER = 4_000_000_000.0
BASIC = "5b1c7f0e-2d4a-4c61-9f7e-0a1b2c3d4e5f"
COMPACT = "9e8d7c6b-5a49-4382-a716-151413121110"
TORN = "0c0c0c0c-1111-4222-8333-444455556666"


def _read(root: Path = ROOT) -> dict:
    adapter = AuggieAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _doc(sid: str) -> dict:
    return json.loads((ROOT / "sessions" / f"{sid}.json").read_text())


def test_sessions_backups_and_temp_files() -> None:
    read = _read()
    assert sorted(read) == sorted([BASIC, f"{BASIC}.subagent-1", COMPACT, TORN])  # no -backup1, no .tmp
    for sid in (BASIC, COMPACT):
        acct = read[sid].session.accounting
        doc = _doc(sid)
        assert (
            acct.lines == len(doc["chatHistory"]) + len(doc.get("subAgents", []))
            and acct.balanced()
            and acct.bad == 0
        )
    torn = read[TORN].session
    assert (torn.bad_lines, torn.accounting.lines, torn.truncated) == (1, 1, True)


def test_text_thinking_tools_results_and_edits() -> None:
    r = _read()[BASIC]
    s = r.session
    assert (s.title, s.cwd, s.project, s.models) == (
        "Fix the gamma test",
        "/home/dev/gamma-app",
        "gamma-app",
        ["claude-sonnet-4-5"],
    )
    assert (s.started, s.ended, s.ending) == ("2026-12-01T20:40:00.000Z", "2026-12-01T20:41:30.500Z", None)
    assert s.first_prompt and s.first_prompt.startswith("[[S:auggie/basic]]")
    assert [e.text for e in r.events if e.kind == "thinking"] == [
        "The user wants me to inspect the project first."
    ]
    texts = [e.text for e in r.events if e.kind == "text" and e.role == "assistant"]
    assert texts[0] == "I'll start by viewing the project."  # two streamed text nodes are one text
    users = [e.text for e in r.events if e.kind == "text" and e.role == "user"]
    assert len(users) == 2 and users[1].startswith(
        "[[S:auggie/continue]]"
    )  # tool-result exchanges are no prompts
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("view", False), ("launch-process", True), ("str-replace-editor", False), ("launch-process", False),
        ("save-file", False), ("sub-agent-research", False),
    ]  # fmt: skip
    assert tools[1].input["command"] == "python -m pytest -q" and tools[1].extra["exit_code"] == 1
    assert "1 failed" in tools[1].result and tools[3].extra["exit_code"] == 0
    edit = tools[2].extra["edit"]["files"][0]
    assert (edit["path"], edit["numbered"], edit["hunks"][0]["lines"]) == (
        "src/gamma.py",
        True,
        ["-    return x + 2", "+    return x * 2"],
    )
    assert edit["hunks"][0]["old_start"] == 2
    assert tools[4].extra["edit"]["files"][0]["op"] == "create"
    assert not any(e.kind == "tool_result" for e in r.events)  # every result merged into its call


def test_usage_is_the_token_usage_nodes_per_exchange() -> None:
    r = _read()[BASIC]
    nodes = [
        n["token_usage"] for item in _doc(BASIC)["chatHistory"] for n in item["exchange"]["response_nodes"] if n["type"] == 10
    ]  # fmt: skip
    u = r.session.usage
    assert u.input_tokens == sum(n["input_tokens"] for n in nodes) == 2180
    assert u.output_tokens == sum(n["output_tokens"] for n in nodes)
    assert u.cache_read_tokens == sum(n["cache_read_input_tokens"] for n in nodes)
    assert u.cache_write_tokens == sum(n["cache_creation_input_tokens"] for n in nodes) == 700
    assert sorted(rec.key for rec in r.usage) == [f"req-a{i}" for i in range(1, 8)]
    assert {rec.model for rec in r.usage} == {"claude-sonnet-4-5"}
    assert sum(1 for e in r.events if e.usage is not None) == 7


def test_a_subagent_run_is_a_child_of_its_call() -> None:
    read = _read()
    child = read[f"{BASIC}.subagent-1"]
    s = child.session
    assert s.parent == ParentRef(agent="auggie", id=BASIC, tool_use_id="toolu_sub_1")
    assert (s.models, s.cwd, s.resumable, s.extra) == (
        ["claude-haiku-4-5"],
        "/home/dev/gamma-app",
        False,
        {"subagent": "research"},
    )
    assert s.title == "research: Find every caller of gamma() in the repository."
    assert [e.tool for e in child.events if e.kind == "tool_use"] == ["grep-search"]
    assert s.usage.input_tokens == 460 and s.started == "2026-12-01T20:41:10.000Z"
    spawn = next(e for e in read[BASIC].events if e.tool_use_id == "toolu_sub_1")
    assert spawn.result.startswith("Sub-agent research finished")
    assert AuggieAdapter().resume(s) is None


def test_compaction_interruption_and_an_unknown_node() -> None:
    r = _read()[COMPACT]
    s = r.session
    assert (s.title, s.compactions, s.ending, s.cwd) == (
        "gamma benchmark",
        1,
        "interrupted",
        "/home/dev/gamma-bench",
    )
    summary = next(e for e in r.events if e.kind == "summary")
    assert (
        summary.text.startswith("<summary>The user asked to profile gamma()")
        and summary.extra["dropped"] == 12
    )
    unknown = [e for e in r.events if e.kind == "unknown"]
    assert len(unknown) == 1 and unknown[0].raw["type"] == 42
    edit = next(e for e in r.events if e.tool == "str-replace-editor").extra["edit"]["files"][0]
    assert (
        edit["hunks"][0]["lines"] == ["-print(times)", "+print(sum(times) / len(times))"]
        and edit["hunks"][0]["old_start"] == 9
    )


def test_odd_documents(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "session.json").write_text('{"accessToken": "secret"}')
    doc = _doc(BASIC)
    doc["chatHistory"][2:2] = [7, {"exchange": "x"}]
    doc["subAgents"].append("not a run")
    (sessions / "odd.json").write_text(json.dumps(doc))
    (sessions / "list.json").write_text("[1, 2]")
    (sessions / "empty.json").write_text("")
    read = _read(tmp_path)
    odd = read[BASIC]
    assert odd.session.accounting.balanced() and odd.session.accounting.lines == len(doc["chatHistory"]) + 2
    assert len([e for e in odd.events if e.kind == "unknown"]) == 2
    assert read[f"{BASIC}.subagent-2"].events == [] and read[f"{BASIC}.subagent-2"].session.parent.id == BASIC
    assert read["list"].session.accounting.lines == 1 and read["list"].events[0].kind == "unknown"
    assert "empty" not in read and "session" not in read  # an empty file, the login


def test_roots_and_resume(tmp_path: Path) -> None:
    adapter = AuggieAdapter()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".augment"]
    assert [u.path for u in adapter.discover(ROOT / "sessions")] == [u.path for u in adapter.discover(ROOT)]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "session.json").write_text('{"accessToken": "secret", "tenantURL": "https://t.example"}')
    assert list(adapter.discover(cache)) == []  # the login beside a missing sessions folder is no session
    cmd = adapter.resume(Session(agent="auggie", id=BASIC, cwd="/w"))
    assert cmd is not None and (cmd.argv, cmd.cwd) == (["auggie", f"--resume={BASIC}"], "/w")


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"auggie={ROOT}"]
    assert main([*base, "list", "--json"]) == 0
    listed = {s["id"]: s for s in json.loads(capsys.readouterr().out)["sessions"]}
    assert set(listed) == {BASIC, f"{BASIC}.subagent-1", COMPACT, TORN}
    assert main([*base, "search", "NOTES.md", "--json"]) == 0
    assert BASIC in {h["session"]["id"] for h in json.loads(capsys.readouterr().out)["hits"]}
    assert main([*base, "show", BASIC, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert any(e.get("tool") == "launch-process" and e.get("is_error") for e in shown["events"])
