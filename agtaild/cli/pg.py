"""`agtail pg push`: this machine's index into a team's PostgreSQL database (agtaild.pg)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from agtaild.errors import UsageError
from agtaild.pg.machine import machine_name
from agtaild.words import count

#: What a machine name may be: it labels every row the machine pushes, and shows in lists.


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "pg",
        parents=[common],
        help="a team's history on PostgreSQL: push this machine's index",
        description="Mirror this machine's index into a team's PostgreSQL database (docs/team.md).",
    )
    sub = p.add_subparsers(dest="pg_command", metavar="COMMAND", required=True)
    push = sub.add_parser(
        "push",
        parents=[common],
        help="push what changed since the last push",
        description="Push the sessions, events and usage that changed since this machine's last "
        "push. Updates the local index first (unless --no-update).",
    )
    push.add_argument(
        "--url", default=os.environ.get("AGTAIL_PG_URL"), help="postgresql://… (env: AGTAIL_PG_URL)"
    )
    push.add_argument(
        "--machine",
        help="this machine's name in the team database (default: stored in the data dir, first the host name)",
    )
    push.add_argument("--watch", action="store_true", help="keep pushing as the index changes (Ctrl-C stops)")
    push.add_argument(
        "--interval",
        type=float,
        default=5.0,
        metavar="S",
        help="with --watch: seconds between checks (default 5)",
    )
    push.add_argument(
        "--no-update", action="store_true", help="push the index as it is, without reading the files first"
    )
    push.set_defaults(func=run_push)


def run_push(ctx: Any) -> int:
    from agtaild.pg.push import push

    args = ctx.args
    if not args.url:
        raise UsageError("agtail pg push needs --url postgresql://… (or AGTAIL_PG_URL)")
    if args.watch and args.interval <= 0:
        raise UsageError("--interval must be positive")
    config = ctx.config
    machine = machine_name(Path(config.data_dir), args.machine)
    while True:
        if not args.no_update:
            backend = ctx.backend()
            try:
                backend.call("index.update", {})
            finally:
                backend.close()
        report = push(Path(config.index_path), args.url, machine)
        if ctx.json:
            ctx.out_json(report.as_json())
        elif report.rows or not args.watch:
            ctx.err(
                f"pushed {count(report.sessions, 'session')}, {count(report.events, 'event')}, {count(report.usage, 'usage row')}"
                f" ({report.removed} removed) as {machine!r} in {report.seconds:.2f} s"
                + (" — a full push (new or rebuilt index)" if report.full else "")
            )
        if not args.watch:
            return 0
        time.sleep(args.interval)
