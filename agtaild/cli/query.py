"""`agtail index | reindex | list | search | show | stats`: the index from the command line.

Every command asks the backend (a running agtaild, else the service in-process). In-process,
the index is first brought up to date with the native files (cheap when nothing changed:
one stat per file), so answers are never stale; a daemon keeps its index current itself.
``--no-update`` answers from the index as it is.

Heavy modules are imported inside the handlers: `agtail --help` and `agtail list` start fast.
"""

from __future__ import annotations

import os
import sys

from agtaild.errors import UsageError
from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    import argparse
    from collections.abc import Callable
    from typing import Any

#: The CONTRACT keys of `agtail index --json`; extensions follow them.
INDEX_KEYS = ("sessions", "events", "files", "bad_lines", "seconds")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    for name, full, text in (
        ("index", False, "bring the index up to date with the agents' files (incremental)"),
        ("reindex", True, "rebuild the index from scratch"),
    ):
        p = sub.add_parser(name, parents=[common], help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument(
            "--changes", action="store_true", help="also list each added, updated or removed session"
        )
        p.set_defaults(func=cmd_index, full=full)

    p = sub.add_parser(
        "list",
        parents=[common],
        help="list sessions, most recently active first",
        description="List sessions, most recently active first.",
    )
    _session_filters(p)
    p.add_argument(
        "-q", "--query", metavar="TEXT", help="only sessions with an event matching TEXT (a phrase)"
    )
    p.add_argument(
        "--limit", type=int, default=50, metavar="N", help="how many sessions (default 50, at most 1000)"
    )
    p.add_argument("--cursor", metavar="C", help='continue after a previous page (its "next")')
    p.add_argument(
        "--where",
        metavar="FILTER",
        help="only sessions this filter holds for, e.g. 'messages<2' (docs/organize.md)",
    )
    _no_update(p)
    _state_options(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "search",
        parents=[common],
        help="full-text search over every session",
        description="Search message text, thinking, tool input and tool results. The query is "
        "literal text (quotes, *, -, NEAR are just characters); CJK text matches as a substring.",
    )
    p.add_argument(
        "query", nargs="+", metavar="QUERY", help="the text to find (several words are one phrase)"
    )
    p.add_argument("--agent", metavar="A", help="only this agent's sessions")
    p.add_argument("--kind", metavar="K", help="only events of this kind (text, thinking, tool_use, …)")
    p.add_argument("--session", metavar="AGENT:ID", help="only this session (ID may be a unique prefix)")
    p.add_argument("--cwd", metavar="P", help="only sessions in directory P or below")
    p.add_argument("--project", metavar="NAME", help="only sessions of this project (last part of the cwd)")
    p.add_argument("--since", metavar="WHEN", help="only events at or after WHEN (date, time or age like 7d)")
    p.add_argument("--until", metavar="WHEN", help="only events before WHEN (a date includes that day)")
    p.add_argument(
        "--machine",
        metavar="NAME",
        help="only sessions pushed by this machine (against a team server: docs/team.md)",
    )
    p.add_argument(
        "--mode",
        choices=("phrase", "prefix", "words", "regex", "semantic", "hybrid"),
        help="phrase (default): the words in order; prefix: the last word may be unfinished; "
        "words: all words, any order (at most 32); regex: an RE2 regular expression (Python syntax "
        "without backreferences or lookaround; a scan); semantic: by meaning (agtail embeddings); "
        "hybrid: full-text and meaning fused (the default once the vectors cover the index). "
        "A search stops after 10 s",
    )
    p.add_argument(
        "--limit", type=int, default=20, metavar="N", help="how many hits (default 20, at most 1000)"
    )
    p.add_argument("--cursor", metavar="C", help='continue after a previous page (its "next")')
    _no_update(p)
    _state_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "show",
        parents=[common],
        help="print a session's transcript",
        description="Print a session and all its events, read from the index.",
    )
    p.add_argument(
        "session", metavar="AGENT:ID", help="the session (ID may be a unique prefix; AGENT: may be left out)"
    )
    p.add_argument("--collection", metavar="C", help="the copy imported into collection C (default: native)")
    p.add_argument(
        "--machine", metavar="NAME", help="the copy pushed by this machine (against a team server)"
    )
    p.add_argument("--full", action="store_true", help="do not abbreviate long texts and tool results")
    p.add_argument(
        "--branches",
        action="store_true",
        help="print every conversation branch (rewinds, edited prompts) with fork markers, "
        "not only the active one",
    )
    p.add_argument(
        "--no-diff",
        dest="diffs",
        action="store_false",
        help="print the raw input of edit tools instead of a diff",
    )
    p.add_argument(
        "--reveal",
        action="store_true",
        help="print secrets unmasked (in-process, or over the daemon's unix socket as the user who runs it; "
        "refused over TCP); every reveal is logged in <data dir>/reveal.log",
    )
    p.add_argument(
        "--patch",
        action="store_true",
        help="print only the session's edits, as a unified diff `git apply` and `patch -p1` take "
        "(paths relative to the session's directory)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--from", dest="from_seq", type=int, metavar="SEQ", help="start at event SEQ")
    where.add_argument(
        "--around", type=int, metavar="SEQ", help="only the events around event SEQ (e.g. a search hit)"
    )
    p.add_argument(
        "--context",
        type=int,
        default=20,
        metavar="N",
        help="with --around: how many events before and after (default 20)",
    )
    _no_update(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "stats",
        parents=[common],
        help="tokens and cost by day, model, agent, project or session; tool calls; activity by hour",
        description="Tokens and cost; each API response is counted once across all files.",
    )
    p.add_argument(
        "--by",
        choices=("day", "model", "agent", "project", "session", "tool", "tool-category", "hour", "machine"),
        default="day",
        help="how to group (default day); tool: calls and errors per tool; tool-category: the same per kind"
        " of tool (shell, read, write, edit, search, web, subagent, todo, other); hour: activity by hour"
        " of day and weekday (local time); machine: per pushing machine (a team server)",
    )
    p.add_argument("--agent", metavar="A", help="only this agent")
    p.add_argument(
        "--machine",
        metavar="NAME",
        help="only sessions pushed by this machine (against a team server: docs/team.md)",
    )
    p.add_argument("--project", metavar="NAME", help="only this project")
    p.add_argument("--since", metavar="WHEN", help="from this day or time (date, time or age like 7d)")
    p.add_argument("--until", metavar="WHEN", help="up to this day (included) or time")
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="only the first N rows (most tokens first, e.g. the top sessions; by day the earliest"
        " days); the totals still count everything",
    )
    _state_options(p)
    _no_update(p)
    p.set_defaults(func=cmd_stats)


def _session_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", metavar="A", help="only this agent's sessions")
    p.add_argument("--cwd", metavar="P", help="only sessions in directory P or below")
    p.add_argument("--project", metavar="NAME", help="only sessions of this project (last part of the cwd)")
    p.add_argument("--since", metavar="WHEN", help="active at or after WHEN (date, time or age like 7d)")
    p.add_argument("--until", metavar="WHEN", help="started before WHEN (a date includes that day)")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--imported", dest="imported", action="store_const", const=True, help="only imported sessions"
    )
    g.add_argument("--native", dest="imported", action="store_const", const=False, help="only this machine's")
    p.add_argument("--collection", metavar="C", help="only sessions imported into collection C")
    p.add_argument("--archived", action="store_const", const=True, help="only sessions kept by the archive")
    p.add_argument(
        "--machine",
        metavar="NAME",
        help="only sessions pushed by this machine (against a team server: docs/team.md)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--programmatic",
        dest="programmatic",
        action="store_const",
        const=True,
        help="only SDK-driven sessions",
    )
    g.add_argument(
        "--interactive",
        dest="programmatic",
        action="store_const",
        const=False,
        help="only sessions a person drove",
    )


def _no_update(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-update",
        action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )


def _local_service(backend: Any) -> Any:
    return getattr(backend, "service", None)


def _archive_pending(config: Any) -> int:
    """Files a first index pinned that the archive's finisher is still storing (a listing of
    the pins folder; agtaild.store.archive.pinned)."""
    from agtaild.store.archive.blobs import STORE_DIR
    from agtaild.store.archive.pinned import pending

    return pending(os.path.join(config.archive_dir, STORE_DIR))


def open_backend(ctx: Any, *, update: bool = True) -> Any:
    """The backend; in-process, with the index brought up to date first."""
    backend = ctx.backend()
    service = _local_service(backend)
    if service is not None and update and not getattr(ctx.args, "no_update", False):
        from agtaild.cli.progress import ProgressBar

        bar = ProgressBar("indexing")
        try:
            report = service.update_index(progress=bar)
        finally:
            bar.close()
        _warn_errors(ctx, report)
    return backend


def _daemon_update(ctx: Any, backend: Any, bar: Any) -> dict[str, Any]:
    """``index.update`` through the daemon, drawing the bar from its /health ``progress``
    (asked on a second connection while the first waits for the update)."""
    import threading

    from agtail_client import Client

    result: list[Any] = []

    def run() -> None:
        try:
            result.append(backend.call("index.update", {"full": ctx.args.full}))
        except BaseException as err:  # handed to the main thread, raised there
            result.append(err)

    worker = threading.Thread(target=run, name="agtail-index", daemon=True)
    worker.start()
    watcher = None
    try:
        while worker.is_alive():
            worker.join(0.2)
            if not worker.is_alive():
                break
            try:
                watcher = watcher or Client.discover(ctx.resolved_data_dir)
                if watcher is not None:
                    bar.show(watcher.health(timeout=2.0).get("progress"))
            except Exception:  # the bar is a nicety: the update's own answer decides
                watcher = None
    finally:
        if watcher is not None:
            watcher.close()
    outcome = result[0]
    if isinstance(outcome, BaseException):
        raise outcome
    report: dict[str, Any] = outcome
    return report


def call_once(
    ctx: Any, method: str, params: dict[str, Any], *, meanwhile: Callable[[], object] | None = None
) -> dict[str, Any]:
    """One service call of a command that asks once: open the backend, call, close.
    ``meanwhile``: the command's own preparation, run while a daemon computes the answer."""
    backend = open_backend(ctx)
    try:
        doc: dict[str, Any] = backend.call(method, params, meanwhile=meanwhile)
        return doc
    finally:
        backend.close()


def import_listings() -> None:
    """The modules a listing prints with (a few ms of imports), loaded while the daemon
    computes the answer: on a machine with a core to spare the two overlap."""
    import unicodedata  # noqa: F401  (agtaild.cli.width: the width of any non-Latin character)

    from agtaild.cli import format, listings, width  # noqa: F401


def import_activity_tables() -> None:
    """The same for the tables of ``stats --by tool|tool-category|hour``."""
    from agtaild.cli import activity_tables  # noqa: F401


def _printing(ctx: Any, prepare: Callable[[], object] = import_listings) -> Callable[[], object] | None:
    """What to run while the daemon answers: nothing for a --json answer (printed as it comes)."""
    return None if ctx.json else prepare


def _warn_errors(ctx: Any, report: dict[str, Any]) -> None:
    errors = report.get("errors") or []
    for err in errors[:5]:
        ctx.err(f"agtail: warning: {err.get('path') or err.get('agent')}: {err.get('error')}")
    if len(errors) > 5:
        ctx.err(f"agtail: warning: … and {count(len(errors) - 5, 'more unreadable unit')}")


def cmd_index(ctx: Any) -> int:
    from agtaild.cli.progress import ProgressBar

    backend = ctx.backend()
    bar = ProgressBar("reindexing" if ctx.args.full else "indexing")
    pending = 0
    try:
        service = _local_service(backend)
        if service is not None:
            report = service.update_index(full=ctx.args.full, progress=bar)
            pending = _archive_pending(service.config)
        elif bar.enabled:
            report = _daemon_update(ctx, backend, bar)
        else:
            report = backend.call("index.update", {"full": ctx.args.full})
    finally:
        bar.close()
        backend.close()
    _warn_errors(ctx, report)
    changed = report.get("changed") or []
    counts = {a: sum(1 for c in changed if c.get("action") == a) for a in ("added", "updated", "removed")}
    doc = {k: report.get(k) for k in INDEX_KEYS}
    doc.update({"read": report.get("read"), **counts, "errors": report.get("errors") or []})
    if ctx.args.changes:
        doc["changed"] = changed
    if ctx.json:
        ctx.out_json(doc)
        return 0
    print(
        f"{count(doc['sessions'], 'session', grouped=False)}, {count(doc['events'], 'event', grouped=False)},"
        f" {count(doc['files'], 'file', grouped=False)}, {count(doc['bad_lines'], 'bad line', grouped=False)}"
        f" — {counts['added']} added, {counts['updated']} updated, {counts['removed']} removed"
        f" in {doc['seconds']:.2f} s"
    )
    if pending:
        print(
            f"archive: storing {count(pending, 'file')} in the background (`agtail doctor` shows what is left)",
            file=sys.stderr,
        )
    if ctx.args.changes:
        for c in changed:
            print(f"{c['action']:<8} {c['agent']}:{c['id']}  {c['path']}")
    return 0


def _state_options(p: argparse.ArgumentParser) -> None:
    """The user's own state as filters (docs/organize.md), and ``--has-secret`` (docs/secrets.md)."""
    p.add_argument(
        "--has-secret",
        dest="has_secret",
        action="store_true",
        default=None,
        help="only sessions holding a secret the index found (not allowlisted; `agtail secrets` lists them)",
    )
    p.add_argument("--label", metavar="KEY[=VALUE]", help="only sessions with this label")
    p.add_argument("--starred", action="store_true", default=None, help="only starred sessions")
    seen = p.add_mutually_exclusive_group()
    seen.add_argument(
        "--hidden", dest="hidden", action="store_const", const="only", help="only hidden sessions"
    )
    seen.add_argument(
        "--all", dest="hidden", action="store_const", const="include", help="hidden sessions too"
    )


def _common_params(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            params[name] = value
    if params.get("cwd"):
        params["cwd"] = os.path.abspath(os.path.expanduser(params["cwd"]))
    return params


def _limit(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit must be between 1 and 1000")
    return int(args.limit)


def cmd_list(ctx: Any) -> int:
    params = _common_params(
        ctx.args,
        (
            "agent",
            "cwd",
            "project",
            "since",
            "until",
            "imported",
            "collection",
            "archived",
            "programmatic",
            "cursor",
            "machine",
            "label",
            "starred",
            "hidden",
            "where",
            "has_secret",
        ),
    )
    params["limit"] = _limit(ctx.args)
    if ctx.args.query:
        params["q"] = ctx.args.query
    doc = call_once(ctx, "sessions.list", params, meanwhile=_printing(ctx))
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if not doc["sessions"]:
        ctx.err("agtail: no sessions match")
        return 0
    from agtaild.cli import listings
    from agtaild.cli.width import terminal_width

    print(listings.session_table(doc["sessions"], terminal_width()))
    legend = listings.flag_legend(doc["sessions"])
    if legend:
        ctx.err(legend)
    if doc.get("next"):
        ctx.err(f"agtail: more: --cursor {doc['next']}")
    return 0


def cmd_search(ctx: Any) -> int:
    params = _common_params(
        ctx.args,
        (
            "agent",
            "kind",
            "session",
            "cwd",
            "project",
            "since",
            "until",
            "mode",
            "cursor",
            "machine",
            "label",
            "starred",
            "hidden",
            "has_secret",
        ),
    )
    params["q"] = " ".join(ctx.args.query)
    params["limit"] = _limit(ctx.args)
    doc = call_once(ctx, "search", params, meanwhile=_printing(ctx))
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if doc.get("note"):
        ctx.err(f"agtail: {doc['note']}")
    if not doc["hits"]:
        ctx.err("agtail: no matches")
        return 0
    from agtaild.cli import listings
    from agtaild.cli.format import Style
    from agtaild.cli.width import terminal_width

    print(listings.hits(doc, Style(), terminal_width()))
    if doc.get("next"):
        ctx.err(f"agtail: more: --cursor {doc['next']}")
    return 0


#: Events per request while `show` streams a session.
SHOW_PAGE = 2000


def cmd_show(ctx: Any) -> int:
    """Print a session; the events are fetched a page at a time and printed as they come,
    so a huge session is never held in memory (``--json`` builds its one document)."""
    from agtaild.cli.refs import ref_params

    ref: dict[str, Any] = ref_params(ctx.args.session)
    if ctx.args.collection:
        ref["collection"] = ctx.args.collection
    if ctx.args.machine:
        ref["machine"] = ctx.args.machine
    if ctx.args.around is not None and not 0 <= ctx.args.context <= 5000:
        raise UsageError("--context must be between 0 and 5000")
    if ctx.args.patch and ctx.json:
        raise UsageError("--patch prints a diff, --json a document: give one of them")
    reveal = bool(getattr(ctx.args, "reveal", False))
    backend = open_backend(ctx)
    try:
        # --reveal: asked unmasked (the daemon honours it only for its own user's unix socket).
        reveal_kw = {"reveal": True} if reveal else {}
        session = backend.call("sessions.get", ref, meanwhile=_printing(ctx), **reveal_kw)["session"]
        # The resolved session, exactly (a prefix or a native/imported choice is made once).
        exact = {"agent": session["agent"], "id": session["id"], "path": session["path"]}
        if session.get("machine"):  # a team server: the copy of that machine
            exact["machine"] = session["machine"]
        events = _show_events(backend, exact, ctx.args, reveal=reveal)
        if ctx.json:
            ctx.out_json({"session": session, "events": list(events)})
            return 0
        if ctx.args.patch:
            from agtaild.cli import diff

            if not diff.write_patch(session, events, sys.stdout.write, ctx.err):
                ctx.err("agtail: this session recorded no edits")
            return 0
        from agtaild.cli import format as fmt

        style = fmt.Style()
        out = sys.stdout
        for line in fmt.transcript_lines(
            session,
            events,
            style,
            full=ctx.args.full,
            # A window around an event (a search hit) may sit on an inactive branch: show all.
            all_branches=ctx.args.branches or ctx.args.around is not None,
            diffs=ctx.args.diffs,
        ):
            out.write(line + "\n")
    finally:
        backend.close()
    return 0


def _show_events(
    backend: Any, exact: dict[str, Any], args: argparse.Namespace, *, reveal: bool = False
) -> Any:
    """The events `show` prints, page by page (a generator: nothing is held beyond a page)."""
    after: int | None = None
    stop: int | None = None
    if args.from_seq is not None:
        after = args.from_seq - 1
    elif args.around is not None:
        after = max(args.around - args.context, 0) - 1
        stop = args.around + args.context
    while True:
        limit = SHOW_PAGE if stop is None else max(min(SHOW_PAGE, stop - (after or -1)), 1)
        params = {**exact, "limit": limit, **({"after_seq": after} if after is not None else {})}
        page = backend.call("events.list", params, **({"reveal": True} if reveal else {}))
        for ev in page["events"]:
            if stop is not None and ev["seq"] > stop:
                return
            yield ev
        if not page.get("next") or not page["events"]:
            return
        after = page["events"][-1]["seq"]


def cmd_stats(ctx: Any) -> int:
    params = _common_params(
        ctx.args,
        ("by", "agent", "project", "since", "until", "machine", "limit", "label", "starred", "hidden"),
    )
    activity = ctx.args.by in ("tool", "tool-category", "hour")
    doc = call_once(
        ctx,
        "stats",
        params,
        meanwhile=_printing(ctx, import_activity_tables if activity else import_listings),
    )
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if activity:
        from agtaild.cli import activity_tables

        print(
            activity_tables.hour_grid(doc)
            if ctx.args.by == "hour"
            else activity_tables.tool_table(doc, ctx.args.by)
        )
        _say_undated(ctx, doc)
        return 0
    from agtaild.cli import listings

    print(listings.stats_table(doc, ctx.args.by))
    _say_undated(ctx, doc)
    return 0


def _say_undated(ctx: Any, doc: dict[str, Any]) -> None:
    """Usage with no time at all (nor has its session) is outside every date range and hour."""
    undated = doc.get("undated")
    if not undated:
        return
    from agtaild.cli import costs

    where = "hour" if ctx.args.by == "hour" else "date range"
    ctx.err(
        f"note: {costs.tokens(undated.get('total_tokens'))} tokens ({costs.cost(undated.get('cost_usd'))}) "
        f"have no time at all (neither the records nor their sessions): not in any {where} above"
    )
