"""`agtail pg init / add-machine / add-server / remove-machine / remove-server / logins` and
`add-reader / remove-reader / readers`: the team database's roles and readers, run by its
administrator (agtaild.pg.roles, agtaild.pg.readers; docs/team.md).

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
    init.add_argument(
        "admin_url",
        nargs="?",
        metavar="ADMIN_URL",
        help=f"postgresql://… of an administrator (env: {_ADMIN_ENV})",
    )
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
        add.add_argument(
            "--to", metavar="FILE", help="write the URL to FILE (mode 0600) instead of printing it"
        )
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
            remove.add_argument(
                "--delete-history", action="store_true", help="also delete the machine's rows"
            )
        remove.set_defaults(func=run_remove, kind=kind)
    logins = sub.add_parser(
        "logins", parents=[common], help="(administrator) the login roles, current and removed"
    )
    _admin_url(logins)
    logins.set_defaults(func=run_logins)
    reader = sub.add_parser(
        "add-reader",
        parents=[common],
        help="(administrator) a personal token for the team server, with a privacy tier",
        description="A reader's token (printed once; the database keeps its SHA-256). Tiers: aggregate (usage and "
        "costs only), own (the sessions of --machines), project (the sessions of --projects), all.",
    )
    reader.add_argument("name", metavar="NAME")
    reader.add_argument("--tier", required=True, choices=("aggregate", "own", "project", "all"))
    reader.add_argument(
        "--machines", default="", metavar="A,B", help="with --tier own: the reader's machines"
    )
    reader.add_argument(
        "--projects", default="", metavar="P,Q", help="with --tier project: git roots or project names"
    )
    _admin_url(reader)
    reader.add_argument(
        "--to", metavar="FILE", help="write the token to FILE (mode 0600) instead of printing it"
    )
    reader.add_argument(
        "--reuse", action="store_true", help="give an existing (or revoked) reader a new token"
    )
    reader.set_defaults(func=run_add_reader)
    revoke = sub.add_parser(
        "remove-reader", parents=[common], help="(administrator) revoke a reader's token at once"
    )
    revoke.add_argument("name", metavar="NAME")
    _admin_url(revoke)
    revoke.set_defaults(func=run_remove_reader)
    listed = sub.add_parser("readers", parents=[common], help="(administrator) the readers and their tiers")
    _admin_url(listed)
    listed.set_defaults(func=run_readers)


def _admin_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=os.environ.get(_ADMIN_ENV),
        help=f"the administrator's postgresql://… (env: {_ADMIN_ENV})",
    )


def _connect(url: str | None) -> Any:
    if not url:
        raise UsageError(f"give the administrator's postgresql://… URL (--url, or {_ADMIN_ENV})")
    from agtaild.pg.connection import connect_team

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
    replaced = (
        f"; the old credentials ({', '.join(made['replaced'])}) no longer work" if made["replaced"] else ""
    )
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
            + (
                f"; no longer in the machines of reader(s) {', '.join(done['readers'])}"
                if done.get("readers")
                else ""
            )
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


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def run_add_reader(ctx: Any) -> int:
    from agtaild.pg.readers import add_reader

    args = ctx.args
    machines, projects = _names(args.machines), _names(args.projects)
    made = _admin(
        lambda conn: add_reader(
            conn, args.name, args.tier, machines=machines, projects=projects, reuse=args.reuse
        ),
        args.url,
    )
    if args.to:
        _write_secret(os.path.abspath(args.to), made["token"] + "\n")
        made = {k: v for k, v in made.items() if k != "token"} | {"to": os.path.abspath(args.to)}
    if ctx.json:
        ctx.out_json(made)
        return 0
    if not args.to:
        print(made["token"])
    if made.get("unknown_machines"):
        ctx.err(f"warning: no machine has pushed as {', '.join(made['unknown_machines'])} yet")
    if made.get("removed_machines"):
        ctx.err(
            f"warning: {', '.join(made['removed_machines'])} had its credentials removed: this reader reads"
            " the history it left"
        )
    ctx.err(
        f"reader {args.name!r}, tier {args.tier}: token "
        + (f"written to {made['to']} (mode 0600)" if args.to else "above (shown this once)")
        + "; they use it as AGTAIL_TOKEN with AGTAIL_SERVER=<the team server>."
    )
    return 0


def run_remove_reader(ctx: Any) -> int:
    from agtaild.pg.readers import remove_reader

    done = _admin(lambda conn: remove_reader(conn, ctx.args.name), ctx.args.url)
    if ctx.json:
        ctx.out_json(done)
    else:
        ctx.err(f"reader {ctx.args.name!r}: token revoked")
    return 0


def run_readers(ctx: Any) -> int:
    from agtaild.pg.readers import list_readers
    from agtaild.pg.roles import require_init

    def listed(conn: Any) -> list[dict[str, Any]]:
        require_init(conn)
        return list_readers(conn)

    rows = _admin(listed, ctx.args.url)
    if ctx.json:
        ctx.out_json({"readers": rows})
        return 0
    for row in rows:
        scope = ",".join(row["machines"] or row["projects"]) or "-"
        print(f"{row['reader']:24} {row['tier']:10} {scope:30} {'revoked' if row['revoked'] else 'active'}")
    return 0
