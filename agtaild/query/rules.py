"""Applying the rules (agtaild.userstate.rules): after every index update that changed
something, and when a rule is added, each rule's filter (agtaild.index.where) is run over the
sessions and its label put, as the rule's, on every session that has no row for that key yet.

A session whose labels are at the limit is skipped, not an error: a rule must never stop an
index update. What a user or an agent set, or removed, is left as it is.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from agtaild.errors import UsageError

log = logging.getLogger("agtaild.rules")
Ref = tuple[str, str, str]


def targets(db: sqlite3.Connection, store: Any, rule: dict[str, Any]) -> list[Ref]:
    """The sessions the rule would label now."""
    from agtaild.index.where import parse
    from agtaild.userstate.allowlist import allowed
    from agtaild.userstate.rules import holders

    taken = holders(store, rule["key"])
    flt = parse(rule["filter"], what=f"rule {rule['id']}")
    return [ref for ref in flt.refs(db, sorted(allowed(store))) if ref not in taken]


def apply_rule(db: sqlite3.Connection, store: Any, rule: dict[str, Any]) -> int:
    from agtaild.userstate.store import Change

    refs = targets(db, store, rule)
    if not refs:
        return 0
    batch = [Change(ref, "label", rule["value"], key=rule["key"], who="rule") for ref in refs]
    try:
        return sum(1 for _, ok in store.apply(batch) if ok)
    except UsageError:  # a session at its label limit: the others still get theirs
        done = 0
        for change in batch:
            try:
                done += sum(1 for _, ok in store.apply([change]) if ok)
            except UsageError:
                continue
        return done


def apply_rules(svc: Any) -> int:
    """Every rule over the index as it is now; the labels put on. Never raises for a bad rule
    (it is logged and skipped)."""
    import os

    from agtaild.userstate.rules import listed

    if not os.path.exists(os.path.join(svc.config.data_dir, "state.sqlite3")):
        return 0
    store = svc.state
    rules = listed(store)
    if not rules:
        return 0
    db = svc._reader()
    done = 0
    for rule in rules:
        try:
            done += apply_rule(db, store, rule)
        except (UsageError, sqlite3.Error) as exc:
            log.warning("rule %s (%s) was not applied: %s", rule["id"], rule["filter"], exc)
    return done
