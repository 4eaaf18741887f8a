"""`agtail statusline`: one line for Claude Code's status bar, from its statusline JSON on stdin.

Claude Code runs the configured command on every change with a JSON object on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``model``, ``workspace``, ``cost``, and on
Pro/Max plans ``rate_limits`` with ``five_hour`` and ``seven_day`` windows) and shows the
first line the command prints. This prints: this session's tokens and cost, the 5-hour
window (Claude Code's own ``rate_limits`` when it sent them, else the block computed from the
index), and today's total of every agent.

It answers from the daemon (one ``usage.live`` call, ~the cost of `agtail stats`) and, when
no daemon runs, from the index in-process — bringing only this session's transcript up to
date, never the whole index. A status bar is no place for errors: empty or garbage input,
an unreachable daemon, anything at all that fails prints nothing and exits 0.
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: The most of stdin read (Claude Code's JSON is a few KB).
MAX_INPUT = 1 << 20
#: Seconds the daemon may take before the line is given up (the status bar waits for it).
DAEMON_TIMEOUT = 2.0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "statusline",
        parents=[common],
        help="one status line for Claude Code (its statusline JSON on stdin)",
        description="Reads Claude Code's statusline JSON on stdin and prints one line: this session's tokens"
        " and cost, the 5-hour window and today's total. Prints nothing (and exits 0) when anything fails."
        " Set it up in ~/.claude/settings.json: {\"statusLine\": {\"type\": \"command\", \"command\": \"agtail statusline\"}}.",
    )
    p.add_argument(
        "--agent",
        default="claude-code",
        metavar="A",
        help="whose status bar (default claude-code; qwen for Qwen Code's Claude-shaped statusLine)",
    )
    p.set_defaults(func=cmd_statusline)


def read_input(stream: Any) -> dict[str, Any] | None:
    """The statusline JSON (None: empty, not JSON, not an object, or no session id)."""
    import json

    try:
        raw = stream.buffer.read(MAX_INPUT) if hasattr(stream, "buffer") else stream.read(MAX_INPUT)
        doc = json.loads(raw)
    except (ValueError, OSError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("session_id"), str) or not doc["session_id"]:
        return None
    return doc


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _until(seconds: float) -> str:
    s = max(0, int(seconds))
    if s >= 86400:
        return f"{s // 86400}d{s % 86400 // 3600:02d}h"
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m"


def _recorded_windows(given: dict[str, Any], now: float) -> list[str]:
    """Claude Code's own rate_limits from stdin, as it sent them."""
    limits = given.get("rate_limits")
    out = []
    if isinstance(limits, dict):
        for key, name in (("five_hour", "5h"), ("seven_day", "7d")):
            w = limits.get(key)
            if not isinstance(w, dict):
                continue
            used = _number(w.get("used_percentage"))
            if used is None:
                continue
            resets = _number(w.get("resets_at"))
            out.append(f"{name} {used:g}%" + (f" ↻{_until(resets - now)}" if resets is not None else ""))
    return out


def line(given: dict[str, Any], doc: dict[str, Any]) -> str:
    """The status line from the statusline JSON and the ``usage.live`` answer."""
    from agtaild.cli.costs import cost_cell, tokens

    now = float(doc.get("now_epoch") or 0)
    parts = []
    session = doc.get("session")
    if session:
        u = session["usage"]
        parts.append(f"{tokens(u['total_tokens'])} {cost_cell(u)} this session")
    recorded = _recorded_windows(given, now)
    if recorded:
        parts.append(" · ".join(recorded))
    else:
        block = next((w for w in doc.get("windows") or [] if w.get("kind") == "block"), None)
        if block is not None:
            import time

            resets = time.strftime("%H:%M", time.localtime(now + block["resets_in_seconds"]))  # the block's end
            parts.append(
                f"block {cost_cell(block['usage'])} ({tokens(block['usage']['total_tokens'])}),"
                f" resets {resets} ({_until(block['resets_in_seconds'])})"
            )
    today = doc.get("today")
    if today:
        parts.append(f"today {cost_cell(today['usage'])}")
    return " | ".join(parts)


def _answer(ctx: Any, given: dict[str, Any]) -> dict[str, Any]:
    agent = getattr(ctx.args, "agent", None) or "claude-code"
    params = {"session": f"{agent}:{given['session_id']}", "sessions": False}
    if not ctx.no_daemon:
        from agtaild.query.backend import daemon_backend, server_backend

        remote = server_backend() or daemon_backend(ctx)
        if remote is not None:
            client = getattr(remote, "client", None)
            if client is not None and hasattr(client, "timeout"):
                client.timeout = DAEMON_TIMEOUT
            try:
                answer: dict[str, Any] = remote.call("usage.live", params)
                return answer
            except Exception:  # the daemon went away or is stuck: answer in-process instead
                pass
            finally:
                remote.close()
    from agtaild.query.backend import LocalBackend

    local = LocalBackend(ctx.config)
    try:
        transcript = given.get("transcript_path")
        if isinstance(transcript, str) and transcript:
            local.service.update_index(only_paths=[transcript])
        answer = local.call("usage.live", params)
        return answer
    finally:
        local.close()


def cmd_statusline(ctx: Any) -> int:
    try:
        given = read_input(sys.stdin)
        if given is None:
            return 0
        text = line(given, _answer(ctx, given))
        if text:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except BaseException:
        return 0
    return 0
