"""Transcript text never drives the terminal (issue #9, items 10 and 11).

A transcript can hold any control sequence (a prompt-injected agent wrote it); every
human-readable output path shows it as visible text, ``--json`` keeps it exact, and closing
the pipe early ends the command quietly.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agtaild.cli import main
from agtaild.textsafe import SafeStream, render, trusted, visible
from tests.daemon_proc import claude_user_line

SID = "11111111-2222-4333-8444-555555555555"
EVIL = (
    "hi \x1b]0;PWNED\x07 clear\x1b[2J \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b[31mred\x1b[0m csi8\x9b2J\r overwrite \u202egnp.exe"
)
#: What must never reach a terminal from transcript text.
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


@pytest.fixture
def evil_root(tmp_path: Path) -> list[str]:
    proj = tmp_path / "claude" / "-tmp-evil"
    proj.mkdir(parents=True)
    line, _ = claude_user_line(SID, EVIL, cwd="/tmp/\x1b[31mevil\x07")
    (proj / f"{SID}.jsonl").write_text(line, encoding="utf-8")
    return ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots",
            "--root", f"claude-code={tmp_path / 'claude'}"]  # fmt: skip


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "command",
    [["list"], ["show", f"claude-code:{SID[:8]}"], ["show", "--full", f"claude-code:{SID[:8]}"],
     ["tail", f"claude-code:{SID[:8]}"], ["search", "hi"], ["search", "--mode", "regex", "PWNED"]],
)
def test_human_output_shows_control_characters_instead_of_obeying_them(
    capsys: pytest.CaptureFixture[str], evil_root: list[str], command: list[str]
) -> None:
    code, out, err = _run(capsys, *evil_root, *command)
    assert code == 0, err
    assert "PWNED" in out + err
    for raw in RAW:
        assert raw not in out and raw not in err, (command, raw)
    assert "␛]0;PWNED␇" in out + err


def test_json_output_stays_exact(capsys: pytest.CaptureFixture[str], evil_root: list[str]) -> None:
    code, out, _ = _run(capsys, *evil_root, "--json", "show", f"claude-code:{SID[:8]}")
    assert code == 0
    doc = json.loads(out)
    assert doc["events"][0]["text"] == EVIL
    assert doc["session"]["cwd"] == "/tmp/\x1b[31mevil\x07"


def test_errors_and_arguments_echoed_back_are_sanitised(
    capsys: pytest.CaptureFixture[str], evil_root: list[str]
) -> None:
    code, _, err = _run(capsys, *evil_root, "show", "claude-code:\x1b]0;x\x07")
    assert code == 4
    assert "\x1b" not in err and "\x07" not in err and "]0;x" in err
    with pytest.raises(SystemExit):
        main(["show"])  # argparse's own usage error
    assert "\x1b" not in capsys.readouterr().err


def test_agtails_own_colours_still_work_on_a_terminal() -> None:
    """Style's colours are trusted tokens: the stream writes them, and only them, as escapes."""
    inner = io.StringIO()
    stream = SafeStream(inner)  # type: ignore[arg-type]
    stream.write(trusted("\x1b[1m") + "bold \x1b[31m" + trusted("\x1b[0m"))
    assert inner.getvalue() == "\x1b[1mbold ␛[31m\x1b[0m"
    # A forged token (without this process's key) stays text.
    assert render("\ufdd00\ufdd1") == "\ufdd00\ufdd1"


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_no_control_character_survives_the_sanitiser(text: str) -> None:
    out = render(text)
    for ch in out:
        code = ord(ch)
        assert ch in "\n\t" or not (code < 0x20 or 0x7F <= code < 0xA0 or 0x202A <= code <= 0x202E
                                    or 0x2066 <= code <= 0x2069), repr(ch)  # fmt: skip
    assert visible(text.replace("\x1b", "")).count("␛") == 0


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\n\t"), max_size=100))
def test_ordinary_text_is_untouched(text: str) -> None:
    assert render(text) == text


#: stdout is a pipe whose reader is gone, behind a buffer big enough that nothing is written
#: until the last flush, as when `head -c 10` exits between the command's writes and its end.
_GONE_READER = """
import io, os, sys
r, w = os.pipe()
os.close(r)
sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(w, "w"), buffer_size=1 << 22))
from agtaild.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("command", [["list", "--limit", "1000"], ["stats", "--by", "session"], ["--json", "list"]])
def test_closing_the_pipe_early_exits_quietly(corpus: Path, tmp_path: Path, command: list[str]) -> None:
    base = ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots",
            "--root", f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.run([sys.executable, "-c", _GONE_READER, *base, *command], env=env,
                          capture_output=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert b"BrokenPipeError" not in proc.stderr and b"Exception ignored" not in proc.stderr


def test_picker_lines_for_fzf_are_sanitised() -> None:
    """fzf draws its input itself, outside agtail's sanitised stdout."""
    from agtaild.cli.resume import picker_rows

    ((ref, line),) = picker_rows([{"agent": "claude-code", "id": SID, "started": "2026-01-01T10:00:00Z",
                                   "project": "p\x1b[2J", "title": EVIL}])  # fmt: skip
    assert not any(raw in line for raw in RAW) and not any(raw in ref for raw in RAW)
    assert ref == f"claude-code:{SID}" and "\t" not in line and "claude-code" in line


def test_the_daemon_log_shows_control_characters_instead_of_obeying_them() -> None:
    import logging

    from agtaild.daemon.main import VisibleFormatter

    record = logging.LogRecord("agtaild", logging.WARNING, __file__, 1, "cannot read %s", ("/x/\x1b]0;t\x07.jsonl",), None)
    assert VisibleFormatter("%(message)s").format(record) == "cannot read /x/␛]0;t␇.jsonl"
