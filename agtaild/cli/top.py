"""`agtail top`: which sessions are spending now, how fast, and the limit windows.

``--once`` prints one screen and ends, ``--json`` prints the ``usage.live`` answer; without
them (on a terminal) a full screen refreshes itself (agtaild.cli.top_screen): from the
daemon's SSE stream when a daemon runs, else by re-reading the index every ``--interval``.
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "top",
        parents=[common],
        help="active sessions sorted by burn rate, with the limit windows of each agent",
        description="Active sessions of every agent sorted by burn (tokens/min and $/h over 5 and 30 minutes),"
        " the limit windows the agents record (Codex) or that are computed (Claude Code's 5-hour blocks),"
        " and today's total. Keys: s sort, a agent, ↑/↓ select, Enter show the session, r refresh, q quit.",
    )
    p.add_argument("--once", action="store_true", help="print one screen and exit")
    p.add_argument("--active", type=int, default=30, metavar="MIN", help="active = did something in the last MIN minutes (default 30)")
    p.add_argument("--agent", metavar="A", help="only this agent's sessions and windows")
    p.add_argument("--interval", type=float, default=5.0, metavar="S", help="seconds between refreshes without a daemon (default 5)")
    p.add_argument(
        "--no-update",
        action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )
    p.set_defaults(func=cmd_top)


def live_params(args: argparse.Namespace) -> dict[str, Any]:
    params: dict[str, Any] = {"active": args.active}
    if args.agent:
        params["agent"] = args.agent
    return params


def cmd_top(ctx: Any) -> int:
    from agtaild.cli.query import open_backend
    from agtaild.errors import UsageError

    args = ctx.args
    if not 1 <= args.active <= 1440:
        raise UsageError("--active must be between 1 and 1440 (minutes)")
    if args.interval <= 0:
        raise UsageError("--interval must be more than 0 seconds")
    backend = open_backend(ctx)
    try:
        if ctx.json or args.once or not sys.stdout.isatty():
            doc = backend.call("usage.live", live_params(args))
            if ctx.json:
                ctx.out_json(doc)
                return 0
            from agtaild.cli.top_view import screen_lines
            from agtaild.cli.width import terminal_width

            print("\n".join(screen_lines(doc, width=terminal_width(), agent=args.agent)))
            return 0
        from agtaild.cli.top_screen import run

        return run(ctx, backend, live_params(args), args.interval)
    finally:
        backend.close()
