"""`agtail mcp`: an MCP server on stdio, so an agent can search and read its own history.

It answers through the same backend as every other command (agtaild/query/backend.py): the running
daemon for this data dir, else the service in-process. The handshake is answered at once, with
the standard library alone (agtaild/mcp/stdio.py: no SDK); the backend opens on a thread of its
own meanwhile, and in-process the index is then brought up to date in the background (a tool
call waits for it), and again before a tool call when the last update is older than a few
seconds (cheap when nothing changed: one stat per file), so answers are never stale.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any

#: In-process, how old the index may be before a tool call brings it up to date again.
REFRESH_SECONDS = 5.0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve MCP on stdio: agents search and read their own session history",
        description="Serve the Model Context Protocol on stdin/stdout (tools: search_sessions, "
        "list_sessions, sessions_here, read_session, usage_summary). Configure it in your agent as a "
        "stdio server running `agtail mcp`; docs/mcp.md has the snippets.",
    )
    p.add_argument(
        "--cwd",
        metavar="DIR",
        help="the directory sessions_here looks in by default (default: the current directory)",
    )
    p.set_defaults(func=cmd_mcp)


class BackendCaller:
    """``call(method, params)`` on the backend, one call at a time (the daemon client keeps one
    connection), refreshing an in-process index first when it may be stale."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.service = getattr(backend, "service", None)
        self._lock = threading.Lock()
        self._updated = 0.0

    def refresh(self) -> None:
        if self.service is None or time.monotonic() - self._updated < REFRESH_SECONDS:
            return
        report = self.service.update_index()
        self._updated = time.monotonic()
        for err in (report.get("errors") or [])[:3]:
            print(f"agtail mcp: warning: {err.get('path') or err.get('agent')}: {err.get('error')}", file=sys.stderr)

    def warm_up(self) -> None:
        """The first update, off the main thread; a failure is reported and retried by the next call."""
        try:
            with self._lock:
                self.refresh()
        except Exception as err:
            print(f"agtail mcp: indexing failed: {err}", file=sys.stderr)

    def __call__(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            self.refresh()
            return self.backend.call(method, params)


def cmd_mcp(ctx: Any) -> int:
    from agtaild.errors import UsageError
    from agtaild.mcp.stdio import run_stdio

    here = os.path.abspath(os.path.expanduser(ctx.args.cwd)) if ctx.args.cwd else os.getcwd()
    if ctx.args.cwd and not os.path.isdir(here):
        raise UsageError(f"--cwd {ctx.args.cwd}: not a directory")
    opened: list[Any] = []

    def open_backend() -> BackendCaller:
        backend = ctx.backend()
        opened.append(backend)
        caller = BackendCaller(backend)
        if caller.service is not None:
            threading.Thread(target=caller.warm_up, name="agtail-mcp-index", daemon=True).start()
        return caller

    try:
        run_stdio(open_backend, here=here)
    finally:
        for backend in opened:
            backend.close()
    return 0
