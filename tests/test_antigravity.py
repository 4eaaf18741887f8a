"""Google Antigravity: CLI step logs and IDE brain artifacts (tests/corpus/antigravity: the
agent-sessions peer fixtures and hand-made samples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters.antigravity import AntigravityAdapter
from agtaild.cli import main
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

CORPUS = Path(__file__).parent / "corpus" / "antigravity"
CLI = CORPUS / "handmade" / "antigravity-cli"
IDE = CORPUS / "handmade" / "antigravity"
PEER_CLI = CORPUS / "agent-sessions" / "antigravity-cli"
PEER_IDE = CORPUS / "agent-sessions" / "antigravity"
CID = "6f2b8d41-9c3e-4a57-b1d0-e8f7a6c5b4d3"
IID = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f2a3b4c5d"
LATER = 4_000_000_000.0


def _read(root: Path) -> dict:
    adapter = AntigravityAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_cli_steps_prompts_thinking_calls_and_their_outcomes() -> None:
    r = _read(CLI)[CID]
    s = r.session
    assert s.title == "npm test fails in demo-app; fix it and write NOTES.md" and s.models == [
        "Gemini 3.5 Pro (High)"
    ]
    log = CLI / "brain" / CID / ".system_generated" / "logs" / "transcript_full.jsonl"
    assert s.path == str(log)  # the full log, not the shorter transcript.jsonl beside it
    assert s.accounting.lines == len(log.read_text().splitlines()) and s.accounting.balanced()
    assert s.truncated and s.bad_lines == 1 and s.compactions == 1
    user = [e for e in r.events if e.kind == "text" and e.role == "user"]
    assert [e.text for e in user] == [
        "npm test fails in demo-app; fix it and write NOTES.md",
        "stop the watcher",
    ]
    assert "ADDITIONAL_METADATA" in user[0].extra["context"]
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("view_file", False), ("run_command", True), ("replace_file_content", False), ("write_to_file", False), ("run_command", False)
    ]  # fmt: skip
    assert tools[1].input == {"CommandLine": "npm test", "Cwd": "/home/dev/demo-app", "WaitMsBeforeAsync": 5000,
                              "toolAction": "Running the tests", "toolSummary": "Test run"}  # fmt: skip
    assert tools[0].result.startswith("File Path: `file:///home/dev/demo-app/src/sum.js`")  # step stamps cut
    assert "expected 5, received 6" in tools[1].result and tools[1].extra["step_type"] == "RUN_COMMAND"
    assert tools[3].input["Overwrite"] is False
    assert tools[3].extra["edit"] == {
        "files": [
            {"path": "/home/dev/demo-app/NOTES.md", "op": "create", "hunks": [], "numbered": False, "cut": 0}
        ]
    }
    assert tools[4].extra["running"] is True
    assert [e.text for e in r.events if e.kind == "thinking"][1] == "Fix the return and write the notes."
    assert r.usage == [] and s.usage.total_tokens == 0  # the log holds no usage


def test_peer_fixtures_read_whole() -> None:
    read = _read(PEER_CLI)
    small = read["30c097e7-e1bd-4cd6-9d55-f7e76c7cd3e9"]
    s = small.session
    assert s.accounting.lines == 19 and s.accounting.balanced() and s.bad_lines == 0
    assert s.title == "List the files." and s.models == ["Gemini 3.5 Flash (Medium)"] and s.compactions == 1
    calls = [e for e in small.events if e.kind == "tool_use"]
    assert [(c.tool, c.input) for c in calls] == [
        ("list_dir", {"DirectoryPath": "/tmp/repo", "toolSummary": "Listing contents"}),
        ("write_file", {"TargetFile": "/tmp/repo/notes.md", "toolSummary": "Creating notes"}),
    ]
    assert calls[0].result == '{"name":"a.txt"}\n{"name":"b.txt"}\n'
    assert calls[1].extra["edit"]["files"][0]["path"] == "/tmp/repo/notes.md"
    orphans = [e.tool for e in small.events if e.kind == "tool_result"]
    assert orphans[:3] == ["view_file", "run_command", "search_web"]  # outcomes with no call before them
    assert [e.subtype for e in small.events if e.kind == "system"] == ["system_message", "system_message"]
    browse = read["48d1b6f3-3f8f-4df9-bb30-7127b21279db"].session
    assert browse.title == "Go" and browse.accounting.events == 3
    (ide,) = _read(PEER_IDE).values()
    assert ide.session.title == "Antigravity fixture" and ide.events[0].extra["artifact"] == "walkthrough.md"


def test_ide_conversation_is_its_artifacts_and_names_the_encrypted_body() -> None:
    r = _read(IDE)[IID]
    s = r.session
    assert s.title == "Add a range() helper" and s.extra["mode"] == "ide" and s.resumable is False
    assert [e.extra["artifact"] for e in r.events] == ["task.md", "implementation_plan.md", "walkthrough.md"]
    assert all(e.kind == "text" and e.subtype == "artifact" for e in r.events) and "i < n" in r.events[2].text
    body = IDE / "conversations" / f"{IID}.pb"
    assert s.extra["encrypted_conversation"] == {"path": str(body), "bytes": body.stat().st_size}
    adapter = AntigravityAdapter()
    (unit,) = adapter.discover(IDE)
    assert str(body) in unit.files and adapter.resume(s) is None


def test_resume_roots_and_endings() -> None:
    adapter = AntigravityAdapter()
    s = _read(CLI)[CID].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["agy", "--conversation", CID]
    assert adapter.default_roots({}, Path("/h")) == [
        Path("/h/.gemini/antigravity-cli"),
        Path("/h/.gemini/antigravity"),
    ]
    assert adapter.default_roots({"GEMINI_CLI_HOME": "/g"}, Path("/h"))[0] == Path(
        "/g/.gemini/antigravity-cli"
    )
    assert s.ending is None  # the torn last prompt is not a complete step


def test_steps_equal_one_read(tmp_path: Path) -> None:
    adapter = AntigravityAdapter()
    src = CLI / "brain" / CID / ".system_generated" / "logs" / "transcript_full.jsonl"
    dst = (
        tmp_path / "antigravity-cli" / "brain" / CID / ".system_generated" / "logs" / "transcript_full.jsonl"
    )
    dst.parent.mkdir(parents=True)
    dst.write_bytes(src.read_bytes())
    (unit,) = list(adapter.discover(tmp_path / "antigravity-cli"))
    stepped = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes(), 2), unit, settled=True)
    once = read_once(adapter, unit, now=dst.stat().st_mtime + 100.0)
    assert stepped.snapshot() == once.snapshot()


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots",
            "--root", f"antigravity={CLI}", "--root", f"antigravity={IDE}"]  # fmt: skip
    assert main([*args, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(row["id"] for row in listed) == sorted([CID, IID]) and {row["agent"] for row in listed} == {
        "antigravity"
    }
    assert main([*args, "search", "watcher", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {CID}
    assert main([*args, "show", IID]) == 0
    assert "Walkthrough" in capsys.readouterr().out


def test_a_cli_conversation_without_its_log_yet_is_its_artifacts(tmp_path: Path) -> None:
    folder = tmp_path / "antigravity-cli" / "brain" / CID
    folder.mkdir(parents=True)
    (folder / "task.md").write_bytes((CLI / "brain" / CID / "task.md").read_bytes())
    (r,) = _read(tmp_path / "antigravity-cli").values()
    assert (
        r.session.extra["mode"] == "cli"
        and r.session.title == "Fix the failing test"
        and r.session.resumable is False
    )
    assert "encrypted_conversation" not in r.session.extra and [e.extra["artifact"] for e in r.events] == [
        "task.md"
    ]
