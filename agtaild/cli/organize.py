"""`agtail label`, `star`/`unstar`, `title`, `hide`/`unhide`, `rules`: the user's own order on
sessions.

Each names its sessions (AGENT:ID, a unique id prefix is enough) or takes a filter instead
(``--where 'messages<2'``, agtaild.index.where; ``--dry-run`` shows what would change), finds
them through the backend, and writes the change into this machine's user state
(agtaild.userstate), which the daemon reads on every answer: no restart, and no rebuild of the
index touches it. A change is the user's and wins over what an agent or a rule set.
``label --rule FILTER`` keeps a rule that labels every present and future session the filter
holds for. Bad input (a malformed key, control characters, too long a value, a bad filter) is
refused before anything is written.
"""

from __future__ import annotations

import argparse
from typing import Any

from agtaild.errors import UsageError


def _bulk_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--where", metavar="FILTER", help="every session this filter holds for instead of ids, e.g. 'messages<2' (docs/organize.md)")
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    p.add_argument("--yes", action="store_true", help="with --where: go on even when the filter holds for every session")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("label", parents=[common], help="add (or --remove) labels on sessions, or keep a rule that does",
                       description="Label a session: KEY or KEY=VALUE, several at once; --remove takes them off. "
                                   "--where FILTER labels every session it holds for; --rule FILTER also every future one.")  # fmt: skip
    p.add_argument("items", nargs="+", metavar="[AGENT:ID] KEY[=VALUE]", help="the session (unless --where or --rule), then labels")
    p.add_argument("--remove", action="store_true", help="take these labels off")
    p.add_argument("--rule", metavar="FILTER", help="keep a rule: label every present and future session FILTER holds for")
    _bulk_options(p)
    p.set_defaults(func=cmd_label)
    for name, what, on in (("star", "star sessions", True), ("unstar", "take the star off", False),
                           ("hide", "hide sessions from list, search and stats (nothing native is touched)", True),
                           ("unhide", "show hidden sessions again", False)):  # fmt: skip
        p = sub.add_parser(name, parents=[common], help=what, description=what[0].upper() + what[1:] + ".")
        p.add_argument("sessions", nargs="*", metavar="AGENT:ID")
        _bulk_options(p)
        p.set_defaults(func=cmd_mark, mark="star" if name.endswith("star") else "hide", on=on)
    p = sub.add_parser(
        "title", parents=[common], help="give a session a title of your own (--clear: the agent's again)"
    )
    p.add_argument("session", metavar="AGENT:ID")
    p.add_argument("text", nargs="?", metavar="TEXT")
    p.add_argument("--clear", action="store_true", help="remove your title")
    p.set_defaults(func=cmd_title)
    p = sub.add_parser("rules", parents=[common], help="the label rules (label --rule adds one)",
                       description="List the label rules; --remove ID takes one away with the labels it put on.")  # fmt: skip
    p.add_argument("--remove", type=int, metavar="ID", help="remove this rule and the labels it put on")
    p.set_defaults(func=cmd_rules)


def _refs(ctx: Any, names: list[str]) -> list[tuple[str, str, str]]:
    from agtaild.cli.query import open_backend
    from agtaild.cli.refs import ref_params

    backend = open_backend(ctx)
    try:
        refs = []
        for name in names:
            s = backend.call("sessions.get", ref_params(name))["session"]
            refs.append((s.get("collection") or "", s["agent"], s["id"]))
        return refs
    finally:
        backend.close()


def _selected(ctx: Any, where: str) -> list[dict[str, Any]]:
    """Every session (hidden ones too) ``where`` holds for, checked before the backend runs it.
    A filter that holds for every session needs ``--yes`` (or ``--dry-run`` to look first)."""
    from agtaild.cli.query import open_backend
    from agtaild.index.where import parse

    parse(where)
    backend = open_backend(ctx)
    try:
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"where": where, "hidden": "include", "limit": 1000, "total": True}
        while True:
            page = backend.call("sessions.list", params)
            found += page["sessions"]
            if not page.get("next"):
                break
            params = {**params, "cursor": page["next"], "total": False}
        if found and not (ctx.args.yes or ctx.args.dry_run):
            every = backend.call("sessions.list", {"hidden": "include", "limit": 1, "total": True}).get("total")
            if every is not None and len(found) >= every:
                raise UsageError(
                    f"--where {where!r} holds for every session ({every}): look with --dry-run first, then add --yes"
                )
        return found
    finally:
        backend.close()


def _ref(s: dict[str, Any]) -> tuple[str, str, str]:
    return (s.get("collection") or "", s["agent"], s["id"])


def _dry_run(ctx: Any, sessions: list[dict[str, Any]], doing: str) -> int:
    if ctx.json:
        ctx.out_json({"dry_run": True, "would": doing, "sessions": [
            {"agent": s["agent"], "id": s["id"], "collection": s.get("collection"), "title": s.get("title")} for s in sessions]})  # fmt: skip
        return 0
    print(f"would {doing} {len(sessions)} session{'s' if len(sessions) != 1 else ''} (nothing changed):")
    for s in sessions:
        print(f"  {s['agent']}:{s['id']}  {(s.get('title') or '')[:70]}")
    return 0


def _apply(ctx: Any, changes: list[Any]) -> int:
    from agtaild.userstate.store import UserState

    store = UserState(ctx.config.data_dir)
    try:
        done = store.apply(changes)
    finally:
        store.close()
    rows = [{"agent": c.ref[1], "id": c.ref[2], "collection": c.ref[0] or None, "what": c.what,
             "key": c.key or None, "value": c.value, "accepted": ok} for c, ok in done]  # fmt: skip
    if ctx.json:
        ctx.out_json({"changes": rows})
    else:
        for row in rows:
            thing = f"label {row['key']}" if row["what"] == "label" else row["what"]
            verb = (
                ("set" if row["value"] is not None else "removed")
                if row["accepted"]
                else "kept as it was (set by you before)"
            )
            print(f"{row['agent']}:{row['id']}: {thing} {verb}")
    return 0


def cmd_label(ctx: Any) -> int:
    from agtaild.userstate import checks
    from agtaild.userstate.store import Change

    a = ctx.args
    if a.rule is not None and (a.where is not None or a.remove):
        raise UsageError("--rule takes labels only (not --where or --remove); agtail rules --remove ID takes a rule away")
    items = list(a.items)
    session = None if (a.rule is not None or a.where is not None) else items.pop(0)
    if not items:
        raise UsageError("name at least one label: KEY or KEY=VALUE")
    labels = [checks.parse_label(x) for x in items]
    if a.rule is not None:
        from agtaild.cli.organize_rules import add_rules

        return add_rules(ctx, a.rule, labels)
    if session is None:
        sessions = _selected(ctx, a.where)
        doing = ("take " if a.remove else "put ") + ", ".join(k if not v else f"{k}={v}" for k, v in labels)
        doing += " off" if a.remove else " on"
        if a.dry_run:
            return _dry_run(ctx, sessions, doing)
        refs = [_ref(s) for s in sessions]
    else:
        if a.dry_run:
            raise UsageError("--dry-run goes with --where or --rule")
        refs = _refs(ctx, [session])
    return _apply(ctx, [Change(ref, "label", None if a.remove else v, key=k) for ref in refs for k, v in labels])


def cmd_mark(ctx: Any) -> int:
    from agtaild.userstate.store import Change

    a = ctx.args
    if bool(a.sessions) == (a.where is not None):
        raise UsageError(f"agtail {'un' if not a.on else ''}{a.mark}: name sessions (AGENT:ID …) or give --where FILTER")
    if a.where is not None:
        sessions = _selected(ctx, a.where)
        if a.dry_run:
            return _dry_run(ctx, sessions, ("" if a.on else "un") + a.mark)
        refs = [_ref(s) for s in sessions]
    else:
        if a.dry_run:
            raise UsageError("--dry-run goes with --where")
        refs = _refs(ctx, a.sessions)
    return _apply(ctx, [Change(ref, a.mark, "1" if a.on else None) for ref in refs])


def cmd_title(ctx: Any) -> int:
    from agtaild.userstate import checks
    from agtaild.userstate.store import Change

    if ctx.args.clear == (ctx.args.text is not None):
        raise UsageError("agtail title AGENT:ID TEXT, or agtail title AGENT:ID --clear")
    text = None if ctx.args.clear else checks.title(ctx.args.text)
    (ref,) = _refs(ctx, [ctx.args.session])
    return _apply(ctx, [Change(ref, "title", text)])


def cmd_rules(ctx: Any) -> int:
    from agtaild.cli.organize_rules import list_or_remove

    return list_or_remove(ctx)
