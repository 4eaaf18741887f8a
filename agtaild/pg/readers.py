"""Readers of the team server and what each may see, decided by PostgreSQL.

A reader is a person with a personal token (``agtail pg add-reader``); the database keeps only
its SHA-256. The team server connects with its own role (``<db>_server``, agtaild.pg.roles) and
sends, with every query, who is asking (``agtail.reader``: ``operator`` for the server's own
token, a reader token's digest, or nothing). The row-level security policies
(agtaild.pg.reader_rules) compare it with ``agtail_readers`` — and events, which the server's
role cannot read as a table, come through views that apply the same rule — so a bug in the
server's Python cannot widen a reader's view: the rows are not there for the query. (The role
chooses the caller it names: it is trusted with that, as the holder of the operator's token;
docs/team.md.)

Tiers:

* ``aggregate``: usage (tokens and costs by day, model, agent, machine) and the machines; no
  session, event, title, path or text row at all.
* ``own``: the sessions and events of the machines named with ``--machines``, and aggregates.
  ``agtail pg remove-machine`` takes the machine out of every reader's list
  (:func:`drop_machine`): its history, if kept, is no longer theirs to read.
* ``project``: the sessions and events whose project (its git root, or name) is one named with
  ``--projects``, those the user of their machine labelled ``share=team`` (``shared``, kept by
  every push), and aggregates.
* ``all``: everything (the team server's behaviour without readers).

A revoked reader, or a token that matches nothing, sees nothing; so does a query that carries
no caller at all.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from agtaild.errors import NotFound, Refused, UsageError
from agtaild.pg.reader_rules import (
    AGGREGATE_POLICY,
    ALL_EVENTS_VIEW,
    EVENTS_VIEW,
    EVENTS_VIEWS,
    POLICIES,
    READS_ALL,
    SESSION_POLICY,
    TIERS,
    create_events_view,
    create_table,
    reads_all,
    session_rule,
)
from agtaild.pg.schema import require_init


def drop_machine(cur: Any, machine: str) -> list[str]:
    """Take ``machine`` out of every reader's ``--machines`` (a removed machine), in the
    caller's transaction; the readers changed. Their tokens keep working for the rest; giving
    the name again (``add-machine --reuse``) gives them nothing back by itself."""
    cur.execute(
        "UPDATE agtail_readers SET machines = array_remove(machines, %s) WHERE %s = ANY(machines)"
        " RETURNING name",
        (machine, machine),
    )
    return sorted(r[0] for r in cur.fetchall())


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_reader(
    conn: Any, name: str, tier: str, *, machines: list[str], projects: list[str], reuse: bool = False
) -> dict[str, Any]:
    """A reader and its token (returned this once). An existing name is refused unless
    ``reuse`` (then its old token stops working)."""
    if tier not in TIERS:
        raise UsageError(f"--tier {tier!r}: one of {', '.join(TIERS)}")
    if tier == "own" and not machines:
        raise UsageError("--tier own needs --machines (the machines whose sessions this reader reads)")
    if tier == "project" and not projects:
        raise UsageError("--tier project needs --projects (the projects shared with this reader)")
    require_init(conn)
    token = "agtr_" + secrets.token_urlsafe(32)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT revoked FROM agtail_readers WHERE name = %s FOR UPDATE", (name,))
        found = cur.fetchone()
        if found is not None and not reuse:
            state = "was revoked" if found[0] else "exists"
            raise Refused(f"reader {name!r} {state}: choose another name, or --reuse to give it a new token")
        unknown, removed = [], []
        if machines:
            cur.execute(
                "SELECT m FROM unnest(%s::text[]) m WHERE m NOT IN (SELECT machine FROM machines)",
                (machines,),
            )
            unknown = [m for (m,) in cur.fetchall()]
            cur.execute(
                "SELECT m FROM unnest(%s::text[]) m WHERE EXISTS (SELECT 1 FROM agtail_logins l WHERE l.kind = 'machine'"
                " AND l.name = m) AND NOT EXISTS (SELECT 1 FROM agtail_logins l WHERE l.kind = 'machine'"
                " AND l.name = m AND l.removed IS NULL)",
                (machines,),
            )
            removed = [m for (m,) in cur.fetchall()]
        cur.execute(
            "INSERT INTO agtail_readers (name, tier, machines, projects, token_hash) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (name) DO UPDATE SET tier = excluded.tier, machines = excluded.machines,"
            " projects = excluded.projects, token_hash = excluded.token_hash, created = now(), revoked = NULL",
            (name, tier, machines, projects, token_hash(token)),
        )
    return {
        "reader": name,
        "tier": tier,
        "token": token,
        "machines": machines,
        "projects": projects,
        **({"unknown_machines": unknown} if unknown else {}),
        **({"removed_machines": removed} if removed else {}),
    }


def remove_reader(conn: Any, name: str) -> dict[str, Any]:
    """Revoke a reader: its token answers nothing from the next query on."""
    require_init(conn)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("UPDATE agtail_readers SET revoked = now() WHERE name = %s AND revoked IS NULL", (name,))
        if not cur.rowcount:
            cur.execute("SELECT 1 FROM agtail_readers WHERE name = %s", (name,))
            if cur.fetchone() is None:
                raise NotFound(f"no reader named {name!r}")
    return {"reader": name, "revoked": True}


def list_readers(conn: Any) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT name, tier, machines, projects, created, revoked FROM agtail_readers ORDER BY name"
        )
        rows = cur.fetchall()
    conn.commit()
    return [
        {
            "reader": n,
            "tier": t,
            "machines": m,
            "projects": p,
            "created": c.isoformat(),
            "revoked": r.isoformat() if r else None,
        }
        for n, t, m, p, c, r in rows
    ]


def check_token(cur: Any, token: str) -> str | None:
    """The caller value of an active reader's token, or None."""
    digest = token_hash(token)
    cur.execute("SELECT 1 FROM agtail_readers WHERE token_hash = %s AND revoked IS NULL", (digest,))
    return digest if cur.fetchone() is not None else None


__all__ = [
    "AGGREGATE_POLICY",
    "ALL_EVENTS_VIEW",
    "EVENTS_VIEW",
    "EVENTS_VIEWS",
    "POLICIES",
    "READS_ALL",
    "SESSION_POLICY",
    "TIERS",
    "add_reader",
    "check_token",
    "create_events_view",
    "create_table",
    "drop_machine",
    "list_readers",
    "reads_all",
    "remove_reader",
    "session_rule",
    "token_hash",
]
