"""A real `agtaild` process on temporary dirs, for end-to-end tests and benchmarks.

Roots are explicit (--only-roots), the data dir and socket are temporary (the socket under
/tmp, since unix socket paths must stay short), TCP listens on a free loopback port. The
process is always stopped with SIGTERM (then killed if it hangs) by whoever started it.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agtail_client import Client, SseEvent

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
CLAUDE_REAL = CORPUS / "real" / "claude-2.1.197" / "projects"
CODEX_REAL = CORPUS / "real" / "codex-0.171.0" / "sessions"


class DaemonProc:
    def __init__(
        self,
        base: Path,
        roots: dict[str, Path],
        *,
        extra: list[str] | None = None,
        env: dict[str, str] | None = None,
        socket_path: Path | None = None,
    ) -> None:
        """``socket_path``: where the daemon puts its socket by default (no --socket given)."""
        self.base = base
        self.data_dir = base / "data"
        self.sock_dir = Path(tempfile.mkdtemp(prefix="agt", dir="/tmp"))
        self.default_socket = socket_path is not None
        self.socket = socket_path or self.sock_dir / "d.sock"
        self.roots = roots
        self.log_path = base / "agtaild.log"
        self.extra = extra or []
        self.env = env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "agtaild.daemon", "--data-dir", str(self.data_dir),
                "--listen", "127.0.0.1:0", "--only-roots", *self.extra]
        if not self.default_socket:
            argv += ["--socket", str(self.socket)]
        for agent, path in self.roots.items():
            argv += ["--root", f"{agent}={path}"]
        return argv

    def start(self, *, wait_indexed: bool = True, timeout: float = 60.0) -> DaemonProc:
        env = {**os.environ, "HOME": str(self.base / "home"), **self.env}
        (self.base / "home").mkdir(exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=log, env=env, cwd=str(REPO))
        deadline = time.monotonic() + timeout
        state = self.data_dir / "agtaild.json"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agtaild exited with {self.proc.returncode}:\n{self.log()}")
            try:
                info = json.loads(state.read_text())
                if info.get("pid") == self.proc.pid:
                    self.info = info
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        else:
            raise TimeoutError(f"agtaild did not start:\n{self.log()}")
        if wait_indexed:
            wait_until(lambda: (self.unix().health().get("index") or {}).get("updates", 0) >= 1, timeout, "the first scan")
        return self

    @property
    def url(self) -> str:
        return str(self.info["url"])

    @property
    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()

    def unix(self, timeout: float = 30.0) -> Client:
        return Client(socket_path=str(self.socket), timeout=timeout)

    def tcp(self, timeout: float = 30.0) -> Client:
        return Client(url=self.url, token=self.token, timeout=timeout)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                raise AssertionError(f"agtaild did not stop on SIGTERM within {timeout}s:\n{self.log()}") from None
        code = self.proc.returncode
        self.proc = None
        return code

    def cleanup(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.sock_dir, ignore_errors=True)


def wait_until(cond: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    last_err: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = cond()
            if value:
                return value
        except Exception as err:  # the daemon may be between states; keep asking
            last_err = err
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last_err!r})")


def copy_claude(dest: Path) -> Path:
    shutil.copytree(CLAUDE_REAL, dest)
    return dest


def copy_codex(dest: Path) -> Path:
    shutil.copytree(CODEX_REAL, dest)
    return dest


def claude_user_line(session_id: str, text: str, *, parent: str | None = None, cwd: str = "/tmp/rt/claude/home/src/demo-app") -> tuple[str, str]:
    """One real-shaped Claude Code user line (as 2.1.197 writes it) and its uuid."""
    uid = str(uuid.uuid4())
    line = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uid,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
    }
    return json.dumps(line, ensure_ascii=False) + "\n", uid


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()


class SseCollector:
    """Reads an SSE stream on a thread; the test waits for the frames it expects."""

    def __init__(self, client: Client, path: str, params: dict[str, Any] | None = None, last_event_id: str | None = None) -> None:
        self.stream = client.stream(path, params, last_event_id=last_event_id)
        self.seen: list[SseEvent] = []
        self._queue: queue.Queue[SseEvent | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for ev in self.stream:
            self._queue.put(ev)
        self._queue.put(None)

    def wait_for(self, pred: Callable[[SseEvent], bool], timeout: float, what: str) -> SseEvent:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no SSE frame for {what} within {timeout}s; saw {[(e.event, e.id) for e in self.seen][-10:]}")
            try:
                ev = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if ev is None:
                raise EOFError(f"the stream ended before {what}")
            self.seen.append(ev)
            if pred(ev):
                return ev

    def close(self) -> None:
        self.stream.close()
        self._thread.join(5)
