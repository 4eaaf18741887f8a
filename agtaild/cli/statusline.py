"""`agtail statusline`: one line for Claude Code's status bar, from its statusline JSON on stdin.

Claude Code runs the configured command on every change with a JSON object on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``model``, ``workspace``, ``cost``, and on
Pro/Max plans ``rate_limits`` with ``five_hour`` and ``seven_day`` windows) and shows the
first line the command prints. This prints: this session's tokens and cost, the 5-hour
window (Claude Code's own ``rate_limits`` when it sent them, else the block computed from the
index), and today's total of every agent.

The `agtail` console script answers the common case — a daemon on its unix socket — without
this module or the parser (agtaild.statusline_fast, which also makes the line); this is the
rest: ``AGTAIL_SERVER``, a daemon over TCP, other roots, and, when no daemon answers, the index
in-process — bringing only this session's transcript up to date, never the whole index. A status
bar is no place for errors: empty or garbage input, an unreachable daemon, anything at all that
fails prints nothing and exits 0.
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "statusline",
        parents=[common],
        help="one status line for Claude Code (its statusline JSON on stdin)",
        description="Reads Claude Code's statusline JSON on stdin and prints one line: this session's tokens"
        " and cost, the 5-hour window and today's total. Prints nothing (and exits 0) when anything fails."
        ' Set it up in ~/.claude/settings.json: {"statusLine": {"type": "command", "command": "agtail statusline"}}.',
    )
    p.add_argument(
        "--agent",
        default="claude-code",
        metavar="A",
        help="the agent whose status bar runs this: the session id on stdin is one of its sessions"
        " (default claude-code; qwen, codebuddy, copilot-cli, cursor: docs/usage.md)",
    )
    p.set_defaults(func=cmd_statusline)


def _answer(ctx: Any, given: dict[str, Any]) -> dict[str, Any]:
    from agtaild.statusline_fast import DAEMON_TIMEOUT, DEFAULT_AGENT
    from agtaild.statusline_fast import params as live_params

    params = live_params(getattr(ctx.args, "agent", None) or DEFAULT_AGENT, given)
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
        from agtaild.statusline_fast import DEFAULT_AGENT, line, read_input, read_stdin, write_line

        given = read_input(read_stdin())
        if given is None:
            return 0
        write_line(line(given, _answer(ctx, given), getattr(ctx.args, "agent", None) or DEFAULT_AGENT))
    except BaseException:
        return 0
    return 0
