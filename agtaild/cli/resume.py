"""`agtail resume AGENT:ID` and `agtail pick`: back into a session with its own agent.

The agent runs as a child in the session's directory (an absolute one that exists, or else
none is run), with the terminal; agtail ignores Ctrl-C meanwhile (the agent handles it) and
exits with the agent's exit code. The command is always built here by the session's adapter,
whoever answered the query (agtaild.resume.verified_resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from agtaild.errors import AgtailError, Gone, NotFound


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("resume", parents=[common], help="resume a session with its own agent",
                       description="Run the agent's own resume command in the session's directory.")
    p.add_argument("session", metavar="AGENT:ID", help="the session (ID may be a unique prefix; AGENT: may be left out)")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="only print the command line to paste into a shell (with --json: "
                        "{agent, id, cwd, cwd_exists, argv})")
    p.add_argument("--no-update", action="store_true",
                   help="answer from the index as it is, without checking the files first (in-process only)")
    p.set_defaults(func=cmd_resume)

    q = sub.add_parser("pick", parents=[common], help="pick a recent session and resume it",
                       description="A fuzzy picker over recent sessions (fzf when installed, else a full-screen picker; a numbered prompt without a terminal).")
    q.add_argument("--agent", action="append", help="only this agent (repeatable)")
    q.add_argument("--cwd", help="only sessions in this directory")
    q.add_argument("--limit", type=int, default=200, help="how many recent sessions to offer (default 200)")
    q.add_argument("--query", default="", help="start with this filter text")
    q.add_argument("--no-fzf", action="store_true", help="use the built-in picker even if fzf is installed")
    q.add_argument("--print", dest="print_only", action="store_true",
                   help="print the chosen session's resume command instead of running it (with --json: "
                        "as JSON)")
    q.add_argument("--no-update", action="store_true",
                   help="answer from the index as it is, without checking the files first (in-process only)")
    q.set_defaults(func=cmd_pick)


def _resume_info(ctx: Any, ref: str) -> dict[str, Any]:
    """The command, built by this process's adapter (agtaild.resume.verified_resume): an argv
    a daemon or AGTAIL_SERVER answered is never run."""
    from agtaild.cli.query import open_backend
    from agtaild.cli.refs import ref_params
    from agtaild.resume import verified_resume

    backend = open_backend(ctx)  # in-process: the index brought up to date first
    try:
        return verified_resume(backend, ref_params(ref))
    finally:
        backend.close()


def run_resume(ctx: Any, info: dict[str, Any], print_only: bool) -> int:
    import shutil

    argv: list[str] = info["argv"]
    cwd = info.get("cwd")
    gone = bool(cwd) and not os.path.isdir(cwd or "")  # gone, or not a directory
    if print_only:
        if ctx.json:
            ctx.out_json({k: info.get(k) for k in ("agent", "id", "cwd", "cwd_exists", "argv")})
            return 0
        if gone:
            ctx.err(f"agtail: warning: the session's directory {cwd} no longer exists; recreate it before running this")
        print(shell_line(cwd, argv))
        return 0
    if gone:
        raise Gone(
            f"the session's directory {cwd} no longer exists (or is not a directory); recreate it (or check "
            "it out again) and retry, or see the command with `agtail resume --print`"
        )
    if shutil.which(argv[0]) is None:
        raise AgtailError(f"{argv[0]!r} is not on PATH; install {info['agent']} or add it to PATH, then retry")
    ctx.err(f"agtail: resuming {info['agent']}:{info['id']} in {cwd or os.getcwd()}: {' '.join(argv)}")
    return run_agent(argv, cwd or None)


def run_agent(argv: list[str], cwd: str | None) -> int:
    """Run an agent's command line as a list (never through a shell) in ``cwd``, the terminal
    its own: Ctrl-C is the agent's while it runs; its exit code is ours (128+N for a signal)."""
    import signal
    import subprocess

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = subprocess.run(argv, cwd=cwd, check=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


def shell_line(cwd: str | None, argv: list[str]) -> str:
    """``cd '…' && claude --resume=…``: the command as a POSIX shell reads it back exactly (the
    directory always in single quotes, as a person expects to see it; each argument quoted
    when it needs to be)."""
    import shlex

    command = " ".join(shlex.quote(a) for a in argv)
    if not cwd:
        return command
    return "cd '" + cwd.replace("'", "'\\''") + "' && " + command


def cmd_resume(ctx: Any) -> int:
    return run_resume(ctx, _resume_info(ctx, ctx.args.session), ctx.args.print_only)


def picker_rows(sessions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(AGENT:ID, the row shown) per session: time, agent, short id, project and title in
    aligned columns. fzf and the picker draw rows on the terminal themselves (not through
    agtail's sanitised stdout), so the text is made safe here (agtaild/textsafe.py)."""
    from agtaild.cli.format import unique_short_ids
    from agtaild.cli.width import cells, fit, pad
    from agtaild.textsafe import visible

    cols = []
    for s, short in zip(sessions, unique_short_ids(sessions), strict=True):
        when = (s.get("ended") or s.get("started") or "")[:16].replace("T", " ")
        project = fit(" ".join(str(s.get("project") or "-").split()), 20)
        title = " ".join((s.get("title") or s.get("first_prompt") or "").split())
        cols.append((f"{s['agent']}:{s['id']}", [when, str(s["agent"]), short, project, title]))
    widths = [max((cells(visible(c[i])) for _, c in cols), default=0) for i in range(4)]
    return [
        (visible(ref), "  ".join([*(pad(visible(c[i]), widths[i]) for i in range(4)), visible(c[4])]))
        for ref, c in cols
    ]


def _recent(ctx: Any) -> tuple[list[dict[str, Any]], bool]:
    """The sessions offered (resumable ones, newest first) and whether ``--limit`` cut them."""
    args = ctx.args
    params: dict[str, Any] = {"limit": max(1, args.limit), "imported": False, "archived": False}
    if args.cwd:
        params["cwd"] = os.path.abspath(args.cwd)
    agents = args.agent or [None]
    found: list[dict[str, Any]] = []
    more = False
    from agtaild.cli.query import open_backend

    backend = open_backend(ctx)
    try:
        for agent in agents:
            p = dict(params, agent=agent) if agent else params
            doc = backend.call("sessions.list", p)
            found.extend(doc["sessions"])
            more = more or bool(doc.get("next"))
    finally:
        backend.close()
    found = [s for s in found if s.get("resumable", True) and not s.get("imported") and not s.get("archived")]
    if len(agents) > 1:  # merge the per-agent lists, newest activity first, as the service orders
        found.sort(key=lambda s: s.get("ended") or s.get("started") or "", reverse=True)
    limit = max(1, args.limit)
    return found[:limit], more or len(found) > limit


def _choose_fzf(rows: list[tuple[str, str]], query: str) -> str | None:
    """fzf over the rows; the ref travels in a hidden first field, the agent, id, project and
    title are shown, so each of them can be typed to match."""
    import subprocess

    proc = subprocess.run(
        ["fzf", "--delimiter=\t", "--with-nth=2..", "--prompt=session> ", f"--query={query}", "--no-multi",
         "--tiebreak=index"],
        input="\n".join(f"{ref}\t{text}" for ref, text in rows), text=True, stdout=subprocess.PIPE, check=False,
    )
    choice = proc.stdout.strip()
    return choice.split("\t", 1)[0] if proc.returncode == 0 and choice else None


#: Rows the plain prompt lists at a time (the rest are counted).
PROMPT_ROWS = 30


def _choose_prompt(rows: list[tuple[str, str]], query: str) -> str | None:
    """A plain numbered prompt on stderr/stdin, for when there is no terminal to draw on: a
    number picks, text narrows (every word), empty quits. Rows fit the terminal's width when
    there is one, and what is not listed is counted."""
    from agtaild.cli.picker import matches
    from agtaild.cli.width import fit, terminal_width
    from agtaild.words import count

    width = terminal_width(sys.stderr)
    text = query
    while True:
        found = matches(rows, text)
        if not found:
            print(f"no session matches {text!r}", file=sys.stderr)
            text, found = "", rows
        shown = found[:PROMPT_ROWS]
        for n, (_, line) in enumerate(shown, 1):
            row = f"{n:3}  {line}"
            print(fit(row, width - 1) if width else row, file=sys.stderr)
        if len(found) > len(shown):
            print(f"     … and {count(len(found) - len(shown), 'more session')} (type text to narrow)", file=sys.stderr)
        print("number to resume, text to filter, empty to quit: ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline()
        if not answer or not answer.strip():
            return None
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(shown):
            return shown[int(answer) - 1][0]
        text = answer


def cmd_pick(ctx: Any) -> int:
    import shutil

    sessions, more = _recent(ctx)
    if not sessions:
        raise NotFound("no resumable sessions found (imported and archived sessions are never offered)")
    rows = picker_rows(sessions)
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if terminal and not ctx.args.no_fzf and shutil.which("fzf") is not None:
        ref = _choose_fzf(rows, ctx.args.query)
    elif terminal:
        from agtaild.cli.picker import pick

        ref = pick(rows, ctx.args.query, more_offered=more)
    else:
        ref = _choose_prompt(rows, ctx.args.query)
    if ref is None:
        ctx.err("agtail: nothing picked")
        return 1
    return run_resume(ctx, _resume_info(ctx, ref), ctx.args.print_only)
