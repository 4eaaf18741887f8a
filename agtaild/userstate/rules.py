"""Rules: a label for every present and future session a filter holds for.

A rule is user state (kept in ``state.sqlite3``'s ``rules`` table, carried as the rest is):
its filter text (agtaild.index.where parses it: this layer only keeps it), the label's key
and value. The query layer applies the rules after each index update and when a rule is
added (agtaild.query.rules), as changes by ``rule``: they never overwrite what a user or an
agent set, and a label someone removed stays removed (the removal is kept as a row).
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import NotFound
from agtaild.userstate import checks
from agtaild.userstate.store import Ref, UserState

#: Rules one store may hold (each is a pass over the sessions after an index update).
MAX_RULES = 200


def add(store: UserState, filter_text: str, key: str, value: str) -> int:
    """The new rule's id (its filter checked by the caller, its label here)."""
    key, value = checks.key(key), checks.value(value)
    with store._lock:
        db = store.db
        db.execute("BEGIN IMMEDIATE")
        try:
            (n,) = db.execute("SELECT count(*) FROM rules").fetchone()
            if n >= MAX_RULES:
                from agtaild.errors import UsageError

                raise UsageError(f"there are {n} rules already; at most {MAX_RULES}")
            cur = db.execute(
                "INSERT INTO rules (filter, key, value, at) VALUES (?, ?, ?, ?)", (filter_text, key, value, store._clock())
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return int(cur.lastrowid or 0)


def listed(store: UserState) -> list[dict[str, Any]]:
    if not store.path.exists():
        return []
    with store._lock:
        rows = store.db.execute("SELECT id, filter, key, value, at FROM rules ORDER BY id").fetchall()
    return [{"id": i, "filter": f, "key": k, "value": v, "at": at} for i, f, k, v, at in rows]


def remove(store: UserState, rule_id: int) -> dict[str, Any]:
    """Take a rule away, and the labels it put on that are still the rule's."""
    with store._lock:
        db = store.db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT id, filter, key, value FROM rules WHERE id = ?", (rule_id,)).fetchone()
            if row is None:
                raise NotFound(f"no rule {rule_id} (agtail rules lists them)")
            db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
            _, filter_text, key, value = row
            held = db.execute(
                "SELECT collection, agent, sid FROM labels WHERE key = ? AND value = ? AND who = 'rule'", (key, value)
            ).fetchall()
            now = store._clock()
            for collection, agent, sid in held:
                db.execute(
                    "DELETE FROM labels WHERE collection = ? AND agent = ? AND sid = ? AND key = ?", (collection, agent, sid, key)
                )
                db.execute(
                    "INSERT INTO changes (at, who, collection, agent, sid, what, key, value) VALUES (?, 'rule', ?, ?, ?, 'label', ?, NULL)",
                    (now, collection, agent, sid, key),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return {"id": rule_id, "filter": filter_text, "key": key, "value": value, "removed_labels": len(held)}


def holders(store: UserState, key: str) -> set[Ref]:
    """Sessions with any row for label ``key`` (set, or removed by someone): a rule leaves them be."""
    if not store.path.exists():
        return set()
    with store._lock:
        return {(r[0], r[1], r[2]) for r in store.db.execute("SELECT collection, agent, sid FROM labels WHERE key = ?", (key,))}
