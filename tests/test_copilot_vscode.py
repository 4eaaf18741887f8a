"""VS Code Copilot Chat adapter, on the hand-made snapshot and op log
(tests/corpus/copilot-vscode/synthetic-agtail; no real file seen)."""

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
        "Speed up the session scan", "/home/dev/src/agtail-demo", "agtail-demo", ["copilot/gpt-4.1"],
    )
    assert (s.started, s.ended, s.ending, s.resumable) == ("2026-03-04T08:00:00.000Z", "2026-03-04T08:01:30.000Z", None, False)
    events = res.events  # type: ignore[attr-defined]
    assert [(e.kind, e.role) for e in events] == [
        ("text", "user"), ("tool_use", "assistant"), ("text", "assistant"),
        ("text", "user"), ("tool_use", "assistant"), ("text", "assistant"),
    ]
    assert events[2].text == "`scan()` calls `os.stat` twice per file; caching the first result halves the work."
    term = events[4]
    assert term.tool == "run_in_terminal" and term.input["command"] == "pytest -q" and term.result == "Ran `pytest -q`"
    assert s.accounting.balanced() and (s.accounting.lines, s.accounting.metadata) == (3, 1)
    assert adapter.resume(s) is None


def test_op_log_is_replayed(adapter: CopilotVscodeAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / WS)[LOG]
    s = res.session  # type: ignore[attr-defined]
    assert s.title == "Rename fmt" and s.ending == "error" and s.ended == "2026-03-05T08:01:45.000Z"
    assert [e.text for e in res.events if e.role == "user"] == ["Rename fmt to format_duration", "Now update the docs"]  # type: ignore[attr-defined]
    err = res.events[-1]  # type: ignore[attr-defined]
    assert err.kind == "system" and err.is_error and err.text.startswith("Sorry, your request failed")
    acct = s.accounting  # 1 initial state, 7 ops folded in, 1 delete of a missing key
    assert (acct.lines, acct.events, acct.merged, acct.skipped) == (9, 1, 7, 1) and s.extra["ops_not_applied"] == 1


def test_jsonl_wins_over_json_and_bare_folders(adapter: CopilotVscodeAdapter, corpus: Path, tmp_path: Path) -> None:
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
    for bad in ({"kind": 1, "k": ["x", "y"], "v": 1}, {"kind": 3, "k": [[1]]}, {"kind": 2, "k": ["b"], "v": [1]}, {"kind": 7}):
        with pytest.raises(_Missing):
            apply_op(state, bad)


def test_torn_log_and_bad_lines(adapter: CopilotVscodeAdapter, corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "chatSessions"
    folder.mkdir()
    lines = (corpus / CHATS / f"{LOG}.jsonl").read_text().splitlines()
    (folder / "x.jsonl").write_text("\n".join([*lines[:3], "nope", json.dumps([1]), *lines[3:]]) + '\n{"kind": 1, "k"')
    s = adapter.read(next(iter(adapter.discover(folder))), None, now=LATER).session
    assert s.bad_lines == 2 and s.truncated and s.accounting.balanced() and s.accounting.lines == len(lines) + 3
