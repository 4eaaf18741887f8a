"""Edits as diffs: each agent's edit tool from the samples is normalised into
``extra["edit"]`` (agtaild.adapters.kit.edits), and `show` prints it as a numbered unified diff
(coloured on a terminal, NO_COLOR-aware, cut with a marker, ``--no-diff`` for the raw input)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.kit import apply_patch, edit_shapes, edits
from agtaild.cli import diff, main
from agtaild.cli import format as fmt
from agtaild.textsafe import render


def _show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str, ref: str, *more: str
) -> tuple[str, Any]:
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root]
    assert main([*base, "--json", "show", ref]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main([*base, "show", ref, *more]) == 0
    return capsys.readouterr().out, doc


def _edits(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(e["tool"], e["extra"]["edit"]) for e in doc["events"] if "edit" in (e.get("extra") or {})]


def test_hunks_from_texts_number_and_cut() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n")
    change = edits.from_texts("f.txt", old, new, start=1)
    assert change is not None and change["numbered"]
    (hunk,) = change["hunks"]
    assert hunk["old_start"] == 7 and hunk["new_start"] == 7
    assert hunk["lines"] == [
        " line 7",
        " line 8",
        " line 9",
        "-line 10",
        "+line ten",
        " line 11",
        " line 12",
        " line 13",
    ]
    big = edits.from_texts("big", "", "".join(f"{i}\n" for i in range(1000)))
    assert big is not None and sum(len(h["lines"]) for h in big["hunks"]) == edits.MAX_DIFF_LINES
    assert big["cut"] == 1000 - edits.MAX_DIFF_LINES


def test_unified_diff_parsing_keeps_line_numbers() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -10,3 +10,3 @@\n a\n--- old dashes\n+++ new pluses\n b\n"
    (f,) = edits.from_unified(text)
    assert f["path"] == "x.py" and f["numbered"]
    assert f["hunks"] == [
        {"old_start": 10, "new_start": 10, "lines": [" a", "--- old dashes", "+++ new pluses", " b"]}
    ]


def test_claude_edit_uses_the_structured_patch(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    root = f"claude-code={corpus / 'real' / 'claude-2.1.197' / 'projects'}"
    out, doc = _show(capsys, tmp_path, root, "claude-code:cd61be5e")
    ((tool, edit),) = _edits(doc)  # the Write created the file: no diff for it
    assert tool == "Edit"
    (f,) = edit["files"]
    assert f["path"].endswith("hello.py") and f["numbered"]
    assert f["hunks"][0]["old_start"] == 1 and '-    return "Hello, " + name' in f["hunks"][0]["lines"]
    lines = out.splitlines()
    removed = next(i for i, x in enumerate(lines) if x.endswith('-    return "Hello, " + name'))
    assert lines[removed].split()[0] == "2"  # the file's own line number
    assert lines[removed + 1].split()[0] == "2" and '+    return f"Hello, {name}!' in lines[removed + 1]
    assert "\x1b[" not in out  # not a terminal: no colour
    raw, _ = _show(capsys, tmp_path, root, "claude-code:cd61be5e", "--no-diff")
    assert '"old_string": "return \\"Hello, \\" + name"' in raw and "@@" not in raw


def test_claude_multiedit_and_write_over_a_file(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = corpus / "claude-code" / "claude-code-log" / "projects"
    root = f"claude-code={base}"
    _out, doc = _show(capsys, tmp_path, root, "claude-code:f852ad25")
    multi = [e for t, e in _edits(doc) if t == "MultiEdit"]
    assert multi and multi[0]["files"][0]["hunks"]
    _out, doc = _show(capsys, tmp_path, root, "claude-code:9e953218")
    writes = [e for t, e in _edits(doc) if t == "Write"]
    assert writes and writes[0]["files"][0]["numbered"]


def test_codex_apply_patch(capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path) -> None:
    root = f"codex={corpus / 'codex' / 'claude-code-log' / 'sessions'}"
    out, doc = _show(capsys, tmp_path, root, "codex:11111111")
    ((tool, edit),) = _edits(doc)
    assert tool == "apply_patch"
    # a new file's lines are numbered as the file's own: it starts at line 1
    assert edit["files"] == [{"path": "gamma.txt", "op": "create", "numbered": True, "cut": 0,
                              "hunks": [{"old_start": 1, "new_start": 1, "lines": ["+synthetic"]}]}]  # fmt: skip
    assert "gamma.txt (new file)" in out and "+synthetic" in out
    update = apply_patch.edit_of(
        "apply_patch",
        "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch\n",
    )
    assert update is not None and update["files"][0]["hunks"][0]["lines"] == [
        "-    return 1",
        "+    return 2",
    ]
    shell = apply_patch.edit_of(
        "shell", {"command": ["apply_patch", "*** Begin Patch\n*** Delete File: b.py\n*** End Patch"]}
    )
    assert shell is not None and shell["files"][0]["op"] == "delete"


def test_gemini_replace_uses_the_recorded_file_diff(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    root = f"gemini={corpus / 'gemini' / 'synthetic-agtail' / '.gemini' / 'tmp'}"
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root]
    assert main([*base, "--json", "list"]) == 0
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    found = []
    for s in sessions:
        out, doc = _show(capsys, tmp_path, root, f"gemini:{s['id']}")
        found += [(t, e, out) for t, e in _edits(doc) if t == "replace"]
    _tool, edit, out = found[0]
    (f,) = edit["files"]
    assert f["numbered"] and f["hunks"][0]["old_start"] == 2
    assert any(x.startswith("-") for x in f["hunks"][0]["lines"]) and any(
        x.startswith("+") for x in f["hunks"][0]["lines"]
    )
    lines = f["hunks"][0]["lines"]
    old = sum(1 for x in lines if x[:1] in " -")
    new = sum(1 for x in lines if x[:1] in " +")
    assert f"@@ -2,{old} +2,{new} @@\n" in out  # a real unified header, with the counts


def test_pi_edit(capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path) -> None:
    root = f"pi={corpus / 'pi' / 'pi-mono' / '.pi' / 'agent' / 'sessions'}"
    out, doc = _show(capsys, tmp_path, root, "pi:d703a1a9")
    pi_edits = [e for t, e in _edits(doc) if t == "edit"]
    assert pi_edits
    f = pi_edits[0]["files"][0]
    assert f["path"] == "packages/coding-agent/src/tui/user-message-selector.ts" and not f["numbered"]
    assert "@@  ~ lines counted from the edit, not the file" in out  # numbered from the snippet, and saying so


def test_opencode_edit_uses_the_recorded_diff(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    storage = corpus / "opencode" / "synthetic-agtail-json" / ".local" / "share" / "opencode" / "storage"
    root = f"opencode={storage}"
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root]
    assert main([*base, "--json", "list"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sessions"]
    out, shown = _show(capsys, tmp_path, root, f"opencode:{s['id']}")
    ((tool, edit),) = _edits(shown)
    (f,) = edit["files"]
    assert tool == "edit" and f["numbered"] and f["path"] == "/home/dev/src/agtail-demo/README.md"
    assert f["hunks"] == [{"old_start": 42, "new_start": 42, "lines": [
        "-Durations are printed in milliseconds.",
        "+Durations are printed in seconds with one decimal, e.g. `1.5s`."]}]  # fmt: skip
    lines = out.splitlines()
    assert any(
        x.split()[:1] == ["42"] and x.endswith("-Durations are printed in milliseconds.") for x in lines
    )


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    edit = edits.edit_doc([edits.from_texts("a", "x\n", "y\n", start=1)])
    assert edit is not None
    monkeypatch.delenv("NO_COLOR", raising=False)
    # agtail's own colours are trusted tokens that the terminal sanitiser turns into escapes.
    coloured = [render(x) for x in diff.diff_lines(edit, fmt.Style(_Tty()))]
    assert any("\x1b[31m" in x and x.endswith("-x\x1b[0m") for x in coloured)
    assert any("\x1b[32m" in x and x.endswith("+y\x1b[0m") for x in coloured)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not any("\x1b[" in render(x) for x in diff.diff_lines(edit, fmt.Style(_Tty())))


def test_long_diffs_are_cut_with_a_marker() -> None:
    edit = edits.edit_doc([edits.from_texts("a", "", "".join(f"{i}\n" for i in range(200)), start=1)])
    assert edit is not None
    short = diff.diff_lines(edit, fmt.Style(io.StringIO()))
    assert short[-1].strip() == "… diff cut: 120 more lines (--full shows what was recorded)"
    full = diff.diff_lines(edit, fmt.Style(io.StringIO()), full=True)
    assert sum(1 for x in full if x.rstrip().endswith(tuple(f"+{i}" for i in range(200)))) == 200


def test_the_generic_path_for_other_agents(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    """Grok's adapter has no edit normaliser: its search_replace call (old_string/new_string)
    gets a diff through the generic path of the index."""
    root = f"grok={corpus / 'grok' / 'synthetic-agtail' / '.grok' / 'sessions'}"
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", root]
    assert main([*base, "--json", "list"]) == 0
    found = []
    for s in json.loads(capsys.readouterr().out)["sessions"]:
        out, doc = _show(capsys, tmp_path, root, f"grok:{s['id']}")
        found += [(e, out) for _, e in _edits(doc)]
    assert found
    edit, out = found[0]
    (f,) = edit["files"]
    assert f["path"] == "agtail/watch.py" and not f["numbered"]
    assert "-    f.seek(0, 2)  # start at EOF" in f["hunks"][0]["lines"]
    assert "-    f.seek(0, 2)  # start at EOF" in out
    # Other shapes of the generic path: a unified diff in an input, an apply_patch envelope.
    unified = edit_shapes.generic_edit({"diff": "--- a/x\n+++ b/x\n@@ -3 +3 @@\n-a\n+b\n"})
    assert unified is not None and unified["files"][0]["hunks"][0]["old_start"] == 3
    assert edit_shapes.generic_edit("*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch") is not None
    assert edit_shapes.generic_edit({"command": "ls -la"}) is None
