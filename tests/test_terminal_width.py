"""`list`, `search` and `projects` fit the terminal (issue 23, item 11): on a real pty of 80 and
160 columns (and with ``$COLUMNS`` through a pipe) no line is longer than the width — the
title shrinks, rows never wrap — and a wider terminal shows more of each title."""

from __future__ import annotations

import subprocess

import pytest

from agtaild.cli.width import cells
from tests import pty_run
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL

REAL = CLAUDE_REAL.parent.parent


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Agents with long ids (Aider), wide characters in titles and projects, long paths."""
    data = tmp_path_factory.mktemp("width") / "data"
    args = ["--data-dir", str(data), "--no-daemon", "--only-roots",
            "--root", f"claude-code={CLAUDE_REAL}", "--root", f"codex={CODEX_REAL}",
            "--root", f"aider={REAL / 'aider-0.86.2' / 'demo-app'}", "--root", f"qwen={REAL / 'qwen-0.15.10'}",
            "--root", f"gemini={REAL / 'gemini-0.61.0'}"]
    done = subprocess.run([*pty_run.AGTAIL, *args, "index"], capture_output=True, text=True,
                          env=pty_run.child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return [*args]


COMMANDS = {
    "list": ["list", "--no-update", "--limit", "40"],
    "search": ["search", "hello", "--no-update", "--limit", "10"],
    "projects": ["projects", "--no-update"],
}


def _rows(lines: list[str], command: str) -> list[str]:
    """The data lines of a command's output (not its stderr notes)."""
    return [ln for ln in lines if ln and not ln.startswith(("agtail:", "flags:"))]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_line_is_wider_than_the_terminal(roots: list[str], command: str) -> None:
    shown: dict[int, list[str]] = {}
    for cols in (80, 160):
        code, lines = pty_run.run([*roots, *COMMANDS[command]], cols)
        assert code == 0, lines
        rows = _rows(lines, command)
        assert len(rows) > 3, lines
        too_wide = [(cells(ln), ln) for ln in lines if cells(ln) > cols]
        assert not too_wide, too_wide
        shown[cols] = rows
    # The same rows at both widths (nothing wrapped into two), the wider showing more.
    assert len(shown[80]) == len(shown[160])
    assert sum(map(cells, shown[160])) > sum(map(cells, shown[80]))
    if command == "list":
        assert all(ln[:2].isdigit() for ln in shown[80][1:]), shown[80]  # each row one line
        assert any(cells(ln) > 120 for ln in shown[160])  # titles are not cut at a fixed width


def test_columns_through_a_pipe(roots: list[str]) -> None:
    env = {**pty_run.child_env(), "COLUMNS": "60"}
    out = subprocess.run([*pty_run.AGTAIL, *roots, *COMMANDS["list"]], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) > 3 and max(map(cells, lines)) <= 60
    # No width, no fitting: a pipe gets the rows as before (titles cut at 80 characters).
    env.pop("COLUMNS")
    piped = subprocess.run([*pty_run.AGTAIL, *roots, *COMMANDS["list"]], capture_output=True, text=True,
                           env=env, timeout=60)
    assert len(piped.stdout.splitlines()) == len(lines)
    assert max(map(cells, piped.stdout.splitlines())) > 60


def test_wide_characters_count_twice() -> None:
    assert cells("README を書いてください。") == 7 + 9 * 2
    # a combining accent takes no column; an escape is shown as its control picture (one)
    assert cells("abc") == 3 and cells("e\u0301") == 1 and cells("\x1b[2J") == 4
