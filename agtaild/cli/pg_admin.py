"""`agtail pg init / add-machine / add-server / remove-machine / remove-server / logins`: the
team database's roles, run by its administrator (agtaild.pg.roles; docs/team.md).

A new login's URL holds its password: it is printed (or written with ``--to``, mode 0600)
this once and never stored in the clear anywhere.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from agtaild.errors import AgtailError, UsageError
from agtaild.pg.machine import MACHINE

_ADMIN_ENV = "AGTAIL_PG_ADMIN_URL"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    init = sub.add_parser(
        "init",
        parents=[common],
        help="(administrator) schema, group roles and row-level security",
        description="Create or migrate the team database's schema as its administrator, the group roles of "
        "pushing machines and of the team server, and row-level security that lets each machine write "
        "only its own rows. Safe to run again (after an upgrade: new migrations and grants).",
    )
    init.add_argument("admin_url", nargs="?", metavar="ADMIN_URL", help=f"postgresql://… of an administrator (env: {_ADMIN_ENV})")
    init.set_defaults(func=run_init)
    for kind in ("machine", "server"):
        add = sub.add_parser(
            f"add-{kind}",
            parents=[common],
            help=f"(administrator) credentials for one {'pushing machine' if kind == 'machine' else 'team server'}",
            description=(
                "A login role that may insert, update and delete only rows of machine NAME, and the URL that "
                "machine pushes with (printed once)."
                if kind == "machine"
                else "A login role for a team server (`agtaild --backend URL`): reads every row, writes none."
            ),
        )
        add.add_argument("name", metavar="NAME")
        _admin_url(add)
        add.add_argument("--to", metavar="FILE", help="write the URL to FILE (mode 0600) instead of printing it")
        add.add_argument(
            "--reuse",
            action="store_true",
            help="take a name that had credentials (or pushed rows) before; its old credentials stop working",
        )
        add.set_defaults(func=run_add, kind=kind)
        remove = sub.add_parser(
            f"remove-{kind}",
            parents=[common],
            help=f"(administrator) revoke a {kind}'s credentials at once",
            description="Drop the login role and end its connections; a push under way stops at its current "
            "batch. The name stays taken (add it again with --reuse).",
        )
        remove.add_argument("name", metavar="NAME")
        _admin_url(remove)
        if kind == "machine":
            remove.add_argument("--delete-history", action="store_true", help="also delete the machine's rows")
        remove.set_defaults(func=run_remove, kind=kind)
    logins = sub.add_parser("logins", parents=[common], help="(administrator) the login roles, current and removed")
    _admin_url(logins)
    logins.set_defaults(func=run_logins)


def _admin_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get(_ADMIN_ENV), help=f"the administrator's postgresql://… (env: {_ADMIN_ENV})")


def _connect(url: str | None) -> Any:
    if not url:
        raise UsageError(f"give the administrator's postgresql://… URL (--url, or {_ADMIN_ENV})")
    from agtaild.pg.push import connect_team

    conn = connect_team(url)
    conn.autocommit = True
    return conn


def _admin(fn: Any, url: str | None) -> Any:
    import psycopg

    conn = _connect(url)
    try:
        return fn(conn)
    except psycopg.errors.InsufficientPrivilege as err:
        raise AgtailError(
            f"the team database refused ({str(err).strip()}): this needs its administrator's role"
            " (the owner of the database, allowed to create roles)"
        ) from None
    except psycopg.Error as err:
        raise AgtailError(f"the team database: {str(err).strip()}") from None
    finally:
        conn.close()


def run_init(ctx: Any) -> int:
    from agtaild.pg.roles import init

    done = _admin(init, ctx.args.admin_url or os.environ.get(_ADMIN_ENV))
    if ctx.json:
        ctx.out_json(done)
    else:
        ctx.err(
            f"team database {done['database']!r} ready, owned by {done['admin']!r}: pushing machines are in"
            f" {done['pushers']!r}, team servers in {done['server']!r}"
            f" ({len([x for x in done['logins'] if not x['removed']])} logins)."
            " Next: `agtail pg add-machine NAME --url ADMIN_URL` for each machine."
        )
    return 0


def run_add(ctx: Any) -> int:
    from agtaild.pg.roles import add_login, login_url

    args = ctx.args
    if not MACHINE.fullmatch(args.name):
        raise UsageError(f"{args.name!r}: use letters, digits, '.', '_' or '-' (at most 63)")
    if args.url:
        login_url(args.url, "role", "password")  # the URL form, before connecting
    target = None
    if args.to:
        target = os.path.abspath(args.to)
        if not os.path.isdir(os.path.dirname(target)):
            raise UsageError(f"--to {args.to}: no folder {os.path.dirname(target)}")
    made = _admin(lambda conn: add_login(conn, args.url, args.kind, args.name, reuse=args.reuse), args.url)
    if target:
        _write_secret(target, made["url"] + "\n")
        shown = {args.kind: args.name, "role": made["role"], "to": target, "replaced": made["replaced"]}
    else:
        shown = made
    if ctx.json:
        ctx.out_json(shown)
        return 0
    if not target:
        print(made["url"])
    replaced = f"; the old credentials ({', '.join(made['replaced'])}) no longer work" if made["replaced"] else ""
    use = "agtail pg push --url-file FILE" if args.kind == "machine" else "agtaild --backend URL"
    ctx.err(
        f"{args.kind} {args.name!r}: role {made['role']}"
        + (f", URL written to {target} (mode 0600)" if target else ", URL above (shown this once)")
        + f"{replaced}. Use it with `{use}`."
    )
    return 0


def _write_secret(path: str, text: str) -> None:
    """``text`` into ``path``, readable by its owner only from the first byte on."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise AgtailError(f"cannot write {path}: {err.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def run_remove(ctx: Any) -> int:
    from agtaild.pg.roles import remove_login

    args = ctx.args
    delete = bool(getattr(args, "delete_history", False))
    done = _admin(lambda conn: remove_login(conn, args.kind, args.name, delete_history=delete), args.url)
    if ctx.json:
        ctx.out_json(done)
    else:
        ctx.err(
            f"{args.kind} {args.name!r}: {len(done['removed'])} login role(s) dropped"
            + (f", {done['deleted_sessions']} sessions deleted" if delete else "")
            + f"; the name stays taken (`agtail pg add-{args.kind} {args.name} --reuse` to give it new credentials)."
        )
    return 0


def run_logins(ctx: Any) -> int:
    from agtaild.pg.roles import list_logins

    rows = _admin(list_logins, ctx.args.url)
    if ctx.json:
        ctx.out_json({"logins": rows})
        return 0
    for row in rows:
        state = f"removed {row['removed'][:19]}" if row["removed"] else "active"
        print(f"{row['kind']:8} {row['name']:24} {row['role']:40} {row['created'][:19]}  {state}")
    return 0
