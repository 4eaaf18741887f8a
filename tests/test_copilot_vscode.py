"""VS Code Copilot Chat adapter, on three real sessions of Copilot Chat 0.3x
(tests/corpus/copilot-vscode/git-ai) and the hand-made snapshot and op log
(tests/corpus/copilot-vscode/synthetic-agtail)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.copilot_vscode.adapter import CopilotVscodeAdapter
from agtaild.adapters.copilot_vscode.ops import _Missing, apply_op
from agtaild.model import Session

WS = "copilot-vscode/synthetic-agtail/.config/Code/User/workspaceStorage"
CHATS = f"{WS}/9c1f0e2d3b4a59687766554433221100/chatSessions"
SNAP = "0b7e4a3c-1d2f-4e5a-9b6c-7d8e9f0a1b2c"
LOG = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> CopilotVscodeAdapter:
    return CopilotVscodeAdapter()


def read_all(adapter: CopilotVscodeAdapter, root: Path) -> dict[str, object]:
    return {Path(u.path).stem: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def test_roots_cover_every_editor_host(adapter: CopilotVscodeAdapter, tmp_path: Path) -> None:
    roots = [str(r) for r in adapter.default_roots({}, tmp_path)]
    assert str(tmp_path / ".config/Code/User/workspaceStorage") in roots
    assert str(tmp_path / ".config/Cursor/User/workspaceStorage") in roots
    assert str(tmp_path / ".config/Code/User/globalStorage/emptyWindowChatSessions") in roots


def test_snapshot_session(adapter: CopilotVscodeAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / WS)[SNAP]
    s: Session = res.session  # type: ignore[attr-defined]
    assert (s.title, s.cwd, s.project, s.models) == (
        "Speed up the session scan",
        "/home/dev/src/agtail-demo",
        "agtail-demo",
        ["copilot/gpt-4.1"],
    )
    assert (s.started, s.ended, s.ending, s.resumable) == (
        "2026-03-04T08:00:00.000Z",
        "2026-03-04T08:01:30.000Z",
        None,
        False,
    )
    events = res.events  # type: ignore[attr-defined]
    assert [(e.kind, e.role) for e in events] == [
        ("text", "user"),
        ("tool_use", "assistant"),
        ("text", "assistant"),
        ("text", "user"),
        ("tool_use", "assistant"),
        ("text", "assistant"),
    ]
    assert (
        events[2].text == "`scan()` calls `os.stat` twice per file; caching the first result halves the work."
    )
    term = events[4]
    assert (
        term.tool == "run_in_terminal"
        and term.input["command"] == "pytest -q"
        and term.result == "Ran `pytest -q`"
    )
    assert s.accounting.balanced() and (s.accounting.lines, s.accounting.metadata) == (3, 1)
    assert adapter.resume(s) is None


def test_op_log_is_replayed(adapter: CopilotVscodeAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / WS)[LOG]
    s = res.session  # type: ignore[attr-defined]
    assert s.title == "Rename fmt" and s.ending == "error" and s.ended == "2026-03-05T08:01:45.000Z"
    assert [e.text for e in res.events if e.role == "user"] == [
        "Rename fmt to format_duration",
        "Now update the docs",
    ]  # type: ignore[attr-defined]
    err = res.events[-1]  # type: ignore[attr-defined]
    assert err.kind == "system" and err.is_error and err.text.startswith("Sorry, your request failed")
    acct = s.accounting  # 1 initial state, 7 ops folded in, 1 delete of a missing key
    assert (acct.lines, acct.events, acct.merged, acct.skipped) == (9, 1, 7, 1) and s.extra[
        "ops_not_applied"
    ] == 1


def test_jsonl_wins_over_json_and_bare_folders(
    adapter: CopilotVscodeAdapter, corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "chatSessions"
    shutil.copytree(corpus / CHATS, folder)
    shutil.copy(corpus / CHATS / f"{SNAP}.json", folder / f"{LOG}.json")
    assert sorted(Path(u.path).name for u in adapter.discover(folder)) == [f"{SNAP}.json", f"{LOG}.jsonl"]


def test_ops() -> None:
    state = apply_op(None, {"kind": 0, "v": {"a": [1, 2]}})
    apply_op(state, {"kind": 2, "k": ["a"], "v": [9], "i": 1})
    apply_op(state, {"kind": 1, "k": ["b"], "v": {"c": 1}})
    apply_op(state, {"kind": 3, "k": ["a", 0]})
    assert state == {"a": [9, 2], "b": {"c": 1}}
    for bad in (
        {"kind": 1, "k": ["x", "y"], "v": 1},
        {"kind": 3, "k": [[1]]},
        {"kind": 2, "k": ["b"], "v": [1]},
        {"kind": 7},
    ):
        with pytest.raises(_Missing):
            apply_op(state, bad)


def test_torn_log_and_bad_lines(adapter: CopilotVscodeAdapter, corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "chatSessions"
    folder.mkdir()
    lines = (corpus / CHATS / f"{LOG}.jsonl").read_text().splitlines()
    (folder / "x.jsonl").write_text(
        "\n".join([*lines[:3], "nope", json.dumps([1]), *lines[3:]]) + '\n{"kind": 1, "k"'
    )
    s = adapter.read(next(iter(adapter.discover(folder))), None, now=LATER).session
    assert (
        s.bad_lines == 2 and s.truncated and s.accounting.balanced() and s.accounting.lines == len(lines) + 3
    )


REAL = "copilot-vscode/git-ai/.config/Code/User/workspaceStorage"
OCTOBER = "331fed7f-cfd6-409c-8502-06a56322b636"  # one session, kept both as .json and as .jsonl
JOKE = "7de89a80-6d93-43e7-be0a-0a9afe980198"


def _real(adapter: CopilotVscodeAdapter, corpus: Path, folder: str, name: str) -> object:
    (unit,) = [u for u in adapter.discover(corpus / REAL) if u.path.endswith(f"{folder}/chatSessions/{name}")]
    return adapter.read(unit, None, now=LATER)


@pytest.mark.parametrize(("folder", "suffix"), [("git-ai-json", ".json"), ("git-ai-jsonl", ".jsonl")])
def test_real_session_same_in_both_forms(
    adapter: CopilotVscodeAdapter, corpus: Path, folder: str, suffix: str
) -> None:
    res = _real(adapter, corpus, folder, OCTOBER + suffix)
    s = res.session  # type: ignore[attr-defined]
    assert (s.id, s.title, s.models) == (
        OCTOBER,
        "Assistance with TypeScript project tasks",
        ["copilot/claude-sonnet-4"],
    )
    assert (s.started, s.ending, s.cwd) == ("2025-10-07T13:50:46.680Z", None, None)
    events = res.events  # type: ignore[attr-defined]
    prompts = [e.text for e in events if e.kind == "text" and e.role == "user"]
    doc = json.loads((corpus / REAL / "git-ai-json/chatSessions" / f"{OCTOBER}.json").read_text())
    assert prompts == [r["message"]["text"] for r in doc["requests"]] and len(prompts) == 3
    assert prompts[0] == "What can you help me with?"
    assert not [e for e in events if e.kind == "unknown"]  # textEditGroup belongs to its edit call
    replace, find = [e for e in events if e.kind == "tool_use"]
    # the invocation has no arguments: they come from the request's toolCallRounds
    assert (replace.tool, replace.extra["model_tool"]) == ("copilot_replaceString", "replace_string_in_file")
    assert replace.input["filePath"] == "/Users/svarlamov/projects/testing-git/index.ts"
    assert replace.input["newString"].endswith("console.log('hello world');")
    assert replace.result.startswith("The following files were successfully edited:")
    assert replace.extra["edited_files"] == ["/Users/svarlamov/projects/testing-git/index.ts"]
    assert (find.tool, find.input) == ("copilot_findTextInFiles", {"query": "Bonjour", "isRegexp": False})
    assert '1 match<match path="/Users/svarlamov/projects/testing-git/index.ts" line=1>' in find.result
    assert s.usage.is_zero() and res.usage == []  # type: ignore[attr-defined]  # this version wrote no token counts


def test_real_op_log_usage_and_workspace(adapter: CopilotVscodeAdapter, corpus: Path) -> None:
    res = _real(adapter, corpus, "git-ai-multiline", JOKE + ".jsonl")
    s = res.session  # type: ignore[attr-defined]
    assert (s.title, s.models, s.cwd, s.project) == (
        "Adding a joke to jokes.csv file",
        ["copilot/gpt-4o"],
        "/Users/svarlamov/projects/testing-git",
        "testing-git",
    )
    assert (s.accounting.lines, s.accounting.events, s.accounting.merged) == (
        6,
        1,
        5,
    ) and s.accounting.balanced()
    lines = [
        json.loads(x)
        for x in (corpus / REAL / "git-ai-multiline/chatSessions" / f"{JOKE}.jsonl").read_text().splitlines()
    ]
    requests = lines[0]["v"]["requests"] + lines[3]["v"]
    assert len(res.usage) == len(requests) == 2  # type: ignore[attr-defined]
    assert s.usage.input_tokens == sum(r["result"]["usage"]["promptTokens"] for r in requests) == 19671
    assert s.usage.output_tokens == sum(r["result"]["usage"]["completionTokens"] for r in requests) == 73
    tools = [e for e in res.events if e.kind == "tool_use"]  # type: ignore[attr-defined]
    assert [(e.tool, e.extra.get("model_tool")) for e in tools] == [
        ("copilot_readFile", "read_file"),
        ("copilot_insertEdit", "insert_edit_into_file"),
        ("vscode_editFile_internal", None),
    ]
    assert tools[0].input == {
        "filePath": "/Users/svarlamov/projects/testing-git/jokes.csv",
        "startLine": 1,
        "endLine": 20,
    }
    assert "1,Why do programmers prefer dark mode?,Because light attracts bugs." in tools[0].result
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]  # type: ignore[attr-defined]
    assert prompts == [r["message"]["text"] for r in requests] and len(prompts) == 2
