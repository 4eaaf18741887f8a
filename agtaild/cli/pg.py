"""`agtail pg push`: this machine's index into a team's PostgreSQL database (agtaild.pg); the
administrator's commands (init, add-machine, …) are in agtaild.cli.pg_admin."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from agtaild.cli import pg_admin
from agtaild.errors import AgtailError, UsageError
from agtaild.pg.machine import machine_name
from agtaild.words import count


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
        "--url-file",
        default=os.environ.get("AGTAIL_PG_URL_FILE"),
        metavar="FILE",
        help="read the URL from FILE, e.g. the one `agtail pg add-machine --to` wrote (env: AGTAIL_PG_URL_FILE)",
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
    pg_admin.register(sub, common)


def _url(args: argparse.Namespace) -> str:
    if args.url_file:  # before --url: that may come from AGTAIL_PG_URL
        try:
            url = Path(args.url_file).read_text().strip()
        except OSError as err:
            raise AgtailError(f"cannot read --url-file {args.url_file}: {err.strerror}") from None
        if not url:
            raise UsageError(f"--url-file {args.url_file} is empty")
        return url
    if not args.url:
        raise UsageError("agtail pg push needs --url postgresql://… (or AGTAIL_PG_URL, or --url-file)")
    return str(args.url)


def run_push(ctx: Any) -> int:
    from agtaild.pg.push import push

    args = ctx.args
    url = _url(args)
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
        report = push(Path(config.index_path), url, machine)
        for said in report.warnings:
            ctx.err(f"warning: {said}")
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
