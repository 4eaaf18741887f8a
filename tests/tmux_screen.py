"""A program on a real terminal of a given size, driven like a person would: tmux runs it in a
pane of ``cols`` × ``rows`` on a private server (its own socket), ``send-keys`` types,
``capture-pane`` reads the screen back as its rows of text. The server is killed by its socket
when done; nothing else of tmux is touched."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.pty_run import child_env

TMUX = shutil.which("tmux")


class Screen:
    def __init__(self, argv: list[str], cols: int, rows: int, env: dict[str, str] | None = None) -> None:
        assert TMUX is not None
        self.dir = Path(tempfile.mkdtemp(prefix="agt-tmux-", dir="/tmp"))
        self.sock = str(self.dir / "s")
        # The pane stays after the program ends, saying how it ended.
        command = f"{shlex.join(argv)}; echo \"[exit $?]\"; sleep 600"
        subprocess.run([TMUX, "-S", self.sock, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                        "-x", str(cols), "-y", str(rows), command], check=True, env=child_env(env), timeout=20)

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-S", self.sock, *args], capture_output=True, text=True, timeout=20)
        return done.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "t", *(["-l"] if literal else []), *keys)

    def lines(self, *, joined: bool = False) -> list[str]:
        """The screen's rows as text (a row that wrapped shows as two; ``joined``: as one)."""
        return self.tmux("capture-pane", "-p", *(["-J"] if joined else []), "-t", "t").split("\n")

    def wait(self, test: object, timeout: float = 30, what: str = "", *, joined: bool = False) -> list[str]:
        """The screen once ``test(lines)`` is true."""
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        while time.monotonic() < deadline:
            lines = self.lines(joined=joined)
            if test(lines):  # type: ignore[operator]
                return lines
            time.sleep(0.1)
        raise AssertionError(f"never saw {what}; the screen:\n" + "\n".join(lines))

    def close(self) -> None:
        self.tmux("kill-server")
        shutil.rmtree(self.dir, ignore_errors=True)
