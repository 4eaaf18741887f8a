"""The user's own state of a machine's sessions on the team server: labels, stars, titles
and hides (agtaild.userstate), carried by every ``agtail pg push``.

The team database keeps them in ``session_state``, one row per session that has any, keyed
like the sessions (machine, agent, session id, collection) and under the same row-level
security: a machine writes only its own rows (agtaild.pg.roles), a reader sees the state of
the sessions it may read (agtaild.pg.readers). A push reads the local ``state.sqlite3``
read-only and sends the difference: new and changed rows are written, rows whose session has
no state any more are deleted, and each session whose state changed gets a new ``pushed_at``
(the team server's change feed). A state that cannot be read leaves the team's rows as they
were: a read error never clears a label.

The team server shows them as the local daemon does (each session's ``state``, the user's title
as ``title``, the agent's kept as ``agent_title``) and takes the same filters: ``label``,
``starred``, ``hidden`` (hidden sessions are left out of lists and search unless asked for).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

Ref = tuple[str, str, str]  # (agent, sid, collection)


def local_state(state: Path) -> dict[Ref, dict[str, Any]] | None:
    """Every session's current state in ``state`` (only sessions that have any); None when it
    cannot be read."""
    if not state.is_file():
        return {}
    out: dict[Ref, dict[str, Any]] = {}
    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            labels = db.execute(
                "SELECT agent, sid, collection, key, value FROM labels WHERE value IS NOT NULL"
            ).fetchall()
            marks = db.execute(
                "SELECT agent, sid, collection, mark, value FROM marks WHERE value IS NOT NULL"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None

    def entry(agent: str, sid: str, collection: str | None) -> dict[str, Any]:
        return out.setdefault(
            (str(agent), str(sid), str(collection or "")),
            {"labels": {}, "starred": False, "hidden": False, "title": None},
        )

    for agent, sid, collection, key, value in labels:
        entry(agent, sid, collection)["labels"][str(key)] = str(value)
    for agent, sid, collection, mark, value in marks:
        e = entry(agent, sid, collection)
        if mark == "title":
            e["title"] = str(value)
        elif mark == "star":
            e["starred"] = True
        elif mark == "hide":
            e["hidden"] = True
    return out


def _row(state: dict[str, Any]) -> tuple[str, bool, bool, str | None]:
    """A session's state as it may leave this machine: a secret in a label's value or in a
    title (an agent may set one) is masked, as everything a push sends is."""
    from agtaild.secrets import mask

    labels = {key: mask(value) for key, value in state["labels"].items()}
    title = mask(state["title"]) if state["title"] else None
    return json.dumps(labels, sort_keys=True, ensure_ascii=False), state["starred"], state["hidden"], title


def sync_state(team: Any, machine: str, state: Path) -> int:
    """Bring ``machine``'s rows of ``session_state`` to what ``state`` holds (one transaction);
    the number of sessions whose state changed. Only sessions the team database has are sent."""
    local = local_state(state)
    if local is None:
        return 0
    wanted = {ref: _row(s) for ref, s in local.items()}
    changed: list[Ref] = []
    with team.transaction(), team.cursor() as cur:
        cur.execute(
            "SELECT agent, sid, collection, labels::text, starred, hidden, title FROM session_state WHERE machine = %s",
            (machine,),
        )
        have = {
            (a, s, c): (json.dumps(json.loads(lab), sort_keys=True, ensure_ascii=False), st, hi, ti)
            for a, s, c, lab, st, hi, ti in cur.fetchall()
        }
        gone = [ref for ref in have if ref not in wanted]
        new = [(ref, row) for ref, row in wanted.items() if have.get(ref) != row]
        if gone:
            cols = [list(x) for x in zip(*gone, strict=True)]
            cur.execute(
                "DELETE FROM session_state st USING unnest(%s::text[], %s::text[], %s::text[]) AS u(agent, sid, collection)"
                " WHERE st.machine = %s AND st.agent = u.agent AND st.sid = u.sid AND st.collection = u.collection",
                (*cols, machine),
            )
            changed += gone
        if new:
            cols = [list(x) for x in zip(*[(*ref, *row) for ref, row in new], strict=True)]
            cur.execute(
                "INSERT INTO session_state (machine, agent, sid, collection, labels, starred, hidden, title)"
                " SELECT s.machine, s.agent, s.sid, s.collection, u.labels::jsonb, u.starred, u.hidden, u.title"
                " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::boolean[], %s::boolean[], %s::text[])"
                " AS u(agent, sid, collection, labels, starred, hidden, title)"
                " JOIN sessions s ON s.machine = %s AND s.agent = u.agent AND s.sid = u.sid AND s.collection = u.collection"
                " ON CONFLICT (machine, agent, sid, collection) DO UPDATE SET labels = excluded.labels,"
                " starred = excluded.starred, hidden = excluded.hidden, title = excluded.title, changed_at = now()"
                " RETURNING agent, sid, collection",
                (*cols, machine),
            )
            changed += [(a, s, c) for a, s, c in cur.fetchall()]
        if changed:
            cols = [list(x) for x in zip(*changed, strict=True)]
            cur.execute(
                "UPDATE sessions s SET pushed_at = now() FROM unnest(%s::text[], %s::text[], %s::text[])"
                " AS u(agent, sid, collection) WHERE s.machine = %s AND s.agent = u.agent AND s.sid = u.sid"
                " AND s.collection = u.collection",
                (*cols, machine),
            )
    return len(changed)


def annotate(cur: Any, docs: dict[int, dict[str, Any]]) -> None:
    """Give each session document (by session row id) its ``state``, as the local daemon does."""
    if not docs:
        return
    cur.execute(
        "SELECT s.id, st.labels::text, st.starred, st.hidden, st.title FROM session_state st"
        " JOIN sessions s USING (machine, agent, sid, collection) WHERE s.id = ANY(%s)",
        (list(docs),),
    )
    for rid, labels, starred, hidden, title in cur.fetchall():
        d = docs.get(rid)
        if d is None:
            continue
        d["state"] = {
            "labels": json.loads(labels),
            "starred": bool(starred),
            "hidden": bool(hidden),
            "title": title,
        }
        if title:
            d["agent_title"] = d.get("title")
            d["title"] = title


def _exists(a: str, condition: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM session_state st WHERE st.machine = {a}.machine AND st.agent = {a}.agent"
        f" AND st.sid = {a}.sid AND st.collection = {a}.collection AND {condition})"
    )


def filter_sql(
    a: str, *, label: str | None, starred: bool | None, hidden: str
) -> tuple[list[str], list[Any]]:
    """The conditions of the state filters on sessions alias ``a``."""
    where: list[str] = []
    args: list[Any] = []
    if label is not None:
        key, sep, value = label.partition("=")
        if sep:
            where.append(_exists(a, "st.labels ->> %s = %s"))
            args += [key, value]
        else:
            where.append(_exists(a, "st.labels ? %s"))
            args.append(key)
    if starred:
        where.append(_exists(a, "st.starred"))
    if hidden == "exclude":
        where.append("NOT " + _exists(a, "st.hidden"))
    elif hidden == "only":
        where.append(_exists(a, "st.hidden"))
    return where, args
