"""`agtail resume --print` (issue 23, item 13): for people, the line to paste into a shell
(``cd '…' && claude --resume=…``, quoted so any directory name survives); with ``--json``, the
document of CONTRACT.md. A session whose directory is gone has its own exit code (5), not
"no such session" (4)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from agtaild.cli import main
from tests.daemon_proc import CLAUDE_REAL

SID = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
RECORDED_CWD = "/tmp/rt/claude/home/src/demo-app"


def _roots(tmp_path: Path, cwd: Path) -> list[str]:
    """The corpus session, its recorded cwd moved to ``cwd`` (a name a shell must quote)."""
    projects = tmp_path / "projects"
    src = CLAUDE_REAL / "-tmp-rt-claude-home-src-demo-app" / f"{SID}.jsonl"
    dest = projects / "-tmp-odd" / f"{SID}.jsonl"
    dest.parent.mkdir(parents=True)
    dest.write_text(src.read_text().replace(json.dumps(RECORDED_CWD)[1:-1], json.dumps(str(cwd))[1:-1]))
    return ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots", "--root", f"claude-code={projects}"]


@pytest.fixture
def odd_dir(tmp_path: Path) -> Path:
    where = tmp_path / "it's a $HOME dir; rm -rf x"
    where.mkdir()
    return where


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_printed_line_runs_in_a_shell(tmp_path: Path, odd_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roots = _roots(tmp_path, odd_dir)
    code, out, err = run(capsys, *roots, "resume", SID[:8], "--print")
    assert code == 0, err
    assert out.startswith("cd '") and out.endswith(f" && claude --resume={SID}\n"), out
    # Pasted into a shell, it runs the agent in that directory with that argument.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "ran.json"
    fake = bin_dir / "claude"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n%s\\n' \"$PWD\" \"$1\" > '{record}'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", out], env=env, check=True, cwd=tmp_path)
    assert record.read_text().splitlines() == [str(odd_dir), f"--resume={SID}"]
    # --json: the contract's document, unchanged.
    code, out, err = run(capsys, *roots, "--json", "resume", SID[:8], "--print")
    assert code == 0, err
    assert json.loads(out) == {"agent": "claude-code", "id": SID, "cwd": str(odd_dir), "cwd_exists": True,
                               "argv": ["claude", f"--resume={SID}"]}


def test_a_gone_directory_has_its_own_exit_code(tmp_path: Path, odd_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roots = _roots(tmp_path, odd_dir)
    shutil.rmtree(odd_dir)
    code, out, err = run(capsys, *roots, "resume", SID[:8])
    assert code == 5 and out == ""
    assert "no longer exists" in err and str(odd_dir) in err
    # --print still prints the line (to recreate the directory first), and says why it would fail.
    code, out, err = run(capsys, *roots, "resume", SID[:8], "--print")
    assert code == 0 and out.endswith(f" && claude --resume={SID}\n")
    assert "no longer exists" in err
    code, out, err = run(capsys, *roots, "--json", "resume", SID[:8], "--print")
    assert code == 0 and json.loads(out)["cwd_exists"] is False
    # An unknown session is still 4.
    code, out, err = run(capsys, *roots, "resume", "ffffffff")
    assert code == 4
