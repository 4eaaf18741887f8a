"""`agtail statusline`: Claude Code's statusline JSON on stdin → one line; in-process and
through a daemon the same line; bad input or a broken data dir prints nothing and exits 0."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_proc import DaemonProc
from tests.live_helpers import claude_session

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "fixtures" / "statusline" / "claude-code-2.1.json"
MAIN = "import sys; from agtaild.entry import main; sys.exit(main())"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Any]:
    now = time.time()
    claude = tmp_path / "claude" / "projects"
    transcript = claude_session(claude, "fast-1111", "/w/app", [now - 120, now - 90, now - 60, now - 30])
    claude_session(claude, "other-2222", "/w/lib", [now - 600], tokens=500)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg"), "TZ": "UTC",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")])}  # fmt: skip
    base = [sys.executable, "-c", MAIN, "--data-dir", str(tmp_path / "data"), "--root", f"claude-code={claude}", "--only-roots"]
    return {"env": env, "base": base, "claude": claude, "transcript": transcript, "now": now, "tmp": tmp_path}


def sample(home: dict[str, Any], *, limits: bool = True) -> str:
    text = (
        SAMPLE.read_text()
        .replace("TRANSCRIPT", str(home["transcript"]))
        .replace("RESETS_5H", str(int(home["now"] + 2 * 3600 + 600)))
        .replace("RESETS_7D", str(int(home["now"] + 3 * 86400)))
    )
    doc = json.loads(text)
    if not limits:
        del doc["rate_limits"]
    return json.dumps(doc)


def statusline(home: dict[str, Any], stdin: str | bytes, *extra: str) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([*home["base"], *extra, "statusline"], input=data, env=home["env"], capture_output=True, timeout=120, check=False)


def test_one_line_from_the_index_in_process(home: dict[str, Any]) -> None:
    out = statusline(home, sample(home, limits=False), "--no-daemon")
    assert out.returncode == 0 and out.stderr == b""
    text = out.stdout.decode()
    assert text.count("\n") == 1
    # This session's 4 responses of 1000 + 100 tokens; the computed block; today of every agent.
    assert text.startswith("4.4k $0.03 this session | block $0.03 (5.0k), resets ")
    assert " | today $0.03" in text


def test_claude_s_own_rate_limits_replace_the_computed_block(home: dict[str, Any]) -> None:
    out = statusline(home, sample(home), "--no-daemon")
    text = out.stdout.decode()
    assert re.search(r"5h 23\.5% ↻2h(09|10)m · 7d 41\.2% ↻2d23h", text)  # as Claude Code sent them
    assert "block" not in text


@pytest.mark.parametrize(
    "stdin",
    [b"", b"   \n", b"garbage{", b"[1, 2]", b'{"cwd": "/w"}', b'{"session_id": 7}', b"\xff\xfe\x00",
     b"[" * 100_000, b'{"session_id": "' + b"x" * 2_000_000 + b'"}'],
    ids=["empty", "blank", "garbage", "array", "no-session", "bad-session", "binary", "deep", "huge"],
)  # fmt: skip
def test_bad_input_prints_nothing_and_exits_0(home: dict[str, Any], stdin: bytes) -> None:
    out = statusline(home, stdin, "--no-daemon")
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


def test_a_broken_data_dir_prints_nothing_and_exits_0(home: dict[str, Any]) -> None:
    broken = home["tmp"] / "not-a-dir"
    broken.write_text("a file where the data dir should be")
    argv = [sys.executable, "-c", MAIN, "--data-dir", str(broken), "--no-daemon", "statusline"]
    out = subprocess.run(argv, input=sample(home).encode(), env=home["env"], capture_output=True, timeout=60, check=False)
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


def test_an_unknown_session_still_gets_the_windows_and_today(home: dict[str, Any]) -> None:
    doc = json.loads(sample(home, limits=False))
    doc["session_id"] = "not-indexed-yet"
    doc["transcript_path"] = str(home["tmp"] / "nowhere.jsonl")
    indexed = subprocess.run([*home["base"], "--no-daemon", "index"], env=home["env"], capture_output=True, timeout=120, check=False)
    assert indexed.returncode == 0, indexed.stderr
    text = statusline(home, json.dumps(doc), "--no-daemon").stdout.decode()
    assert text.startswith("block $0.03 (5.0k), resets ") and "this session" not in text


def test_through_a_daemon_the_same_line(home: dict[str, Any]) -> None:
    in_process = statusline(home, sample(home, limits=False), "--no-daemon").stdout
    daemon = DaemonProc(home["tmp"], {"claude-code": home["claude"]}, env={"TZ": "UTC"})
    daemon.data_dir = home["tmp"] / "data"
    daemon.start()
    try:
        through = statusline(home, sample(home, limits=False))
        assert through.returncode == 0 and through.stderr == b""
        # The same numbers (the reset countdown may have moved a minute between the two runs).
        assert through.stdout.split(b"resets")[0] == in_process.split(b"resets")[0]
        assert b"this session" in through.stdout
    finally:
        daemon.cleanup()
    # The daemon is gone but its agtaild.json may linger: the line comes from the index all the same.
    after = statusline(home, sample(home, limits=False))
    assert after.returncode == 0 and b"this session" in after.stdout
