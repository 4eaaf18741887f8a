"""`agtail label --rule FILTER KEY[=VALUE]…` and `agtail rules`: labels for every present and
future session a filter holds for (agtaild.userstate.rules).

Adding a rule labels the sessions of today at once (through the backend: the daemon's index
when one runs); every later index update labels the new ones (agtaild.query.rules). The
labels are the rule's: what a user or an agent set, or took off, is left as it is.
"""

from __future__ import annotations

from typing import Any


def add_rules(ctx: Any, filter_text: str, labels: list[tuple[str, str]]) -> int:
    from agtaild.cli.query import open_backend
    from agtaild.index.where import parse
    from agtaild.userstate import rules
    from agtaild.userstate.store import Change, UserState

    flt = parse(filter_text, what="--rule")
    backend = open_backend(ctx)
    try:
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"where": flt.text, "hidden": "include", "limit": 1000}
        while True:
            page = backend.call("sessions.list", params)
            found += page["sessions"]
            if not page.get("next"):
                break
            params = {**params, "cursor": page["next"]}
    finally:
        backend.close()
    refs = [(s.get("collection") or "", s["agent"], s["id"]) for s in found]
    store = UserState(ctx.config.data_dir)
    try:
        out = []
        for key, value in labels:
            free = [r for r in refs if r not in rules.holders(store, key)]
            if ctx.args.dry_run:
                out.append({"key": key, "value": value, "filter": flt.text, "id": None, "labelled": len(free)})
                continue
            rule_id = rules.add(store, flt.text, key, value)
            done = store.apply([Change(r, "label", value, key=key, who="rule") for r in free]) if free else []
            out.append({"key": key, "value": value, "filter": flt.text, "id": rule_id, "labelled": sum(1 for _, ok in done if ok)})
    finally:
        store.close()
    if ctx.json:
        ctx.out_json({"rules": out, "dry_run": bool(ctx.args.dry_run)})
        return 0
    for r in out:
        label = r["key"] if not r["value"] else f"{r['key']}={r['value']}"
        if ctx.args.dry_run:
            print(f"would keep a rule: {label} on every session with {r['filter']}; it would label {r['labelled']} now (nothing changed)")
        else:
            print(f"rule {r['id']}: {label} on every session with {r['filter']}; labelled {r['labelled']} now")
    return 0


def list_or_remove(ctx: Any) -> int:
    from agtaild.userstate import rules
    from agtaild.userstate.store import UserState

    store = UserState(ctx.config.data_dir)
    try:
        if ctx.args.remove is not None:
            gone = rules.remove(store, ctx.args.remove)
            if ctx.json:
                ctx.out_json({"removed": gone})
            else:
                print(f"rule {gone['id']} removed ({gone['filter']}); {gone['removed_labels']} of its labels taken off")
            return 0
        listed = rules.listed(store)
    finally:
        store.close()
    if ctx.json:
        ctx.out_json({"rules": listed})
        return 0
    if not listed:
        ctx.err("agtail: no rules (agtail label --rule FILTER KEY=VALUE adds one)")
        return 0
    for r in listed:
        label = r["key"] if not r["value"] else f"{r['key']}={r['value']}"
        print(f"{r['id']:>4}  {label}  {r['filter']}")
    return 0
