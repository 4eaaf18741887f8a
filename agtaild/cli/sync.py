"""`agtail export`, `agtail sync push|pull|status|verify`, `agtail collections`.

Reports go to stdout as JSON with --json (CONTRACT: push/pull give at least
``{"files", "bytes", "skipped"}``); otherwise a summary goes to stderr. Exit 1 when any file
failed (the rest were moved; run again to resume), 3 when a remote's set was refused.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from agtaild.errors import UsageError
from agtaild.words import count

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``512M``, ``2G``, ``100000`` → bytes."""
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 500M, 2G)")
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " ")


def default_collection() -> str:
    import socket

    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname().split(".")[0]).strip(".-")
    return name or "this-machine"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from agtaild.cli.share import add_export_options

    p = sub.add_parser("export", parents=[common], help="a session as Markdown, HTML or JSON, or sessions' native files to DIR")
    p.add_argument("sessions", nargs="+", metavar="AGENT:ID")
    p.add_argument("--to", metavar="DIR|FILE|-",
                   help="native: the directory to write (created if missing); md/html/json: the file, or - "
                   "for standard output (the default)")
    add_export_options(p)
    p.add_argument("--max-file-size", type=parse_size, metavar="SIZE", help="largest file to copy (default 1G)")
    p.add_argument("--redact", action="store_true",
                   help="native: write the files with every secret masked (still valid JSONL, JSON and SQLite); "
                   "md/html/json are always masked")
    p.set_defaults(func=cmd_export)

    s = sub.add_parser("sync", parents=[common], help="push/pull sessions between machines",
                       description="Move only the difference between this machine and a REMOTE "
                       "(a directory, ssh://host/path, or http(s)://host:port of another agtaild).")
    ssub = s.add_subparsers(dest="sync_command", metavar="ACTION")
    for name, text in (("push", "send this machine's native sessions to REMOTE as collection NAME"),
                       ("pull", "copy REMOTE's collection NAME into the local import store")):
        a = ssub.add_parser(name, parents=[common], help=text, description=text)
        a.add_argument("remote", metavar="REMOTE")
        a.add_argument("--collection", metavar="NAME",
                       help="collection name (push default: this host's name)" if name == "push" else
                       "collection name (required)")
        a.add_argument("--agent", action="append", help="only this agent's sessions (repeatable)")
        a.add_argument("--dry-run", action="store_true", help="report what would move; write nothing")
        if name == "push":
            a.add_argument("--redact", action="store_true",
                           help="send every file with every secret masked (still valid JSONL, JSON and SQLite)")
            a.add_argument("--own", action="store_true",
                           help="REMOTE is one of your own machines: remember it, and do not warn about the "
                           "secrets a push to it carries")
        _transfer_options(a)
        a.set_defaults(func=cmd_push if name == "push" else cmd_pull)
    st = ssub.add_parser("status", parents=[common], help="what a push and a pull would move now")
    st.add_argument("remote", metavar="REMOTE")
    st.add_argument("--collection", metavar="NAME", help="the collection (default: this host's name)")
    _transfer_options(st)
    st.set_defaults(func=cmd_status)
    v = ssub.add_parser("verify", parents=[common], help="re-read stored copies and compare with their records")
    v.add_argument("remote", metavar="REMOTE", nargs="?", help="a directory remote (default: this machine)")
    v.add_argument("--collection", metavar="NAME")
    v.set_defaults(func=cmd_verify)
    s.set_defaults(func=lambda ctx: _usage(s))

    c = sub.add_parser("collections", parents=[common], help="list (or remove) imported collections")
    c.add_argument("action", nargs="?", choices=["list", "remove"], default="list")
    c.add_argument("name", nargs="?", help="the collection to remove")
    c.set_defaults(func=cmd_collections)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _transfer_options(a: argparse.ArgumentParser) -> None:
    a.add_argument("--max-file-size", type=parse_size, metavar="SIZE",
                   help="refuse files larger than this (default 1G)")
    a.add_argument("--token-file", metavar="FILE",
                   help="the http remote's token (its <data dir>/token) (env: AGTAIL_REMOTE_TOKEN)")


def _token(args: argparse.Namespace) -> str | None:
    path = getattr(args, "token_file", None)
    if path:
        try:
            return Path(path).expanduser().read_text().strip() or None
        except OSError as exc:
            raise UsageError(f"cannot read the token file {path}: {exc.strerror}") from None
    return os.environ.get("AGTAIL_REMOTE_TOKEN") or None


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _say_report(ctx: Any, verb: str, rep: dict[str, Any]) -> None:
    ctx.err(
        f"{verb} {count(rep['files'], 'file')}, {_human(rep['bytes'])} ({rep.get('appended', 0)} appended, "
        f"{rep.get('resumed', 0)} resumed, {rep.get('new', 0)} new, {rep.get('replaced', 0)} replaced); "
        f"{rep['skipped']} unchanged"
    )
    for c in rep.get("conflicts", []):
        kept = f"; the other copy is kept as {c['kept_as']}" if c.get("kept_as") else ""
        ctx.err(f"conflict: {c['path']} had changed on the other side{kept}")
    state = rep.get("state")
    if isinstance(state, dict) and "accepted" in state:
        ctx.err(f"labels, stars, titles and hides: {state['accepted']} of "
                f"{state.get('labels', 0) + state.get('marks', 0)} rows changed something here")
    for e in rep.get("errors", []):
        ctx.err(f"error: {e['path']}: {e['message']}")


def _finish(ctx: Any, verb: str, rep: dict[str, Any]) -> int:
    if ctx.json:
        ctx.out_json(rep)
    else:
        _say_report(ctx, verb, rep)
    return 1 if rep.get("errors") else 0


def cmd_export(ctx: Any) -> int:
    from agtaild.cli.query import open_backend
    from agtaild.cli.refs import ref_params
    from agtaild.sync.export import export_sessions

    if ctx.args.format != "native":
        from agtaild.cli.share import cmd_export_document

        return cmd_export_document(ctx)
    if not ctx.args.to:
        raise UsageError("agtail export --to DIR: the directory to write the native files to")

    sessions = []
    backend = open_backend(ctx)  # in-process: the index brought up to date first
    try:
        for ref in ctx.args.sessions:
            sessions.append(backend.call("sessions.get", ref_params(ref))["session"])
    finally:
        backend.close()
    rep = export_sessions(ctx.config, sessions, Path(ctx.args.to).expanduser().resolve(),
                          ctx.args.max_file_size, redact=ctx.args.redact)
    return _finish(ctx, f"exported {count(len(sessions), 'session')} to {rep['to']}:", rep)


def _refresh_index(ctx: Any) -> None:
    """Let the index read a pulled collection: a running daemon adopts the new collection's
    roots and updates (POST /api/v1/import/refresh); otherwise the in-process index does."""
    from agtaild.errors import AgtailError

    ctx._config = None  # the import store may have a new collection: resolve the roots again
    try:
        if not ctx.no_daemon:
            from agtail_client import Client

            client = Client.discover(ctx.resolved_data_dir)
            if client is not None:
                try:
                    status, _ = client.request("POST", "/api/v1/import/refresh")
                finally:
                    client.close()
                if status == 200:
                    return
        from agtaild.query.backend import LocalBackend

        backend = LocalBackend(ctx.config)
        try:
            backend.call("index.update", {})
        finally:
            backend.close()
    except (AgtailError, ImportError, OSError) as exc:
        ctx.err(f"agtail: the collection was written, but the index was not updated ({exc}); run `agtail index`")


def _collection_or_host(a: Any) -> str:
    """--collection, or this host's name when it is not given; an empty name is refused
    (``--collection=`` is a mistake, not a request for the default)."""
    if a.collection is None:
        return default_collection()
    _check_named(a.collection)
    return str(a.collection)


def _check_named(name: str | None) -> None:
    if name is not None and not name.strip():
        raise UsageError("--collection must not be empty; give the collection's name, or leave the option out")


def cmd_push(ctx: Any) -> int:
    from agtaild.sync.own import is_own, mark_own
    from agtaild.sync.remote import push, remote_kind

    a = ctx.args
    collection = _collection_or_host(a)
    remote_kind(a.remote)  # a malformed REMOTE is refused before anything else
    data_dir = ctx.store_config.data_dir
    if a.own and not a.dry_run:
        mark_own(data_dir, a.remote)
    own = a.own or is_own(data_dir, a.remote)
    carried, more = (None, False) if a.redact or own else _carried(ctx)
    rep = push(ctx.store_config, a.remote, collection, agents=a.agent,
               max_file_size=a.max_file_size, token=_token(a), dry_run=a.dry_run, redact=a.redact)
    rep["own_remote"] = own
    if carried is not None:
        rep["secrets_carried"] = carried
    if carried:
        ctx.err(
            f"agtail: warning: {a.remote} is not marked as one of your own machines, and this push "
            f"{'would carry' if a.dry_run else 'carried'} {'at least ' if more else ''}{count(carried, 'secret')} "
            "unmasked (`agtail secrets` "
            "lists them). Push with --redact to mask every secret in what is sent, or with --own when "
            f"{a.remote} is your own machine (docs/secrets.md)."
        )
    return _finish(ctx, "would push" if a.dry_run else "pushed", rep)


def _carried(ctx: Any) -> tuple[int | None, bool]:
    """How many secrets a push of this machine's sessions carries (None: not known), and
    whether the index's scan is still under way (then there may be more)."""
    from agtaild.cli.query import open_backend
    from agtaild.errors import AgtailError
    from agtaild.sync.own import carried_secrets

    try:
        backend = open_backend(ctx)
        try:
            return carried_secrets(backend.call, ctx.args.agent)
        finally:
            backend.close()
    except AgtailError as exc:
        ctx.err(f"agtail: warning: could not count the secrets this push carries ({exc.message})")
        return None, False


def cmd_pull(ctx: Any) -> int:
    from agtaild.sync.remote import pull

    a = ctx.args
    _check_named(a.collection)
    if not a.collection:
        raise UsageError("sync pull needs --collection NAME (`agtail sync status REMOTE` lists the collections)")
    rep = pull(ctx.store_config, a.remote, a.collection, agents=a.agent, max_file_size=a.max_file_size,
               token=_token(a), dry_run=a.dry_run)
    if not a.dry_run and rep["files"]:
        _refresh_index(ctx)
    return _finish(ctx, "would pull" if a.dry_run else "pulled", rep)


def cmd_status(ctx: Any) -> int:
    from agtaild.sync.remote import status

    a = ctx.args
    doc = status(ctx.store_config, a.remote, _collection_or_host(a),
                 max_file_size=a.max_file_size, token=_token(a))
    if ctx.json:
        ctx.out_json(doc)
        return 0
    print(f"{a.remote} ({doc['kind']}): collections {', '.join(doc.get('collections') or []) or '-'}")
    for direction in ("push", "pull"):
        rep = doc.get(direction) or {}
        if "error" in rep:
            print(f"  {direction}: {rep['error']}")
            continue
        pending = rep.get("pending", [])
        print(f"  {direction} {doc['collection']}: {count(len(pending), 'file')}, {_human(rep.get('bytes', 0))} to move, "
              f"{rep.get('skipped', 0)} unchanged, {count(len(rep.get('conflicts', [])), 'conflict')}")
        for item in pending[:20]:
            print(f"    {item['action']:8} {item['path']} ({_human(item['bytes'])})")
    for h in doc.get("history", []):
        print(f"  last {h['direction']} {h['collection']}: {h['at']} ({count(h['files'], 'file')}, {_human(h['bytes'])})")
    return 0


def cmd_verify(ctx: Any) -> int:
    from agtaild.sync.remote import verify

    _check_named(ctx.args.collection)
    doc = verify(ctx.store_config, ctx.args.remote, ctx.args.collection)
    if ctx.json:
        ctx.out_json(doc)
    else:
        for c in doc["collections"]:
            print(f"{c['path']}: {c['ok']}/{c['files']} verified; differ {len(c['differs'])}, missing "
                  f"{len(c['missing'])}, unrecorded {len(c['unrecorded'])}, partial {len(c['partials'])}, "
                  f"conflict copies {len(c['conflicts'])}")
            for d in c["differs"]:
                print(f"  differs: {d['path']}")
            for m in c["missing"]:
                print(f"  missing: {m}")
        if "archive" in doc:
            arc = doc["archive"]
            print(f"archive {arc['path']}: {arc['checked']} checked, {len(arc['differs'])} differ")
        print("clean" if doc["clean"] else "NOT clean: pull (or push) again; see docs/sync.md, Recovery")
    return 0 if doc["clean"] else 1


def cmd_collections(ctx: Any) -> int:
    from agtaild.store.imports import list_collections, remove_collection

    a = ctx.args
    if a.action == "remove":
        if not a.name:
            raise UsageError("collections remove needs the collection NAME")
        doc: Any = remove_collection(ctx.store_config, a.name)
        if ctx.json:
            ctx.out_json(doc)
        else:
            ctx.err(f"removed collection {a.name} ({count(doc['files'], 'file')}); run `agtail index` to forget its sessions")
        return 0
    rows = list_collections(ctx.store_config)
    if ctx.json:
        ctx.out_json({"collections": rows})
        return 0
    if not rows:
        ctx.err(f"no imported collections in {ctx.store_config.import_dir}")
    for r in rows:
        if "error" in r:
            print(f"{r['name']}: {r['error']}")
            continue
        agents = ", ".join(f"{k} {v['sessions']}" for k, v in sorted(r["agents"].items()))
        print(f"{r['name']:20} {r['sessions']:6} sessions  {_human(r['bytes']):>9}  last sync {r['last_sync'] or '-'}"
              f"  ({agents})")
    return 0
