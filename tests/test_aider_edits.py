"""Edits written in a reply's text, and reasoning headers (issue 23, item 8).

Aider's SEARCH/REPLACE blocks become the reply's ``extra.edit`` (the shape of
agtaild.adapters.kit.edits) and `show` prints them as a diff in their place, as every other
agent's edits; Codex's bold reasoning headers (``**Inspecting the workspace**``) print bold,
without the asterisks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.kit.search_replace import blocks, edit_of_text
from agtaild.cli import format as fmt
from agtaild.cli import main
from agtaild.textsafe import render
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL

AIDER_REAL = CLAUDE_REAL.parent.parent / "aider-0.86.2" / "demo-app"


def _cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str, *argv: str) -> str:
    code = main(["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root, *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _aider_ref(capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str, stamp: str) -> str:
    """The session of the run started at ``stamp``: an Aider id begins with a digest of the
    repository's path, which differs from one checkout to another."""
    sessions = json.loads(_cli(capsys, tmp_path, root, "--json", "list"))["sessions"]
    (sid,) = [s["id"] for s in sessions if s["id"].split("-", 1)[1].startswith(stamp)]
    return f"aider:{sid}"


def _reply_edits(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["extra"]["edit"] for e in doc["events"] if e["kind"] == "text" and "edit" in (e.get("extra") or {})]


def test_aider_replies_carry_their_edits(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = f"aider={AIDER_REAL}"
    create = json.loads(_cli(capsys, tmp_path, root, "--json", "show", _aider_ref(capsys, tmp_path, root, "20261130T16042")))
    (edit,) = _reply_edits(create)
    (f,) = edit["files"]
    assert f["path"] == "hello.py" and f["op"] == "create" and f["numbered"]
    assert f["hunks"][0]["lines"][0] == "+def greet(name):" and len(f["hunks"][0]["lines"]) == 6
    update = json.loads(_cli(capsys, tmp_path, root, "--json", "show", _aider_ref(capsys, tmp_path, root, "20261130T160439")))
    (edit,) = _reply_edits(update)
    assert edit["files"][0]["op"] == "update" and edit["files"][0]["hunks"][0]["lines"] == [
        '-    return "Hello, " + name', '+    return f"Hello, {name}! こんにちは、{name}さん"']
    text = next(e for e in update["events"] if e["kind"] == "text" and e["role"] == "assistant")["text"]
    assert "<<<<<<< SEARCH" in text  # the reply's text stays as written (and searchable)


def test_show_prints_the_diff_in_place_of_the_block(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = f"aider={AIDER_REAL}"
    ref = _aider_ref(capsys, tmp_path, root, "20261130T160439")
    out = _cli(capsys, tmp_path, root, "show", ref)
    assert "<<<<<<< SEARCH" not in out and ">>>>>>> REPLACE" not in out
    assert "  ✎ (an edit: its diff follows)" in out and "    hello.py\n    @@ -1,1 +1,1 @@" in out
    assert '-    return "Hello, " + name' in out and "日本語の挨拶も追加しました。" in out
    raw = _cli(capsys, tmp_path, root, "show", ref, "--no-diff")
    assert "<<<<<<< SEARCH" in raw and "@@" not in raw


def test_blocks_of_every_shape() -> None:
    text = "\n".join([
        "Two changes:", "", "src/a.py", "```python", "<<<<<<< SEARCH", "x = 1", "=======", "x = 2",
        ">>>>>>> REPLACE", "```", "",
        "```", "src/a.py", "<<<<<<<< SEARCH", "y = 1", "========", "y = 2", ">>>>>>>> REPLACE", "```",
        "", "<<<<<<< SEARCH", "z = 1", "=======", "z = 3", ">>>>>>> REPLACE",  # no name: the file before
        "", "notes.md", "<<<<<<< SEARCH", "unfinished",  # cut off: not a block
    ])
    found = blocks(text)
    assert [(n, s, r, a, b) for n, s, r, a, b in found] == [
        ("src/a.py", "x = 1\n", "x = 2\n", 2, 9),
        ("src/a.py", "y = 1\n", "y = 2\n", 11, 18),
        (None, "z = 1\n", "z = 3\n", 20, 24),
    ]
    edit = edit_of_text(text)
    assert edit is not None and edit["in_text"] == [[2, 9], [11, 18], [20, 24]]
    (f,) = edit["files"]
    assert f["path"] == "src/a.py" and len(f["hunks"]) == 3 and not f["numbered"]
    assert edit_of_text("no edits here") is None and edit_of_text("SEARCH without markers") is None


def test_codex_reasoning_headers_lose_their_asterisks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _cli(capsys, tmp_path, f"codex={CODEX_REAL}", "show", "codex:01a229d7-c676")
    assert "**" not in out
    lines = out.splitlines()
    at = lines.index("  Inspecting the workspace")
    assert lines[at - 1].endswith("#3 thinking")

    class On(fmt.Style):
        def __init__(self) -> None:
            self.on = True

    ev = {"seq": 3, "kind": "thinking", "text": "**Inspecting the workspace**\n\nI should list the files."}
    head = render(fmt.event_lines(ev, On())[1])  # as the terminal gets it
    assert head == "  \x1b[1mInspecting the workspace\x1b[0m"
