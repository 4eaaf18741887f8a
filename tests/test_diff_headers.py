"""Real unified hunk headers, and a diff that applies (issue 23, item 7).

`show` prints ``@@ -1,5 +1,5 @@`` (the line counts, as Claude recorded them), not
``@@ -1 +1 @@``; `show --patch` prints the session's edits without the line-number gutter, as
one unified diff: `git apply --check` and `patch --dry-run` take it in the session's directory,
and applying it gives the file the agent wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.kit import apply_patch
from agtaild.cli import diff, main
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL

CLAUDE = "cd61be5e"
CODEX = "01a229d7-c676"
FINAL = 'def greet(name):\n    return f"Hello, {name}! こんにちは、{name}さん"\n\n\nif __name__ == "__main__":\n    print(greet("world"))\n'

needs_git = pytest.mark.skipif(shutil.which("git") is None or shutil.which("patch") is None, reason="needs git and patch")


def _cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str, *argv: str) -> str:
    code = main(["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root, *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _repo(where: Path, files: dict[str, str]) -> Path:
    where.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)
    for name, text in files.items():
        (where / name).write_text(text, "utf-8")
    return where


def _ok(argv: list[str], cwd: Path, patch: str) -> None:
    done = subprocess.run(argv, cwd=cwd, input=patch.encode(), capture_output=True)
    assert done.returncode == 0, (argv, done.stdout.decode(), done.stderr.decode(), patch)


def test_show_prints_the_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _cli(capsys, tmp_path, f"claude-code={CLAUDE_REAL}", "show", f"claude-code:{CLAUDE}")
    assert "    @@ -1,5 +1,5 @@\n" in out
    assert "@@ -1 +1 @@" not in out


@needs_git
def test_a_claude_edit_applies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = f"claude-code={CLAUDE_REAL}"
    doc = json.loads(_cli(capsys, tmp_path, root, "--json", "show", f"claude-code:{CLAUDE}"))
    write = next(e for e in doc["events"] if e["tool"] == "Write")["input"]
    edit = next(e for e in doc["events"] if e["tool"] == "Edit")["input"]
    patch = _cli(capsys, tmp_path, root, "show", f"claude-code:{CLAUDE}", "--patch")
    assert patch.startswith("--- a/hello.py\n+++ b/hello.py\n@@ -1,5 +1,5 @@\n")
    repo = _repo(tmp_path / "repo", {"hello.py": write["content"]})  # the file as the Write left it
    _ok(["git", "apply", "--check", "-"], repo, patch)
    _ok(["patch", "-p1", "--dry-run"], repo, patch)
    _ok(["git", "apply", "-"], repo, patch)
    assert (repo / "hello.py").read_text("utf-8") == write["content"].replace(edit["old_string"], edit["new_string"])
    assert (repo / "hello.py").read_text("utf-8") == FINAL


@needs_git
def test_a_codex_session_rebuilds_its_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    patch = _cli(capsys, tmp_path, f"codex={CODEX_REAL}", "show", f"codex:{CODEX}", "--patch")
    assert "--- /dev/null\n+++ b/hello.py\n@@ -0,0 +1,6 @@\n" in patch
    assert "--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,2 @@\n" in patch
    # Codex records no line numbers: the note says so, and how each tool finds the lines.
    assert "line numbers counted from the edit, not the file: patch -p1 finds the lines by their context" in patch
    repo = _repo(tmp_path / "repo", {})
    _ok(["git", "apply", "--unidiff-zero", "--check", "-"], repo, patch)
    _ok(["git", "apply", "--unidiff-zero", "-"], repo, patch)
    assert (repo / "hello.py").read_text("utf-8") == FINAL
    plain = _repo(tmp_path / "plain", {})
    _ok(["patch", "-p1"], plain, patch)
    assert (plain / "hello.py").read_text("utf-8") == FINAL


@needs_git
def test_an_unnumbered_hunk_is_found_by_its_context(tmp_path: Path) -> None:
    """A hunk whose numbers are the snippet's (Codex records none): patch finds it further down."""
    text = "".join(f"line {i}\n" for i in range(1, 30))
    edit: dict[str, Any] = {"files": [{"path": "/w/notes.txt", "op": "update", "numbered": False, "cut": 0, "hunks": [
        {"old_start": 1, "new_start": 1, "lines": [" line 20", "-line 21", "+line twenty-one", " line 22"]}]}]}
    lines, notes = diff.patch_lines(edit, "/w", "#3 apply_patch")
    assert notes == [] and lines[0].startswith("agtail: #3 apply_patch: notes.txt: line numbers counted")
    assert lines[1:4] == ["--- a/notes.txt", "+++ b/notes.txt", "@@ -1,3 +1,3 @@"]
    repo = _repo(tmp_path / "repo", {"notes.txt": text})
    _ok(["patch", "-p1"], repo, "\n".join(lines) + "\n")
    assert (repo / "notes.txt").read_text() == text.replace("line 21\n", "line twenty-one\n")


def test_an_apply_patch_chunk_keeps_the_line_it_is_found_by() -> None:
    edit = apply_patch.edit_of("apply_patch", "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n"
                               "+    return 2\n*** Add File: b.py\n+x\n*** End Patch\n")
    assert edit is not None
    a, b = edit["files"]
    assert a["hunks"][0]["section"] == "def f():" and not a["numbered"]
    assert diff.hunk_header(a["hunks"][0]) == "@@ -1,1 +1,1 @@ def f():"
    assert b["op"] == "create" and b["numbered"] and diff.hunk_header(b["hunks"][0]) == "@@ -0,0 +1,1 @@"


@pytest.mark.parametrize(
    ("hunk", "header"),
    [
        ({"old_start": 1, "new_start": 1, "lines": ["+a", "+b"]}, "@@ -0,0 +1,2 @@"),  # a new file
        ({"old_start": 6, "new_start": 6, "lines": ["+x", "+y"]}, "@@ -5,0 +6,2 @@"),  # inserted after line 5
        ({"old_start": 3, "new_start": 3, "lines": ["-gone"]}, "@@ -3,1 +2,0 @@"),
        ({"old_start": 10, "new_start": 12, "lines": [" a", "-b", "+c", "+d", " e"]}, "@@ -10,3 +12,4 @@"),
        ({"old_start": 1, "new_start": 1, "lines": [" x"], "section": "def f():"}, "@@ -1,1 +1,1 @@ def f():"),
    ],
)
def test_hunk_headers(hunk: dict[str, Any], header: str) -> None:
    assert diff.hunk_header(hunk) == header
