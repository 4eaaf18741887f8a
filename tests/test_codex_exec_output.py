"""Codex's tool outputs read as what the command printed (issue 23, item 6).

``exec_command`` results begin with Codex's wrapper (``Chunk ID``, ``Wall time``, ``Process
exited with code``, ``Original token count``, ``Output:``), older ones with ``Exit code`` /
``Wall time`` / ``Output:``: the adapter keeps those as ``extra.exit_code`` and
``extra.metadata`` (the shape of Codex's JSON encoding) and the result is the output alone, so
`show`'s six result lines are the command's. An ``apply_patch`` call shows the files it
touches, not the patch flattened; a new file's hunk reads ``@@ -0,0 +1,6 @@``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.codex.items import output_result
from agtaild.cli import main
from tests.daemon_proc import CODEX_REAL

BASIC = "01a229d7-c676"  # ls, apply_patch (add, then update), python3 hello.py, a failing command


@pytest.fixture
def shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, Any]]:
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", f"codex={CODEX_REAL}"]
    assert main([*base, "--json", "show", f"codex:{BASIC}"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main([*base, "show", f"codex:{BASIC}"]) == 0
    return capsys.readouterr().out, doc


def test_the_wrapper_becomes_fields(shown: tuple[str, dict[str, Any]]) -> None:
    _, doc = shown
    calls = [e for e in doc["events"] if e["kind"] == "tool_use"]
    ls = next(e for e in calls if e["tool"] == "exec_command" and "ls -la" in json.dumps(e["input"]))
    assert ls["result"].startswith("total 12\n") and "Chunk ID" not in ls["result"]
    assert ls["extra"]["exit_code"] == 0
    assert ls["extra"]["metadata"] == {"chunk_id": "c6d6bd", "duration_seconds": 0.0, "exit_code": 0,
                                       "original_token_count": 36}
    boom = next(e for e in calls if "boom" in json.dumps(e["input"]))
    assert boom["result"] == "boom\n" and boom["is_error"] is True and boom["extra"]["exit_code"] == 3
    patches = [e for e in calls if e["tool"] == "apply_patch"]
    assert [p["result"] for p in patches] == ["Success. Updated the following files:\nA hello.py\n",
                                              "Success. Updated the following files:\nM hello.py\n"]
    assert patches[0]["extra"]["metadata"] == {"exit_code": 0, "duration_seconds": 0.0}


def test_show_prints_the_output_the_files_and_a_real_new_file_header(shown: tuple[str, dict[str, Any]]) -> None:
    out, _ = shown
    lines = out.splitlines()
    at = next(i for i, x in enumerate(lines) if x.endswith("▸ exec_command ls -la && git status --short"))
    assert lines[at + 1] == "  ⎿ total 12"
    assert "Chunk ID" not in out and "Original token count" not in out
    calls = [x for x in lines if "▸ apply_patch" in x]
    assert [x.split("▸ apply_patch ", 1)[1] for x in calls] == ["hello.py (new file)", "hello.py"]
    assert "*** Begin Patch" not in out
    assert "@@ -0,0 +1,6 @@" in out and "~-1" not in out
    assert "⎿ error (exit 3): boom" in out


@pytest.mark.parametrize(
    ("output", "result", "meta"),
    [
        ("Chunk ID: ab12\nWall time: 1.5000 seconds\nProcess running with session ID 7\nOriginal token count: 9\n"
         "Output:\nstill going\n", "still going\n",
         {"chunk_id": "ab12", "duration_seconds": 1.5, "session_id": 7, "original_token_count": 9}),
        ("Exit code: 1\nWall time: 0.2 seconds\nTotal output lines: 40\nOutput:\nline 1\n", "line 1\n",
         {"exit_code": 1, "duration_seconds": 0.2, "total_output_lines": 40}),
        # Not a wrapper: left as it is.
        ("Output:\nplain\n", "Output:\nplain\n", None),
        ("Chunk ID: x\nsomething else\nOutput:\ny", "Chunk ID: x\nsomething else\nOutput:\ny", None),
    ],
)
def test_wrappers_of_every_shape(output: str, result: str, meta: dict[str, Any] | None) -> None:
    got, code, extras = output_result(output)
    assert got == result
    assert extras.get("metadata") == meta
    assert code == (meta or {}).get("exit_code")
