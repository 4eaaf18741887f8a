"""`agtail secrets`: the secrets the index found, one line per distinct secret, the newest
first — what to rotate — and the user's allowlist (docs/secrets.md).

    agtail secrets [--session AGENT:ID] [--agent A] [--allowlisted] [--json]
    agtail secrets show AGENT:ID [--reveal]
    agtail secrets allow FINGERPRINT [--reason TEXT]
    agtail secrets unallow FINGERPRINT

Nothing here prints a secret (but ``show --reveal``, logged: agtaild.api.reveal): a line shows the rule, the mask (``«secret:github-pat …WXYZ»``),
how many sessions and places, first and last seen, the newest places and the fingerprint.
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "secrets",
        parents=[common],
        help="secrets found in the history: one line per secret, newest first (what to rotate), masked",
        description="Secrets the index found in every transcript (masked; never printed). "
        "`allow` / `unallow` FINGERPRINT keeps a false positive or a revoked key off the list.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=("list", "show", "allow", "unallow"),
        default="list",
        help="default: list",
    )
    p.add_argument(
        "fingerprint", nargs="?", help="allow/unallow: the secret's fingerprint (as listed); show: AGENT:ID"
    )
    p.add_argument("--reason", metavar="TEXT", help="allow: why (kept with it)")
    p.add_argument("--session", metavar="AGENT:ID", help="only the secrets of this session")
    p.add_argument("--agent", metavar="A", help="only in this agent's sessions")
    p.add_argument("--allowlisted", action="store_true", default=None, help="the allowlisted secrets too")
    p.add_argument(
        "--places", type=int, default=3, metavar="N", help="places shown per secret (default 3; show: 1000)"
    )
    p.add_argument(
        "--reveal",
        action="store_true",
        help="show: print each secret unmasked at its places (in-process, or over the daemon's unix socket "
        "as the user who runs it; refused over TCP); logged in <data dir>/reveal.log",
    )
    p.add_argument(
        "--no-update",
        action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )
    p.set_defaults(func=cmd_secrets)


def cmd_secrets(ctx: Any) -> int:
    from agtaild.cli.query import _common_params, call_once
    from agtaild.errors import UsageError

    args = ctx.args
    if args.action in ("allow", "unallow"):
        if not args.fingerprint:
            raise UsageError(
                f"agtail secrets {args.action}: give the secret's FINGERPRINT (`agtail secrets` lists them)"
            )
        params = {"fingerprint": args.fingerprint}
        if args.action == "allow" and args.reason:
            params["reason"] = args.reason
        doc = call_once(ctx, f"secrets.{args.action}", params)
        if ctx.json:
            ctx.out_json(doc)
        else:
            did = "allowlisted" if args.action == "allow" else "taken off the allowlist"
            print(f"{doc['fingerprint'][:16]}… {did}" + ("" if doc["changed"] else " (it already was)"))
        return 0
    if args.action == "show":
        return _show(ctx)
    if args.reveal:
        raise UsageError("agtail secrets: --reveal goes with `agtail secrets show AGENT:ID`")
    if args.fingerprint:
        raise UsageError("agtail secrets: a FINGERPRINT goes with allow or unallow")
    params = _common_params(args, ("session", "agent", "allowlisted", "places"))
    doc = _listed(ctx, params)
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if doc.get("pending"):
        ctx.err(
            f"agtail: {doc['pending']} events not scanned yet (the daemon is still at it): the list may grow"
        )
    if not doc["secrets"]:
        hidden = doc.get("allowlisted_hidden") or 0
        ctx.err(
            "agtail: no secrets found"
            + (f" ({hidden} allowlisted: --allowlisted shows them)" if hidden else "")
        )
        return 0
    print(secrets_text(doc["secrets"]))
    return 0


def _show(ctx: Any) -> int:
    """``secrets show AGENT:ID``: the session's secrets with every place; ``--reveal``: with
    each secret as it is written there (read unmasked, each read logged)."""
    from agtaild.errors import UsageError

    args = ctx.args
    if not args.fingerprint:
        raise UsageError("agtail secrets show: give the session, AGENT:ID")
    params: dict[str, Any] = {"session": args.fingerprint, "places": 1000, "allowlisted": True}
    if args.agent:
        params["agent"] = args.agent
    doc = _listed(ctx, params)
    if args.reveal:
        _reveal_places(ctx, doc["secrets"])
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if not doc["secrets"]:
        ctx.err(f"agtail: no secrets found in {args.fingerprint}")
        return 0
    print(secrets_text(doc["secrets"]))
    return 0


def _reveal_places(ctx: Any, secrets: list[dict[str, Any]]) -> None:
    """Each place's ``secret``: the characters at its offsets in its event's field, read with
    reveal (one logged read per event)."""
    from agtaild.cli.query import open_backend

    backend = open_backend(ctx, update=False)
    events: dict[tuple[str, str, int], Any] = {}
    try:
        for s in secrets:
            for place in s.get("places") or []:
                key = (place["agent"], place["id"], place["seq"])
                if key not in events and key[2] < 0:  # a session-level field: /session/title
                    doc = backend.call("sessions.get", {"agent": key[0], "id": key[1]}, reveal=True)
                    events[key] = {"session": doc["session"]}
                elif key not in events:
                    params = {"agent": key[0], "id": key[1], "after_seq": key[2] - 1, "limit": 1}
                    page = backend.call("events.list", params, reveal=True)["events"]
                    events[key] = page[0] if page and page[0]["seq"] == key[2] else None
                text = field_text(events[key], place["field"])
                place["secret"] = text[place["start"] : place["end"]] if text is not None else None
    finally:
        backend.close()


def field_text(doc: Any, field: str) -> str | None:
    """The string a finding's ``field`` (a JSON Pointer; ``#json`` into an embedded JSON
    document, ``#key`` for a dict key) points at in ``doc``; None when it is not there."""
    import json

    value = doc
    last_key: str | None = None
    for n, part in enumerate(field.split("#")):
        if n:
            if part.startswith("key"):
                return last_key
            if not part.startswith("json"):
                return None
            try:
                value = json.loads(value)
            except (TypeError, ValueError):
                return None
            part = part[4:]
        for token in part.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            last_key = token
            if isinstance(value, dict) and token in value:
                value = value[token]
            elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
                value = value[int(token)]
            else:
                return None
    return value if isinstance(value, str) else None


def _listed(ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``secrets.list``; in-process, after finishing the index's secrets pass (a daemon runs it
    in the background instead)."""
    from agtaild.cli.query import _local_service, open_backend
    from agtaild.query.secrets import FINISH_SECONDS

    backend = open_backend(ctx)
    try:
        service = _local_service(backend)
        if service is not None and hasattr(service, "scan_secrets"):
            service.scan_secrets(max_seconds=FINISH_SECONDS)
        doc: dict[str, Any] = backend.call("secrets.list", params)
        return doc
    finally:
        backend.close()


def secrets_text(secrets: list[dict[str, Any]]) -> str:
    """One block a secret: its line (last seen, rule, mask, sessions, places), its newest
    places indented, its fingerprint (what allow/unallow take)."""
    from agtaild.cli import format as fmt

    lines: list[str] = []
    for s in secrets:
        mark = "  [allowlisted]" if s.get("allowlisted") else ""
        low = "  (low confidence)" if s.get("confidence") == "low" else ""
        sessions, places = s["session_count"], s["place_count"]
        lines.append(
            f"{fmt.local_time(s.get('last_seen'))}  {s['masked']}  {sessions} session{'' if sessions == 1 else 's'},"
            f" {places} place{'' if places == 1 else 's'}, first {fmt.local_time(s.get('first_seen'))}{low}{mark}"
        )
        for p in s.get("places") or []:
            shown = f"  {p['secret']}" if p.get("secret") else ""
            at = "session" if p["seq"] < 0 else f"event {p['seq']}"
            lines.append(
                f"    {p['agent']}:{p['id']}  {at}  {p['field']}  {fmt.local_time(p.get('ts'))}{shown}"
            )
        lines.append(f"    fingerprint {s['fingerprint']}")
    return "\n".join(lines)
