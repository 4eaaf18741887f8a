"""`agtail label`, `star`/`unstar`, `title`, `hide`/`unhide`: the user's own order on sessions.

Each names its sessions (AGENT:ID, a unique id prefix is enough), finds them through the
backend, and writes the change into this machine's user state (agtaild.userstate), which the
daemon reads on every answer: no restart, and no rebuild of the index touches it. A change is
the user's and wins over what an agent or a rule set. Bad input (a malformed key, control
characters, too long a value) is refused before anything is written.
"""

from __future__ import annotations

import argparse
from typing import Any

from agtaild.errors import UsageError


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("label", parents=[common], help="add (or --remove) labels on a session",
                       description="Label a session: KEY or KEY=VALUE, several at once; --remove takes them off.")  # fmt: skip
    p.add_argument("session", metavar="AGENT:ID")
    p.add_argument("labels", nargs="+", metavar="KEY[=VALUE]")
    p.add_argument("--remove", action="store_true", help="take these labels off")
    p.set_defaults(func=cmd_label)
    for name, what, on in (("star", "star sessions", True), ("unstar", "take the star off", False),
                           ("hide", "hide sessions from list and search (nothing native is touched)", True),
                           ("unhide", "show hidden sessions again", False)):  # fmt: skip
        p = sub.add_parser(name, parents=[common], help=what, description=what[0].upper() + what[1:] + ".")
        p.add_argument("sessions", nargs="+", metavar="AGENT:ID")
        p.set_defaults(func=cmd_mark, mark="star" if name.endswith("star") else "hide", on=on)
    p = sub.add_parser(
        "title", parents=[common], help="give a session a title of your own (--clear: the agent's again)"
    )
    p.add_argument("session", metavar="AGENT:ID")
    p.add_argument("text", nargs="?", metavar="TEXT")
    p.add_argument("--clear", action="store_true", help="remove your title")
    p.set_defaults(func=cmd_title)


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

    labels = [checks.parse_label(x) for x in ctx.args.labels]
    (ref,) = _refs(ctx, [ctx.args.session])
    return _apply(ctx, [Change(ref, "label", None if ctx.args.remove else v, key=k) for k, v in labels])


def cmd_mark(ctx: Any) -> int:
    from agtaild.userstate.store import Change

    refs = _refs(ctx, ctx.args.sessions)
    return _apply(ctx, [Change(ref, ctx.args.mark, "1" if ctx.args.on else None) for ref in refs])


def cmd_title(ctx: Any) -> int:
    from agtaild.userstate import checks
    from agtaild.userstate.store import Change

    if ctx.args.clear == (ctx.args.text is not None):
        raise UsageError("agtail title AGENT:ID TEXT, or agtail title AGENT:ID --clear")
    text = None if ctx.args.clear else checks.title(ctx.args.text)
    (ref,) = _refs(ctx, [ctx.args.session])
    return _apply(ctx, [Change(ref, "title", text)])
