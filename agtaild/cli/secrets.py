"""`agtail secrets`: the secrets the index found, one line per distinct secret, the newest
first — what to rotate — and the user's allowlist (docs/secrets.md).

    agtail secrets [--session AGENT:ID] [--agent A] [--allowlisted] [--json]
    agtail secrets allow FINGERPRINT [--reason TEXT]
    agtail secrets unallow FINGERPRINT

Nothing here prints a secret: a line shows the rule, the mask (``«secret:github-pat …WXYZ»``),
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
    p.add_argument("action", nargs="?", choices=("list", "allow", "unallow"), default="list", help="default: list")
    p.add_argument("fingerprint", nargs="?", help="allow/unallow: the secret's fingerprint (as listed)")
    p.add_argument("--reason", metavar="TEXT", help="allow: why (kept with it)")
    p.add_argument("--session", metavar="AGENT:ID", help="only the secrets of this session")
    p.add_argument("--agent", metavar="A", help="only in this agent's sessions")
    p.add_argument("--allowlisted", action="store_true", default=None, help="the allowlisted secrets too")
    p.add_argument("--places", type=int, default=3, metavar="N", help="places shown per secret (default 3)")
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
            raise UsageError(f"agtail secrets {args.action}: give the secret's FINGERPRINT (`agtail secrets` lists them)")
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
    if args.fingerprint:
        raise UsageError("agtail secrets: a FINGERPRINT goes with allow or unallow")
    params = _common_params(args, ("session", "agent", "allowlisted", "places"))
    doc = _listed(ctx, params)
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if doc.get("pending"):
        ctx.err(f"agtail: {doc['pending']} events not scanned yet (the daemon is still at it): the list may grow")
    if not doc["secrets"]:
        hidden = doc.get("allowlisted_hidden") or 0
        ctx.err("agtail: no secrets found" + (f" ({hidden} allowlisted: --allowlisted shows them)" if hidden else ""))
        return 0
    print(secrets_text(doc["secrets"]))
    return 0


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
            lines.append(f"    {p['agent']}:{p['id']}  event {p['seq']}  {p['field']}  {fmt.local_time(p.get('ts'))}")
        lines.append(f"    fingerprint {s['fingerprint']}")
    return "\n".join(lines)
