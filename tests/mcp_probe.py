"""Time `agtail mcp`'s handshake as an agent meets it: a fresh process, an ``initialize``
written at once, the clock stopped when its answer line arrives. Used by
tests/test_mcp_start.py (a generous bound) and bench/bench_mcp_start.py (the figure)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}

#: The modules of the official MCP SDK and what it pulls in.
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "pydantic_core", "starlette", "anyio", "httpx2")


def agtail_argv(*args: str, importtime: bool = False) -> list[str]:
    """The `agtail` console script's own start (``agtaild.cli:main``), from this checkout."""
    flags = ["-X", "importtime"] if importtime else []
    return [sys.executable, *flags, "-c", "import sys; from agtaild.cli import main; sys.exit(main())", *args]


def env_for(home: Path) -> dict[str, str]:
    paths = [str(REPO), str(REPO / "clients" / "python")]
    return {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(paths)}


def handshake(argv: list[str], env: dict[str, str], *, then: list[dict[str, Any]] | None = None,
              timeout: float = 60.0) -> dict[str, Any]:
    """Start ``argv``, write ``initialize`` and time its answer; then send ``then`` (requests
    and notifications, each request's answer read in turn), close stdin and wait. Returns
    ``{"seconds", "initialize", "answers", "stderr", "code"}``."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=str(REPO))
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        first = proc.stdout.readline()
        seconds = time.monotonic() - started
        answers = []
        for message in then or []:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    return {"seconds": seconds, "initialize": json.loads(first) if first.strip() else None,
            "answers": answers, "stderr": stderr, "code": proc.returncode}


def imported_modules(importtime_stderr: str) -> set[str]:
    """The modules ``-X importtime`` reported."""
    return {ln.rpartition("|")[2].strip() for ln in importtime_stderr.splitlines() if ln.startswith("import time:")}
