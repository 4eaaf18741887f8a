"""`agtail projects`: sessions grouped by project (the git root, else the working directory).

Worktrees of one repository group under the main repository (agtaild.index.projects).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path imports neither typing nor argparse (tests/test_cli_startup.py)
    import argparse
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "projects",
        parents=[common],
        help="projects (git root, else directory) with their sessions, agents, last activity and usage",
        description="Projects: sessions grouped by git repository (worktrees together), else by directory.",
    )
    p.add_argument("--agent", metavar="A", help="only this agent's sessions")
    p.add_argument(
        "--since", metavar="WHEN", help="only sessions active at or after WHEN (date, time or age like 7d)"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--imported", dest="imported", action="store_const", const=True, help="only imported sessions"
    )
    g.add_argument("--native", dest="imported", action="store_const", const=False, help="only this machine's")
    from agtaild.cli.query import _state_options

    _state_options(p)
    p.add_argument(
        "--no-update",
        action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )
    p.set_defaults(func=cmd_projects)


def cmd_projects(ctx: Any) -> int:
    from agtaild.cli.query import _common_params, call_once

    params = _common_params(ctx.args, ("agent", "since", "imported", "label", "starred", "hidden"))
    doc = call_once(ctx, "projects.list", params)
    if ctx.json:
        ctx.out_json(doc)
        return 0
    if not doc["projects"]:
        ctx.err("agtail: no projects")
        return 0
    from agtaild.cli.width import terminal_width

    print(projects_table(doc["projects"], terminal_width()))
    return 0


def _project_cell(cell: str, room: int) -> str:
    """``name  root`` in ``room`` columns: the name whole when it fits, the root cut at its start."""
    from agtaild.cli.width import cells, fit, fit_left

    if cells(cell) <= room:
        return cell
    name, _, root = cell.partition("  ")
    if cells(name) + 2 + 8 > room:
        return fit(name, room)
    return f"{name}  {fit_left(root, room - cells(name) - 2)}"


def projects_table(projects: list[dict[str, Any]], width: int | None = None) -> str:
    """One row a project; ``width``: fit the terminal (the root path keeps its end, the agents
    column shrinks when it must)."""
    from agtaild.cli import costs
    from agtaild.cli import format as fmt
    from agtaild.cli.width import fit

    rows = [
        [
            fmt.local_time(p.get("last_active")),
            str(p.get("sessions") or 0),
            costs.tokens(p.get("total_tokens")),
            costs.cost_cell(p),
            ",".join(p.get("agents") or []),
            f"{p.get('project')}  {p.get('root')}",
        ]
        for p in projects
    ]
    text = fmt.table(
        rows, ["LAST ACTIVE", "SESSIONS", "TOKENS", "COST", "AGENTS", "PROJECT"], right=(1, 2, 3),
        width=width, shrink=(4,), last=_project_cell,
    )
    dark = [p for p in projects if p.get("cost_usd") is None]
    if dark:  # what the ?s stand for, over all the projects shown
        note = costs.unpriced_note({
            "cost_usd": None,
            "unpriced_tokens": sum(int(p.get("unpriced_tokens") or 0) for p in dark),
            "unpriced_models": sorted({str(m) for p in dark for m in p.get("unpriced_models") or []}),
        })
        text += "\n" + (fit(note, width) if width else note) if note else ""
    return text
