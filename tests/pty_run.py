"""Running `agtail` on a real pseudo-terminal of a given size (the terminal tests of issue 23).

The child gets the pty as stdin, stdout and stderr, with the window size set on it (and no
``$COLUMNS``), so it sees what it sees in a terminal emulator: isatty() true, the width from
the terminal. :class:`Pty` also types keys into a running program and reads the screen text
back, for the interactive picker.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AGTAIL = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]
#: CSI and OSC sequences, and the other two-character escapes: what a terminal does not show.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-B]|\x1b[=>78]")


def plain(text: str) -> str:
    """``text`` without terminal escape sequences (colours, cursor moves)."""
    return _ESCAPES.sub("", text)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "AGTAIL_DATA_DIR")}
    env.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "PYTHONPATH": os.pathsep.join(
        [str(REPO), str(REPO / "clients" / "python"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)})
    env.update(extra or {})
    return env


class Pty:
    """A child process on a pty of ``cols`` × ``rows``."""

    def __init__(self, argv: list[str], cols: int, rows: int = 40, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=child_env(env), cwd=cwd,
            start_new_session=True, close_fds=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.output = b""

    def read(self, timeout: float = 0.3) -> str:
        """What the child wrote until it is quiet for ``timeout`` seconds (or exits)."""
        while True:
            ready, _, _ = select.select([self.master], [], [], timeout)
            if not ready:
                break
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the child closed the pty
                break
            if not chunk:
                break
            self.output += chunk
        return self.output.decode("utf-8", "replace")

    def wait_for(self, needle: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.read(0.1)
            if needle in plain(text):
                return text
            if self.proc.poll() is not None:
                text = self.read(0.1)
                break
        raise AssertionError(f"{needle!r} never appeared; the screen had:\n{plain(self.read(0.1))[-3000:]}")

    def send(self, keys: str | bytes) -> None:
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Wait for the child to exit; (its exit code, everything it wrote)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.read(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(f"still running after {timeout} s:\n{plain(self.read(0.1))[-3000:]}")
        text = self.read(0.1)
        os.close(self.master)
        return int(self.proc.returncode), text


def run(args: list[str], cols: int, rows: int = 40, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """`agtail ARGS` on a pty: its exit code and its lines as the terminal shows them."""
    code, text = Pty([*AGTAIL, *args], cols, rows, env).finish()
    return code, plain(text).replace("\r\n", "\n").split("\n")
