"""`agtail top`: --once and --json as scripts read them, and the full screen driven in tmux
(send-keys, capture-pane) on sessions written relative to the real clock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_helpers import claude_session, codex_rollout

REPO = Path(__file__).resolve().parent.parent
MAIN = "import sys; from agtaild.cli import main; sys.exit(main())"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Any]:
    now = time.time()
    claude = tmp_path / "claude" / "projects"
    codex = tmp_path / "codex" / "sessions"
    claude_session(claude, "fast-1111", "/w/app", [now - 120, now - 90, now - 60, now - 30], prompt="make the build green")
    claude_session(claude, "slow-2222", "/w/lib", [now - 1200], tokens=500, prompt="tidy the lib")
    limits = {"primary": {"used_percent": 42.5, "window_minutes": 300, "resets_at": int(now + 7200)}}
    codex_rollout(codex, "01aa0000-0000-7000-8000-000000000001", now - 600, limits)
    argv = [sys.executable, "-c", MAIN, "--data-dir", str(tmp_path / "data"), "--root", f"claude-code={claude}",
            "--root", f"codex={codex}", "--only-roots", "--no-daemon"]  # fmt: skip
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")]), "TZ": "UTC"}  # fmt: skip
    return {"argv": argv, "env": env, "tmp": tmp_path}


def agtail(home: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*home["argv"], *args], env=home["env"], capture_output=True, text=True, timeout=120, check=False)


def test_once_prints_windows_and_sessions_by_burn(home: dict[str, Any]) -> None:
    out = agtail(home, "top", "--once")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("agtail top ") and "sort: burn  agent: all" in lines[0]
    assert any(line.startswith("claude-code 5h block ") and "resets in" in line and "projection" in line for line in lines)
    assert any(line.startswith("codex primary (5h window): 42.5% used, resets in 1h5") for line in lines)
    rows = [line for line in lines if line.startswith("  ") and "AGENT" not in line]
    assert [row.split()[1] for row in rows] == ["fast-111", "01aa0000", "slow-222"]
    assert "Traceback" not in out.stderr


def test_json_is_the_live_answer(home: dict[str, Any]) -> None:
    out = agtail(home, "--json", "top", "--active", "15")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [s["id"] for s in doc["sessions"]] == ["fast-1111", "01aa0000-0000-7000-8000-000000000001"]
    assert doc["sessions"][0]["burn"]["5m"]["tokens"] == 4400
    assert {w["kind"] for w in doc["windows"]} >= {"block", "week", "primary"}


def test_bad_options_are_said_plainly(home: dict[str, Any]) -> None:
    out = agtail(home, "top", "--once", "--active", "0")
    assert out.returncode != 0 and "--active" in out.stderr and "Traceback" not in out.stderr


@pytest.fixture
def tmux(home: dict[str, Any]) -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    base = ["tmux", "-L", f"agtail-test-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _screen(tmux: list[str]) -> str:
    return subprocess.run([*tmux, "capture-pane", "-p", "-t", "top"], capture_output=True, text=True, check=False).stdout


def _wait_for(tmux: list[str], text: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(tmux)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")


def test_full_screen_keys_sort_filter_and_open(home: dict[str, Any], tmux: list[str]) -> None:
    shown = home["tmp"] / "shown.txt"
    env = {**home["env"], "PAGER": f"cat > {shown}", "TERM": "xterm-256color"}
    command = " ".join(f"'{a}'" for a in [*home["argv"], "top", "--interval", "1"])
    exports = " ".join(f"{k}='{v}'" for k, v in env.items() if k in ("HOME", "XDG_DATA_HOME", "PYTHONPATH", "TZ", "PAGER", "TERM"))
    subprocess.run([*tmux, "new-session", "-d", "-s", "top", "-x", "150", "-y", "30", f"env {exports} {command}"], check=True)
    screen = _wait_for(tmux, "fast-111")
    assert "sort: burn " in screen and "codex primary (5h window)" in screen
    assert screen.index("fast-111") < screen.index("slow-222")
    subprocess.run([*tmux, "send-keys", "-t", "top", "s"], check=True)
    _wait_for(tmux, "sort: burn30")
    subprocess.run([*tmux, "send-keys", "-t", "top", "s", "s", "s"], check=True)  # burn30 → cost → tokens → idle
    screen = _wait_for(tmux, "sort: idle")
    assert screen.index("fast-111") < screen.index("01aa0000") < screen.index("slow-222")
    subprocess.run([*tmux, "send-keys", "-t", "top", "a"], check=True)  # agents in order: claude-code first
    screen = _wait_for(tmux, "agent: claude-code")
    assert "01aa0000" not in screen and "slow-222" in screen
    subprocess.run([*tmux, "send-keys", "-t", "top", "j", "Enter"], check=True)  # the second row: slow-2222
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (shown.exists() and "tidy the lib" in shown.read_text()):
        time.sleep(0.2)
    assert "tidy the lib" in shown.read_text()
    _wait_for(tmux, "agent: claude-code")  # back on the screen after the pager
    subprocess.run([*tmux, "send-keys", "-t", "top", "q"], check=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        alive = subprocess.run([*tmux, "has-session", "-t", "top"], capture_output=True, check=False).returncode == 0
        if not alive:
            break
        time.sleep(0.2)
    assert not alive  # q ended top, and with it the tmux session


def test_full_screen_through_a_daemon_follows_its_stream(home: dict[str, Any], tmux: list[str]) -> None:
    from tests.daemon_proc import DaemonProc

    tmp = home["tmp"]
    daemon = DaemonProc(tmp, {"claude-code": tmp / "claude" / "projects", "codex": tmp / "codex" / "sessions"}, extra=["--no-archive"])
    daemon.data_dir = tmp / "daemon-data"
    daemon.start()
    try:
        env = {**home["env"], "TERM": "xterm-256color"}
        argv = [sys.executable, "-c", MAIN, "--data-dir", str(daemon.data_dir), "top", "--interval", "300"]
        exports = " ".join(f"{k}='{v}'" for k, v in env.items() if k in ("HOME", "XDG_DATA_HOME", "PYTHONPATH", "TZ", "TERM"))
        command = " ".join(f"'{a}'" for a in argv)
        subprocess.run([*tmux, "new-session", "-d", "-s", "top", "-x", "150", "-y", "30", f"env {exports} {command}"], check=True)
        _wait_for(tmux, "fast-111")
        # A session written now reaches the screen through the daemon's stream (no polling:
        # --interval 300 would take five minutes).
        claude_session(tmp / "claude" / "projects", "newer-333", "/w/new", [time.time() - 5])
        _wait_for(tmux, "newer-33")
        subprocess.run([*tmux, "send-keys", "-t", "top", "q"], check=True)
    finally:
        daemon.cleanup()
