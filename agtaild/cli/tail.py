"""`agtail tail [-f] [AGENT:ID]`: the last events of a session, and with -f the new ones as
they are written.

With a daemon, -f follows over Server-Sent Events (the daemon's watcher sees the write, its
writer indexes it, the stream delivers it: no polling here). In-process (--no-daemon or no
daemon running) there is nobody watching, so -f re-reads the session's own file every
``--interval`` seconds and prints what is new.

Output: one line per event for people; with --json a single document
``{"session", "events"}`` — or, with -f, one JSON event per line (JSON Lines), since a
stream that never ends cannot be one document.
"""

from __future__ import annotations

import sys
import time

from agtaild.errors import NotFound, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    import argparse
    from typing import Any

RECONNECT_DELAYS = (0.5, 1, 2, 5, 5, 10)


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "tail",
        parents=[common],
        help="show a session's last events; -f follows new ones",
        description="Show the last events of a session (default: the most recently active one).",
    )
    p.add_argument("session", nargs="?", metavar="AGENT:ID", help="the session (ID may be a unique prefix)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new events as they are written")
    p.add_argument("-n", "--lines", type=int, default=20, metavar="N", help="how many past events to show (default 20)")
    p.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                   help="in-process -f only: how often to re-read the file (default 1)")
    p.add_argument("--no-update", action="store_true",
                   help="answer from the index as it is, without checking the files first (in-process only)")
    p.set_defaults(func=run)


def pick_session(backend: Any, ref: str | None) -> dict[str, Any]:
    if ref:
        from agtaild.cli.refs import ref_params

        return dict(backend.call("sessions.get", ref_params(ref))["session"])
    sessions = backend.call("sessions.list", {"limit": 1})["sessions"]
    if not sessions:
        raise NotFound("no sessions indexed yet; run `agtail index` or start agtaild")
    return dict(sessions[0])


def last_events(backend: Any, session: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The last ``n`` events, paging forward with the keyset cursor (never an OFFSET)."""
    kept: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"agent": session["agent"], "id": session["id"], "limit": 1000}
        if session.get("path"):
            params["path"] = session["path"]  # exactly this copy (native or an imported one)
        if cursor:
            params["cursor"] = cursor
        doc = backend.call("events.list", params)
        kept = (kept + list(doc["events"]))[-n:] if n > 0 else []
        cursor = doc.get("next")
        if not cursor:
            return kept


def format_event(ev: dict[str, Any]) -> str:
    ts = (ev.get("ts") or "")[11:19] or "--:--:--"
    who = ev.get("role") or ""
    kind = ev.get("kind") or ""
    text = ev.get("text")
    if kind == "tool_use":
        text = f"{ev.get('tool') or '?'} {_short(ev.get('input'))}"
        if ev.get("is_error"):
            text += "  [error]"
    elif kind == "hook" and ev.get("hook"):
        hook = ev["hook"]
        text = f"{hook.get('event') or ''} {hook.get('command') or hook.get('text') or ''}".strip()
    first = " ".join((text or "").split())
    if len(first) > 200:
        first = first[:199] + "…"
    return f"{ts} {ev.get('seq', ''):>5} {who:<9} {kind:<11} {first}"


def _short(value: Any) -> str:
    from agtaild.cli.format import compact_input

    if value is None:
        return ""
    return compact_input(value)[:160]


def run(ctx: Any) -> int:
    args = ctx.args
    if args.lines < 0:
        raise UsageError("-n must be 0 or more")
    backend = ctx.backend()
    service = getattr(backend, "service", None)  # in-process: nobody else keeps the index current
    if service is not None and not getattr(args, "no_update", False):
        service.update_index()
    try:
        session = pick_session(backend, args.session)
        events = last_events(backend, session, args.lines)
        if ctx.json and not args.follow:
            ctx.out_json({"session": session, "events": events})
            return 0
        if not ctx.json:
            ctx.err(f"{session['agent']}:{session['id']}  {session.get('title') or ''}".rstrip())
        for ev in events:
            _emit(ctx, ev)
        if not args.follow:
            return 0
        after = int(events[-1]["seq"]) if events else _last_seq(backend, session)
        if hasattr(backend, "client"):
            _follow_daemon(ctx, backend, session, after)
        else:
            _follow_local(ctx, backend, session, after, args.interval)
        return 0
    finally:
        backend.close()


def _emit(ctx: Any, ev: dict[str, Any]) -> None:
    if ctx.json:
        ctx.out_json(ev)
    else:
        sys.stdout.write(format_event(ev) + "\n")
        sys.stdout.flush()


def _last_seq(backend: Any, session: dict[str, Any]) -> int:
    events = last_events(backend, session, 1)
    return int(events[-1]["seq"]) if events else -1


def _follow_daemon(ctx: Any, backend: Any, session: dict[str, Any], after: int) -> None:
    """Follow over SSE; reconnect (resuming after the last seq) if the daemon restarts."""
    from agtail_client import ApiError

    failures = 0
    while True:
        try:
            for ev in backend.client.follow(session["agent"], session["id"], after_seq=after):
                _emit(ctx, ev)
                after = int(ev["seq"])
                failures = 0
            return  # the session was removed
        except ApiError as err:
            if err.code not in ("unreachable", "error"):
                raise
        except OSError:
            pass
        if failures >= len(RECONNECT_DELAYS):
            raise NotFound("lost agtaild and it did not come back; run again (or with --no-daemon)")
        time.sleep(RECONNECT_DELAYS[failures])
        failures += 1


def _follow_local(ctx: Any, backend: Any, session: dict[str, Any], after: int, interval: float) -> None:
    """No daemon: re-read the session's own file now and then, print what is new."""
    service = backend.service
    paths = [session["path"]] if session.get("path") else None
    while True:
        time.sleep(max(0.1, interval))
        if paths:
            service.update_index(only_paths=paths)
        doc = backend.call("events.list", {"agent": session["agent"], "id": session["id"], "after_seq": after, "limit": 1000})
        for ev in doc["events"]:
            _emit(ctx, ev)
            after = int(ev["seq"])
