"""`agtail import chatgpt|claude-ai|gemini FILE.zip [--collection NAME] [--dry-run]`.

A chat service's data export becomes a collection of the import store
(agtaild.store.chat_import; docs/sync.md, "Chat services' exports"). The report goes to
stdout as JSON with --json, else a summary to stderr. Exit 2 when the file is not a readable
export of that service (nothing is written).
"""

from __future__ import annotations

import argparse
from typing import Any

from agtaild.words import count

#: The services `agtail import` reads (the ``export_service`` of their adapters).
SERVICES = ("chatgpt", "claude-ai", "gemini")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("import", parents=[common], help="a chat service's data export (zip) as a collection",
                       description="Read a ChatGPT, Claude.ai or Gemini Apps (Google Takeout) data export into "
                       "the import store, one file per conversation; the sessions are searchable and never resumable.")  # fmt: skip
    p.add_argument("service", choices=SERVICES, help="whose export the file is")
    p.add_argument("file", metavar="FILE.zip", help="the export as downloaded")
    p.add_argument(
        "--collection", metavar="NAME", help="the collection to import into (default: the service's name)"
    )
    p.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    p.set_defaults(func=cmd_import)


def cmd_import(ctx: Any) -> int:
    from agtaild.cli.sync import _check_named, _refresh_index
    from agtaild.store.chat_import import import_export

    a = ctx.args
    _check_named(a.collection)
    rep = import_export(ctx.store_config, a.service, a.file, a.collection, dry_run=a.dry_run)
    changed = rep["new"] or rep["updated"] or rep["removed"]
    if changed and not a.dry_run:
        _refresh_index(ctx)
    if ctx.json:
        ctx.out_json(rep)
        return 0
    verb = "would import" if a.dry_run else "imported"
    ctx.err(
        f"{verb} {count(rep['conversations'], 'conversation')} into collection {rep['collection']} "
        f"({rep['new']} new, {rep['updated']} updated, {rep['unchanged']} unchanged; "
        f"{rep['kept']} kept that the export no longer has, {rep['removed']} merged into others)"
    )
    return 0
