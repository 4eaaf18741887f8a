"""`agtail state export [--to FILE]` and `agtail state import FILE`: a backup of the user's
state (labels, stars, titles, hides, rules, the secrets allowlist) as one JSON document,
checked whole on import and merged with precedence (agtaild.userstate.backup)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("state", parents=[common], help="back up (export) or restore (import) labels, stars, titles, hides and rules",
                       description="Back up the user's state of the sessions (state.sqlite3) as JSON, or merge such a backup in.")  # fmt: skip
    ssub = p.add_subparsers(dest="state_command", metavar="{export,import}")
    e = ssub.add_parser("export", parents=[common], help="write the backup (to stdout unless --to)")
    e.add_argument("--to", metavar="FILE", help="write it to FILE (made private, replaced whole)")
    e.set_defaults(func=cmd_export)
    i = ssub.add_parser("import", parents=[common], help="merge a backup in (checked whole first)")
    i.add_argument("file", metavar="FILE", help="a backup `state export` wrote ('-': stdin)")
    i.add_argument("--dry-run", action="store_true", help="check it and say what would change; write nothing")
    i.set_defaults(func=cmd_import)
    p.set_defaults(func=lambda ctx: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def cmd_export(ctx: Any) -> int:
    import json

    from agtaild.userstate.backup import export
    from agtaild.userstate.store import UserState

    store = UserState(ctx.config.data_dir)
    try:
        doc = export(store)
    finally:
        store.close()
    data = json.dumps(doc, ensure_ascii=False, indent=1).encode() + b"\n"
    if ctx.args.to is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    from agtaild.sync.manifest import write_atomic

    target = Path(ctx.args.to).expanduser()
    if target.is_dir():
        from agtaild.errors import UsageError

        raise UsageError(f"--to {str(target)!r} is a directory; name a file")
    write_atomic(target, data)
    os.chmod(target, 0o600)
    counts = {k: len(doc[k]) for k in ("labels", "marks", "rules", "secret_allowlist")}
    if ctx.json:
        ctx.out_json({"to": str(target), **counts})
    else:
        ctx.err(
            f"wrote {target}: {counts['labels']} labels, {counts['marks']} marks, {counts['rules']} rules, "
            f"{counts['secret_allowlist']} allowlisted secrets"
        )
    return 0


def cmd_import(ctx: Any) -> int:
    from agtaild.errors import UsageError
    from agtaild.index.where import parse as parse_filter
    from agtaild.userstate.backup import MAX_BYTES, parse, restore
    from agtaild.userstate.store import UserState

    name = ctx.args.file
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            with open(Path(name).expanduser(), "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
    doc = parse(data)
    for row in doc["rules"]:
        if isinstance(row, list) and row and isinstance(row[0], str):
            parse_filter(row[0], what="a rule in the backup")
    store = UserState(ctx.config.data_dir)
    try:
        out = restore(store, doc, dry_run=ctx.args.dry_run)
    finally:
        store.close()
    if ctx.json:
        ctx.out_json({"dry_run": bool(ctx.args.dry_run), **out})
    else:
        verb = "would merge" if ctx.args.dry_run else "merged"
        ctx.err(
            f"{verb} {out['changes']} label and mark changes, {out['rules']} rules, "
            f"{out['secret_allowlist']} allowlisted secrets"
            + (" (nothing written)" if ctx.args.dry_run else "")
        )
    return 0
