"""`agtail pick` on a real terminal (issue 23, item 12), in tmux at 80 and 160 columns.

Without fzf: a full-screen picker — arrow keys move (never print ``^[[A``), typing narrows
(the agent matches too), the status line counts what is not on the screen, no row wraps, Enter
resumes the chosen one (here ``--print``: its shell line). With fzf: the rows fzf is given show
the agent, and the field fzf matches on holds it (a stand-in fzf records what it was given)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.cli.width import cells
from tests import pty_run
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL
from tests.tmux_screen import TMUX, Screen

REAL = CLAUDE_REAL.parent.parent
ROWS = 24


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    data = tmp_path_factory.mktemp("pick") / "data"
    args = ["--data-dir", str(data), "--no-daemon", "--only-roots",
            "--root", f"claude-code={CLAUDE_REAL}", "--root", f"codex={CODEX_REAL}",
            "--root", f"qwen={REAL / 'qwen-0.15.10'}", "--root", f"gemini={REAL / 'gemini-0.61.0'}",
            "--root", f"pi={REAL / 'pi-0.73.1' / 'sessions'}", "--root", f"kimi={REAL / 'kimi-1.51.0'}",
            "--root", f"opencode={REAL / 'opencode-1.18.33' / 'opencode.db'}",
            "--root", f"copilot-cli={REAL / 'copilot-1.0.102'}", "--root", f"droid={REAL / 'droid-0.225.2'}"]
    done = subprocess.run([*pty_run.AGTAIL, *args, "index"], capture_output=True, text=True,
                          env=pty_run.child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    yield args


def offered(roots: list[str]) -> list[dict[str, object]]:
    out = subprocess.run([*pty_run.AGTAIL, *roots, "--json", "list", "--no-update", "--native", "--limit", "200"],
                         capture_output=True, text=True, env=pty_run.child_env(), timeout=60)
    return [s for s in json.loads(out.stdout)["sessions"] if s["resumable"] and not s["archived"]]


_STATUS = re.compile(r"^(\d+) of (\d+) sessions match(?: · (\d+) more below)?")


@pytest.mark.skipif(TMUX is None, reason="needs tmux")
@pytest.mark.parametrize("cols", [80, 160])
def test_the_picker_without_fzf(roots: list[str], cols: int) -> None:
    sessions = offered(roots)
    assert len(sessions) > ROWS  # more than fit: some are not shown
    codex = [s for s in sessions if s["agent"] == "codex"]
    screen = Screen([*pty_run.AGTAIL, *roots, "pick", "--no-fzf", "--print"], cols, ROWS)
    try:
        lines = screen.wait(lambda ls: ls[0].startswith("session>") and _STATUS.match(ls[1]), what="the picker")
        found, total, below = _STATUS.match(lines[1]).groups()  # type: ignore[union-attr]
        assert int(found) == int(total) == len(sessions)
        assert int(below) == len(sessions) - (ROWS - 2)  # what is not shown is counted
        rows = lines[2:ROWS]
        assert all(re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d  ", r) for r in rows), rows  # one screen row each
        assert all(cells(r.rstrip()) < cols for r in rows)
        assert any(s["agent"] in rows[0] for s in sessions)
        # Arrow keys move; nothing is echoed.
        screen.keys("Down", "Down", "Up")
        lines = screen.wait(lambda ls: True)
        assert not any("^[" in ln for ln in lines)
        assert lines[0].rstrip() == "session>"
        # Typing narrows, by agent too; the line editor edits in place (Left, then a letter).
        screen.keys("codx", literal=True)
        screen.keys("Left")
        screen.keys("e", literal=True)
        lines = screen.wait(lambda ls: ls[0].rstrip() == "session> codex" and ls[1].startswith(f"{len(codex)} of "),
                            what="the codex sessions")
        listed = [r for r in lines[2:] if r.strip()]
        assert len(listed) == len(codex) and all("codex" in r for r in listed)
        screen.keys("Down", "Enter")
        # (the printed command is ordinary output, which a terminal may wrap: read it joined)
        lines = screen.wait(lambda ls: any(ln.startswith("[exit ") for ln in ls), what="the program's end",
                            joined=True)
        text = "\n".join(lines)
        assert "[exit 0]" in text and "&& codex resume -- " in text, text
        chosen = re.search(r"codex resume -- (\S+)", text).group(1)  # type: ignore[union-attr]
        assert chosen == codex[1]["id"]  # the second row: Down once from the first
    finally:
        screen.close()


@pytest.mark.skipif(TMUX is None, reason="needs tmux")
def test_escape_picks_nothing(roots: list[str]) -> None:
    screen = Screen([*pty_run.AGTAIL, *roots, "pick", "--no-fzf", "--print"], 80, ROWS)
    try:
        screen.wait(lambda ls: ls[0].startswith("session>"), what="the picker")
        screen.keys("Escape")
        lines = screen.wait(lambda ls: any(ln.startswith("[exit ") for ln in ls), what="the program's end")
        assert "[exit 1]" in "\n".join(lines) and "nothing picked" in "\n".join(lines)
    finally:
        screen.close()


def test_fzf_is_given_the_agent_to_show_and_match(roots: list[str], tmp_path: Path) -> None:
    """A stand-in fzf (on a pty, as fzf needs a terminal) records its arguments and input and
    picks the first codex row; the shown fields (``--with-nth``) must hold the agent."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "fzf.json"
    fake = bin_dir / "fzf"
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        "rows = sys.stdin.read().split('\\n')\n"
        f"json.dump({{'argv': sys.argv[1:], 'rows': rows}}, open({str(record)!r}, 'w'))\n"
        "print(next(r for r in rows if r.startswith('codex:')))\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    code, lines = pty_run.run([*roots, "pick", "--print"], 100, env=env)
    assert code == 0, lines
    seen = json.loads(record.read_text())
    nth = next(a for a in seen["argv"] if a.startswith("--with-nth="))
    fields = nth.split("=", 1)[1]
    first_shown = int(fields.split("..")[0])
    for row in seen["rows"]:
        ref, *shown = row.split("\t")
        agent = ref.split(":", 1)[0]
        assert len(shown) >= first_shown - 1 and agent in "\t".join(shown[first_shown - 2 :]).split(), row
    assert any("&& codex resume -- " in ln for ln in lines), lines
