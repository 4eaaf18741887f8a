"""`agtail export AGENT:ID --format md|html|json` and `agtail handoff AGENT:ID --to AGENT`.

Both read the session through the backend (a running daemon or the index in-process) and
write what agtaild.share makes of it; every text is masked as every exit masks
(agtaild.share.redact). A handoff launches the target agent with the brief as its first
prompt: its argv is built here from the target's adapter, run as a list (never through a
shell), in the session's directory when it still exists (or ``--cwd``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from agtaild.cli.query import open_backend
from agtaild.errors import AgtailError, Gone, NotFound, Refused, UsageError


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "handoff", parents=[common], help="continue a session in another agent, with a brief of it",
        description="Build a brief of AGENT:ID from its recorded events (the task, what was done, where it "
        "stopped, the open todo list) and start --to AGENT in the session's directory with it as the first "
        "prompt (--launch, the default on a terminal), or print it (--print).",
    )  # fmt: skip
    p.add_argument("session", metavar="AGENT:ID")
    p.add_argument(
        "--to", dest="target", metavar="AGENT", help="the agent to continue in (required for --launch)"
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--print", dest="print_only", action="store_true", help="print the brief, launch nothing"
    )
    mode.add_argument("--launch", action="store_true", help="start the target agent with the brief")
    p.add_argument("--max-tokens", type=int, default=8000, metavar="N",
                   help="the brief's budget, at about 4 characters a token (default 8000)")  # fmt: skip
    p.add_argument("--cwd", metavar="DIR", help="start the target here instead of the session's directory")
    p.add_argument("--redact-paths", action="store_true", help="replace the home directory and user name")
    p.set_defaults(func=cmd_handoff)


def add_export_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("native", "md", "html", "json"), default="native",
                   help="native: the sessions' own files + manifest.json into DIR (the default); md, html, "
                   "json: one session as a document (to FILE, or - for standard output)")  # fmt: skip
    p.add_argument(
        "--branches",
        action="store_true",
        help="md/html/json: every conversation branch, not only the active one",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=1,
        metavar="N",
        help="md/html: subagents inlined N levels deep (default 1)",
    )
    p.add_argument(
        "--redact-paths", action="store_true", help="md/html/json: replace the home directory and user name"
    )


def _reading(backend: Any) -> Any:
    """The service's own call in this process (events read once, masked by the writer:
    agtaild.share.gather.reading), else the daemon's answers."""
    from agtaild.share.gather import reading

    service = getattr(backend, "service", None)
    return reading(service) if service is not None else backend.call


def cmd_export_document(ctx: Any) -> int:
    from agtaild.cli.refs import ref_params

    args = ctx.args
    if len(args.sessions) != 1:
        raise UsageError(f"--format {args.format} writes one session; got {len(args.sessions)}")
    if args.depth < 0:
        raise UsageError("--depth must be 0 or more")
    ref = ref_params(args.sessions[0])
    agent, sid = ref.get("agent", ""), ref["id"]
    target = args.to or "-"
    path = os.path.abspath(os.path.expanduser(target)) if target != "-" else "-"
    if target != "-" and os.path.isdir(path):
        raise UsageError(f"{target} is a directory; --format {args.format} writes one file")
    backend = open_backend(ctx)
    try:
        if target == "-":
            report = _export_to(backend, agent, sid, args, sys.stdout)
            sys.stdout.flush()
            return 0
        tmp = f"{path}.agtail-partial"
        try:
            with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as out:
                report = _export_to(backend, agent, sid, args, out)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    finally:
        backend.close()
    report["to"] = path
    if ctx.json:
        ctx.out_json(report)
    else:
        print(f"exported {report['agent']}:{report['id']} as {args.format} to {path}")
        if not report["secrets_masked"]:
            ctx.err("agtail: secrets are not masked in it (the secret scanner is not installed)")
    return 0


def _export_to(backend: Any, agent: str, sid: str, args: Any, out: Any) -> dict[str, Any]:
    """Write the document to ``out``: made here from the backend's answers, or, from a
    running daemon that offers it, its own export endpoint copied as it streams (the daemon
    reads the index in-process: no page of events crosses JSON-RPC)."""
    from agtaild.share.export import export

    download = getattr(backend, "download", None)
    if download is not None:
        session = backend.call("sessions.get", {"agent": agent, "id": sid} if agent else {"id": sid})[
            "session"
        ]
        from urllib.parse import quote

        params = {"format": args.format, "depth": str(args.depth)}
        params.update({k: "true" for k in ("branches", "redact_paths") if getattr(args, k)})
        where = f"/sessions/{quote(session['agent'], safe='')}/{quote(session['id'], safe='')}/export"
        out.flush()
        try:
            headers = download(where, params, out.buffer)
        except NotFound as err:
            if "no such endpoint" not in str(err):
                raise
        else:
            return {"agent": session["agent"], "id": session["id"], "title": session.get("title"),
                    "format": args.format, "secrets_masked": headers.get("X-Agtail-Secrets-Masked") != "false"}  # fmt: skip
    return export(_reading(backend), agent, sid, args.format, out, branches=args.branches, depth=args.depth,
                  redact_paths=args.redact_paths)  # fmt: skip


def cmd_handoff(ctx: Any) -> int:
    from agtaild.adapters import get_adapter
    from agtaild.cli.refs import ref_params
    from agtaild.resume import refusal
    from agtaild.share.brief import build
    from agtaild.share.gather import open_session
    from agtaild.share.redact import Redactor

    args = ctx.args
    ref = ref_params(args.session)
    agent, sid = ref.get("agent", ""), ref["id"]
    target = get_adapter(args.target) if args.target else None
    launch = args.launch or (not args.print_only and not ctx.json and sys.stdout.isatty())
    if launch and target is None:
        raise UsageError("agtail handoff --launch needs --to AGENT (the agent to continue in)")
    if args.max_tokens < 200:
        raise UsageError("--max-tokens must be at least 200")
    backend = open_backend(ctx)
    try:
        shared = open_session(_reading(backend), agent, sid)
        brief = build(shared, target=target.name if target else None, max_tokens=args.max_tokens,
                      redact=Redactor(paths=args.redact_paths))  # fmt: skip
    finally:
        backend.close()
    session = shared.session
    if not launch:
        if ctx.json:
            ctx.out_json({"agent": session["agent"], "id": session["id"], "to": args.target, "brief": brief})
        else:
            sys.stdout.write(brief)
        return 0
    assert target is not None
    return _launch(ctx, session, target, brief, refusal)


def _launch(ctx: Any, session: dict[str, Any], target: Any, brief: str, refusal: Any) -> int:
    import shutil

    import msgspec

    from agtaild.model import Session

    why = refusal(msgspec.convert(session, Session))
    if why is not None:
        raise Refused(
            why.replace("cannot resume it", "cannot continue it here")
            + " (agtail handoff --print shows the brief)"
        )
    cwd = ctx.args.cwd or session.get("cwd")
    if not cwd or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise Gone(
            f"the session's directory {cwd!r} does not exist here; choose one with --cwd DIR "
            "(or print the brief with --print)"
            if not ctx.args.cwd
            else f"--cwd {cwd!r} is not a directory"
        )
    if brief.startswith("-"):  # never: the brief starts with its heading
        raise AgtailError("the brief would be read as an option")
    command = target.start_command(brief, cwd)
    if command is None:
        raise Refused(
            f"{target.name} has no command line that starts a session with a prompt; use --print and paste it"
        )
    if shutil.which(command.argv[0]) is None:
        raise NotFound(f"{command.argv[0]!r} ({target.name}) is not installed or not on PATH")
    ctx.err(f"agtail: handing {session['agent']}:{session['id']} to {target.name} in {cwd}")
    from agtaild.cli.resume import run_agent

    return run_agent(command.argv, cwd)
