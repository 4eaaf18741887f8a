"""`agtail report`: per project, prompts, files edited, commands that failed then passed,
tokens and cost; the same text every time; secrets masked; the range respected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agtaild.index.report import command_of, failed_then_passed
from tests.live_helpers import NOW, stamp

REPO = Path(__file__).resolve().parent.parent
MAIN = "import sys; from agtaild.cli import main; sys.exit(main())"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a made-up token of the GitHub PAT shape


def _session(root: Path, sid: str, cwd: str, start: float, steps: list[tuple[str, Any]]) -> None:
    """A Claude Code session: ("prompt", text), ("edit", path), ("bash", (command, failed))."""
    lines: list[dict[str, Any]] = []
    t = start
    base = {"sessionId": sid, "cwd": cwd, "version": "2.1.100", "isSidechain": False}
    for i, (kind, value) in enumerate(steps):
        t += 30
        if kind == "prompt":
            lines.append({**base, "type": "user", "uuid": f"{sid}-{i}", "timestamp": stamp(t),
                          "message": {"role": "user", "content": value}})  # fmt: skip
            continue
        name, tool_input = ("Edit", {"file_path": value, "old_string": "a", "new_string": "b"}) if kind == "edit" else (
            "Bash", {"command": value[0]})
        call = f"toolu_{sid}_{i}"
        lines.append({**base, "type": "assistant", "uuid": f"{sid}-{i}a", "timestamp": stamp(t), "requestId": f"req_{sid}_{i}",
                      "message": {"id": f"msg_{sid}_{i}", "role": "assistant", "model": "claude-opus-4-8",
                                  "content": [{"type": "tool_use", "id": call, "name": name, "input": tool_input}],
                                  "usage": {"input_tokens": 100, "output_tokens": 10}}})  # fmt: skip
        failed = kind == "bash" and value[1]
        lines.append({**base, "type": "user", "uuid": f"{sid}-{i}r", "timestamp": stamp(t + 1),
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                                "content": "boom" if failed else "ok", "is_error": failed}]}})  # fmt: skip
    path = root / ("-" + cwd.strip("/").replace("/", "-")) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (t + 5, t + 5))


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Any]:
    claude = tmp_path / "claude" / "projects"
    _session(claude, "aaaa-1111", "/w/app", NOW - 3600, [
        ("prompt", "make the tests pass\nplease, in one go"),
        ("bash", ("pytest -q", True)),
        ("edit", "/w/app/src/parser.py"),
        ("bash", ("pytest -q", True)),
        ("edit", "/w/app/tests/test_parser.py"),
        ("bash", ("pytest -q", False)),
        ("bash", ("ruff check .", False)),
        ("prompt", f"deploy with {GITHUB}"),
    ])  # fmt: skip
    _session(claude, "bbbb-2222", "/w/lib", NOW - 1800, [("prompt", "tidy the lib"), ("edit", "/elsewhere/notes.md")])
    _session(claude, "cccc-3333", "/w/app", NOW - 3 * 86400, [("prompt", "an old session")])
    env = {**os.environ, "HOME": str(tmp_path / "home"), "TZ": "UTC",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")])}  # fmt: skip
    argv = [sys.executable, "-c", MAIN, "--data-dir", str(tmp_path / "data"), "--root", f"claude-code={claude}",
            "--only-roots", "--no-daemon", "report"]  # fmt: skip
    return {"argv": argv, "env": env}


def run(home: dict[str, Any], *args: str) -> str:
    out = subprocess.run([*home["argv"], *args], env=home["env"], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_markdown_report_per_project(home: dict[str, Any]) -> None:
    text = run(home, "--since", "2026-03-01T00:00:00Z", "--until", "2026-03-02")
    assert text.startswith("# Report: 2026-03-01T00:00:00Z to 2026-03-03T00:00:00Z\n")  # a date: that whole day
    assert "## app\n" in text and "## lib\n" in text and text.index("## app") < text.index("## lib")
    assert "an old session" not in text  # outside the range
    assert "- make the tests pass please, in one go\n" in text  # one line
    assert "Files edited: `src/parser.py`, `tests/test_parser.py`." in text  # relative to the session's cwd
    assert "Files edited: `/elsewhere/notes.md`." in text
    assert "- `pytest -q` (failed 2×)" in text and "ruff" not in text.split("Failed, then passed:")[1].split("\n\n")[0]
    assert "Commands: 4 run, 2 failed." in text
    assert "\n2 sessions, 770 tokens" in text and "1 session, 660 tokens" in text and text.count("### claude-code:") == 2


def test_masked_like_exports_and_the_same_every_time(home: dict[str, Any]) -> None:
    first = run(home, "--since", "2026-03-01", "--format", "json")
    assert GITHUB not in first and "«secret:github-pat …q7R8»" in first
    assert run(home, "--since", "2026-03-01", "--format", "json") == first
    doc = json.loads(first)
    app = doc["projects"][0]
    assert app["project"] == "app" and app["usage"]["total_tokens"] == 6 * 110
    assert doc["usage"]["total_tokens"] == 7 * 110 and doc["sessions"] == 2


def test_an_empty_range_says_so(home: dict[str, Any]) -> None:
    text = run(home, "--since", "2020-01-01", "--until", "2020-01-02")
    assert "No sessions in this range." in text and "0 sessions, 0 tokens, $0.00." in text


def test_commands_and_fixes_by_rule() -> None:
    assert command_of({"command": "make   test"}) == "make test"
    assert command_of({"cmd": ["bash", "-lc", "cargo test"]}) == "cargo test"
    assert command_of({"command": ["git", "status"]}) == "git status"
    assert command_of({"command": 7}) is None and command_of("ls") is None
    calls = [("a", True), ("b", False), ("a", True), ("c", True), ("a", False), ("c", True), ("a", True)]
    assert failed_then_passed(calls) == [{"command": "a", "failed": 2}]
