"""`agtail report`: a stand-up report of a range (default today) as Markdown or JSON.

Per project: each session's prompts (one line each), the files edited, the commands that
failed and then passed, and tokens and cost (agtaild.index.report). The same index and range
always give the same text; it is masked like every answer that holds transcript text.
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "report",
        parents=[common],
        help="a stand-up report: per project, sessions, prompts, files edited, fixed commands, tokens and cost",
        description="A stand-up report of the sessions active in a range (default: today), per project:"
        " prompts in one line each, files edited, commands that failed and then passed, tokens and cost."
        " Deterministic; secrets masked.",
    )
    p.add_argument("--since", metavar="WHEN", help="from this date, time or age on (default: today)")
    p.add_argument("--until", metavar="WHEN", help="before this date, time or age (a date includes that day)")
    p.add_argument("--agent", metavar="A", help="only this agent's sessions")
    p.add_argument("--project", metavar="NAME", help="only this project")
    p.add_argument("--format", choices=("md", "json"), default="md", help="Markdown (default) or JSON")
    p.add_argument(
        "--no-update",
        action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )
    p.set_defaults(func=cmd_report)


def _cost(u: dict[str, Any]) -> str:
    from agtaild.cli.costs import cost_cell, tokens

    return f"{tokens(u['total_tokens'])} tokens, {cost_cell(u)}"


def _code(text: str) -> str:
    """Inline code that no backtick in ``text`` can end early."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def markdown(doc: dict[str, Any]) -> str:
    span = f"{doc['since'] or 'the beginning'} to {doc['until'] or 'now'}"
    from agtaild.words import count

    lines = [f"# Report: {span}", "", f"{count(doc['sessions'], 'session')}, {_cost(doc['usage'])}.", ""]
    if not doc["projects"]:
        lines.append("No sessions in this range.")
    for project in doc["projects"]:
        lines += [f"## {project['project']}", ""]
        lines.append(f"{count(len(project['sessions']), 'session')}, {_cost(project['usage'])}.")
        if project["files_edited"]:
            lines += ["", "Files edited: " + ", ".join(_code(f) for f in project["files_edited"]) + "."]
        lines.append("")
        for s in project["sessions"]:
            title = " ".join(str(s.get("title") or "").split()) or "(untitled)"
            lines += [f"### {s['agent']}:{s['id']} — {title}", ""]
            lines.append(f"Started {s['started'] or '?'}, last active {s['last_activity'] or '?'}; {_cost(s['usage'])}.")
            if s["prompts"]:
                lines += ["", "Prompts:"]
                lines += [f"- {p}" for p in s["prompts"]]
                if s["prompt_count"] > len(s["prompts"]):
                    lines.append(f"- … and {s['prompt_count'] - len(s['prompts'])} more")
            if s["files_edited"]:
                lines += ["", "Files edited: " + ", ".join(_code(f) for f in s["files_edited"]) + "."]
            if s["failed_then_passed"]:
                lines += ["", "Failed, then passed:"]
                lines += [f"- {_code(c['command'])} (failed {c['failed']}×)" for c in s["failed_then_passed"]]
            if s["commands"]:
                lines += ["", f"Commands: {s['commands']} run, {s['commands_failed']} failed."]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def cmd_report(ctx: Any) -> int:
    import sys

    from agtaild.cli.query import _common_params, call_once

    params = _common_params(ctx.args, ("since", "until", "agent", "project"))
    doc = call_once(ctx, "report", params)
    if ctx.json or ctx.args.format == "json":
        ctx.out_json(doc)
        return 0
    sys.stdout.write(markdown(doc))
    return 0
