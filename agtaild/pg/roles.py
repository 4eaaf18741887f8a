"""Who may write what in the team database: group roles, a login role per machine, and
row-level security keyed on the machine that owns each row.

Without roles every machine that pushes holds credentials that can rewrite or delete the whole
team's history. ``agtail pg init ADMIN_URL`` (:func:`init`) makes the administrator's role the
owner of the schema (only it migrates) and creates two group roles, named after the database
because roles are shared by every database of a cluster:

* ``<db>_pushers``: may select, insert, update and delete rows of the machine data tables, and
  row-level security lets it see and touch only rows whose ``machine`` is the one its login
  role was made for (:data:`MINE`). No TRUNCATE, no DDL, no other machine's rows, not even to
  read them.
* ``<db>_server``: the team server's; writes nothing, and reads what the reader it asks for
  may see (agtaild.pg.readers): sessions, usage and machines under row policies, events only
  through the views of agtaild.pg.reader_rules (never the table).

``agtail pg add-machine NAME`` (:func:`add_login`) makes a login role in the pushers' group,
recorded in ``agtail_logins`` with the machine name its policies compare against, and returns
the URL that machine pushes with; the password is sent to PostgreSQL only as a SCRAM verifier.
A name that had credentials (or pushed rows) before is refused unless ``reuse``: a new machine
under an old name inherits its history and cursor, and its first (full) push would delete that
history. :func:`remove_login` drops a role and ends its connections at once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from agtaild.errors import AgtailError, NotFound, Refused, UsageError
from agtaild.pg import readers
from agtaild.pg.schema import managed, migrate, require_init

#: The tables that hold machine data: each row's ``machine`` names its owner.
MACHINE_TABLES = ("machines", "sessions", "events", "usage", "usage_daily", "session_state")

#: Tables the team server's role may not read at all: it reads events through the view
#: the views of agtaild.pg.readers.EVENTS_VIEWS, which keep to the sessions its caller may read.
SERVER_NO_TABLE = ("events",)

#: The machine the connected login role was made for (NULL for any other role): what every
#: pusher policy compares ``machine`` with. An uncorrelated subquery, so PostgreSQL computes it
#: once per statement and uses the (machine, …) indexes with the result.
MINE = (
    "(SELECT l.name FROM agtail_logins l WHERE l.role = current_user AND l.kind = 'machine'"
    " AND l.removed IS NULL)"
)

#: One lock id for "roles are being changed" (two administrators at once).
_ROLES_LOCK = 0x61677461696D


def _sql() -> Any:
    from psycopg import sql

    return sql


def group_names(database: str) -> tuple[str, str]:
    """The pushers' and the team server's group roles of ``database`` (at most 63 bytes)."""
    base = (
        database
        if len(database.encode()) <= 40
        else database[:30] + "_" + hashlib.sha256(database.encode()).hexdigest()[:8]
    )
    return f"{base}_pushers", f"{base}_server"


def groups(cur: Any) -> tuple[str, str]:
    cur.execute("SELECT kind, role FROM agtail_roles")
    found = dict(cur.fetchall())
    return found["pushers"], found["server"]


def init(conn: Any) -> dict[str, Any]:
    """Schema, group roles, grants and row-level security; safe to run again (after an upgrade
    it applies new migrations and grants on new tables)."""
    sql = _sql()
    migrate(conn, admin=True)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ROLES_LOCK,))
        cur.execute("SELECT current_database(), current_user")
        database, admin = cur.fetchone()
        pushers, server = group_names(database)
        created = []
        for role in (pushers, server):
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            if cur.fetchone() is None:
                cur.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
                created.append(role)
        cur.execute("CREATE TABLE IF NOT EXISTS agtail_roles (kind text PRIMARY KEY, role name NOT NULL)")
        cur.execute(
            "INSERT INTO agtail_roles VALUES ('pushers', %s), ('server', %s)"
            " ON CONFLICT (kind) DO UPDATE SET role = excluded.role",
            (pushers, server),
        )
        cur.execute(
            """CREATE TABLE IF NOT EXISTS agtail_logins (
                role name PRIMARY KEY,          -- the login role
                kind text NOT NULL,             -- machine | server
                name text NOT NULL,             -- the machine it writes as (kind machine)
                created timestamptz NOT NULL DEFAULT now(),
                removed timestamptz             -- the role was dropped then; the name stays taken
            )"""
        )
        cur.execute("CREATE INDEX IF NOT EXISTS agtail_logins_name ON agtail_logins (kind, name)")
        readers.create_table(cur)
        # Only the administrator creates objects (PostgreSQL < 15 lets everyone create in public,
        # and an object there could capture the administrator's own statements).
        cur.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        p, s = sql.Identifier(pushers), sql.Identifier(server)
        cur.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}, {}").format(p, s))
        cur.execute(
            sql.SQL("GRANT SELECT ON agtail_migrations, agtail_roles, agtail_logins TO {}, {}").format(p, s)
        )
        cur.execute(sql.SQL("GRANT SELECT ON agtail_readers TO {}").format(s))
        for table in (*MACHINE_TABLES, "agtail_logins"):
            t = sql.Identifier(table)
            cur.execute(sql.SQL("REVOKE ALL ON {} FROM PUBLIC").format(t))
            cur.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(t))
            for policy in ("agtail_own", "agtail_read"):
                cur.execute(sql.SQL("DROP POLICY IF EXISTS {} ON {}").format(sql.Identifier(policy), t))
            if table in SERVER_NO_TABLE:
                continue
            # The team server reads what the asking reader may see (agtaild.pg.readers).
            cur.execute(
                sql.SQL("CREATE POLICY agtail_read ON {} FOR SELECT TO {} USING ({})").format(
                    t, s, sql.SQL(readers.POLICIES.get(table, "true"))
                )
            )
        cur.execute(
            sql.SQL(
                "CREATE POLICY agtail_own ON agtail_logins FOR SELECT TO {} USING (role = current_user)"
            ).format(p)
        )
        for table in MACHINE_TABLES:
            t = sql.Identifier(table)
            cur.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(t, p))
            if table in SERVER_NO_TABLE:
                cur.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(t, s))
            else:
                cur.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(t, s))
            cur.execute(
                sql.SQL(
                    "CREATE POLICY agtail_own ON {} TO {} USING (machine = {mine}) WITH CHECK (machine = {mine})"
                ).format(t, p, mine=sql.SQL(MINE))
            )
        # The events the asking reader may read, for the team server only (not the pushers: the
        # view runs as its owner, who reads every machine's rows).
        readers.create_events_view(cur)
        for view in readers.EVENTS_VIEWS:
            cur.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(view), s))
        cur.execute(
            "SELECT kind, name, role, removed IS NOT NULL FROM agtail_logins ORDER BY kind, name, created"
        )
        logins = [{"kind": k, "name": n, "role": r, "removed": rm} for k, n, r, rm in cur.fetchall()]
    return {
        "database": database,
        "admin": admin,
        "pushers": pushers,
        "server": server,
        "created": created,
        "logins": logins,
    }


def login_url(admin_url: str, role: str, password: str) -> str:
    """``admin_url`` with the new role and password in place of the administrator's (host,
    database and options such as ``sslmode`` kept)."""
    parts = urlsplit(admin_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise UsageError("--url: give the administrator's connection as a postgresql://… URL")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(
        (
            parts.scheme,
            f"{quote(role, safe='')}:{quote(password, safe='')}@{host}",
            parts.path,
            parts.query,
            "",
        )
    )


def add_login(conn: Any, admin_url: str, kind: str, name: str, *, reuse: bool = False) -> dict[str, Any]:
    """A new login role: for machine ``name`` (kind ``machine``) or a team server (``server``).
    Returns the role and the URL to connect with (the only time its password is known)."""
    sql = _sql()
    require_init(conn)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ROLES_LOCK,))
        pushers, server = groups(cur)
        cur.execute(
            "SELECT role, removed, created FROM agtail_logins WHERE kind = %s AND name = %s ORDER BY created",
            (kind, name),
        )
        earlier = cur.fetchall()
        pushed = 0
        if kind == "machine":
            cur.execute("SELECT count(*) FROM sessions WHERE machine = %s", (name,))
            pushed = int(cur.fetchone()[0])
        if (earlier or pushed) and not reuse:
            active = [r for r, removed, _c in earlier if removed is None]
            said = (
                f"has credentials ({', '.join(active)})"
                if active
                else "had credentials before"
                if earlier
                else "pushed before roles were set up"
            )
            held = f", and {pushed} sessions in the team database are its" if pushed else ""
            raise Refused(
                f"{kind} name {name!r} {said}{held}: choose another name, or --reuse to give its history"
                " and cursor to new credentials (any old ones stop working at once)"
            )
        dropped = _drop_roles(cur, [r for r, removed, _c in earlier if removed is None])
        slug = re.sub(r"[^a-z0-9_]", "_", name.lower())[:40]
        role = f"agtail_{'m' if kind == 'machine' else 's'}_{slug}_{secrets.token_hex(4)}"
        password = secrets.token_urlsafe(24)
        verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
        cur.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(role),
                sql.Literal(verifier),
                sql.Identifier(pushers if kind == "machine" else server),
            )
        )
        cur.execute("INSERT INTO agtail_logins (role, kind, name) VALUES (%s, %s, %s)", (role, kind, name))
    _end_sessions(conn, dropped)
    return {
        kind: name,
        "role": role,
        "url": login_url(admin_url, role, password),
        "replaced": [r for r, _o in dropped],
    }


def remove_login(conn: Any, kind: str, name: str, *, delete_history: bool = False) -> dict[str, Any]:
    """Drop the login roles of ``name`` and end their connections (a push under way stops at
    its current batch, which is rolled back). The name stays taken (see :func:`add_login`);
    ``delete_history`` also deletes the machine's rows. A machine leaves every reader's
    ``--machines`` (``readers``: the readers whose scope it left)."""
    require_init(conn)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ROLES_LOCK,))
        cur.execute(
            "SELECT role FROM agtail_logins WHERE kind = %s AND name = %s AND removed IS NULL", (kind, name)
        )
        active = [r for (r,) in cur.fetchall()]
        cur.execute("SELECT 1 FROM agtail_logins WHERE kind = %s AND name = %s", (kind, name))
        if not active and cur.fetchone() is None:
            raise NotFound(f"no {kind} named {name!r} in this team database")
        dropped = _drop_roles(cur, active)
        deleted = 0
        scoped = readers.drop_machine(cur, name) if kind == "machine" else []
        if delete_history and kind == "machine":
            cur.execute("DELETE FROM sessions WHERE machine = %s", (name,))
            deleted = cur.rowcount
            cur.execute("DELETE FROM machines WHERE machine = %s", (name,))
    _end_sessions(conn, dropped)
    return {kind: name, "removed": [r for r, _o in dropped], "deleted_sessions": deleted, "readers": scoped}


def _drop_roles(cur: Any, roles: list[str]) -> list[tuple[str, int]]:
    sql = _sql()
    dropped = []
    for role in roles:
        cur.execute("SELECT oid FROM pg_roles WHERE rolname = %s", (role,))
        row = cur.fetchone()
        cur.execute("UPDATE agtail_logins SET removed = now() WHERE role = %s", (role,))
        if row is not None:
            cur.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
            dropped.append((role, int(row[0])))
    return dropped


def _end_sessions(conn: Any, dropped: list[tuple[str, int]]) -> None:
    """End the connections of roles just dropped (after the commit, so that they cannot log in
    again in between): their next statement would be refused anyway, now it is at once."""
    if not dropped:
        return
    with conn.cursor() as cur:
        cur.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usesysid = ANY(%s)",
            ([oid for _r, oid in dropped],),
        )
    conn.commit()


def list_logins(conn: Any) -> list[dict[str, Any]]:
    require_init(conn)
    with conn.cursor() as cur:
        cur.execute(
            "SELECT kind, name, role, created, removed FROM agtail_logins ORDER BY kind, name, created"
        )
        rows = cur.fetchall()
    conn.commit()
    return [
        {"kind": k, "name": n, "role": r, "created": c.isoformat(), "removed": rm.isoformat() if rm else None}
        for k, n, r, c, rm in rows
    ]


def push_identity(conn: Any) -> str | None:
    """The machine the connected role may push as; None for a role outside the pushers' group
    (a database without roles, or its administrator). A pushers' role without a machine (its
    credentials were removed) is an error here, before anything is sent."""
    if not managed(conn):
        return None
    with conn.cursor() as cur:
        cur.execute("SELECT current_user, role FROM agtail_roles WHERE kind = 'pushers'")
        row = cur.fetchone()
        if row is None:
            conn.commit()
            return None
        user, pushers = row
        cur.execute("SELECT pg_has_role(current_user, %s, 'MEMBER')", (pushers,))
        member = cur.fetchone()[0]
        cur.execute(f"SELECT {MINE}")
        mine = cur.fetchone()[0]
    conn.commit()
    if not member:
        return None
    if mine is None:
        raise AgtailError(
            f"the team database has no machine for role {user!r} (its credentials were removed?)"
        )
    return str(mine)


def require_identity(conn: Any, machine: str) -> None:
    """Refuse a push whose machine name is not the one its credentials were made for."""
    mine = push_identity(conn)
    if mine is not None and mine != machine:
        raise Refused(
            f"these credentials push as machine {mine!r}, and this machine's name is {machine!r}:"
            f" push with --machine {mine}, or ask for credentials for {machine!r}"
        )


__all__ = [
    "MACHINE_TABLES",
    "add_login",
    "group_names",
    "init",
    "list_logins",
    "login_url",
    "remove_login",
    "require_identity",
    "require_init",
]
