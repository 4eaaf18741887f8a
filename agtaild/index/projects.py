"""Projects: sessions grouped by the repository they worked in.

A project's identity is the git root of the session's working directory when it can be found
on this machine, else the working directory itself. Linked worktrees (``git worktree add``,
Claude Code's ``.claude/worktrees/…``) have a ``.git`` *file* pointing into the main
repository's ``.git/worktrees/<name>``; its ``commondir`` leads back to the main ``.git``, so
every worktree of a repository groups under the main repository's root. Only ``.git`` entries
are read (no git command runs); a directory that is gone keeps its cwd as its identity, except
the well-known worktree layouts, which are recognised from the path alone.

Usage is counted as in stats (each API response once, priced with the current table).
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from agtaild.index import place_answers
from agtaild.index.places import ready
from agtaild.index.queries import add_usage, empty_usage
from agtaild.index.selection import Picked, id_conditions
from agtaild.pricing import PriceTable

#: Path parts after which a directory is a worktree of the repository before them.
_WORKTREE_MARKERS = ("/.claude/worktrees/", "/.worktrees/", "/.git/worktrees/")


@functools.lru_cache(maxsize=8192)
def project_root(cwd: str) -> str:
    """The project a working directory belongs to (see the module doc)."""
    found = _git_root(cwd)
    if found is not None:
        return found
    for marker in _WORKTREE_MARKERS:
        at = cwd.find(marker)
        if at > 0:
            return cwd[:at]
    return cwd.rstrip("/") or cwd


def _git_root(cwd: str) -> str | None:
    d = os.path.abspath(cwd) if cwd else ""
    if not d or not os.path.isdir(d):
        return None
    while True:
        dotgit = os.path.join(d, ".git")
        try:
            if os.path.isdir(dotgit):
                return d
            if os.path.isfile(dotgit):
                return _main_repo(d, dotgit) or d
        except OSError:
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _main_repo(worktree: str, dotgit: str) -> str | None:
    """The main repository of a linked worktree (``gitdir:`` → ``commondir``)."""
    try:
        with open(dotgit, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    if not head.startswith("gitdir:"):
        return None
    gitdir = head[len("gitdir:") :].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.normpath(os.path.join(worktree, gitdir))
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as fh:
            common = fh.read(4096).strip()
    except OSError:
        return None  # a submodule (no commondir): its own project
    if not os.path.isabs(common):
        common = os.path.normpath(os.path.join(gitdir, common))
    return os.path.dirname(common.rstrip("/")) if os.path.basename(common.rstrip("/")) == ".git" else None


def projects(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    agent: str | None = None,
    since: float | None = None,
    imported: bool | None = None,
    picked: Picked = (None, None),
    recount: bool = False,
) -> dict[str, Any]:
    """``{"projects": [{project, root, sessions, agents, last_active, cwds, …Usage}]}``, most
    recently active first. Sessions without a working directory are left out.

    The sums per place (agtaild.index.places) answer unless ``since`` or a selection other
    than hidden sessions asks for each session (agtaild.index.place_answers); ``recount``:
    from the sessions and the rollup anyway (the check)."""
    where = ["s.cwd IS NOT NULL", "s.cwd != ''"]
    args: list[Any] = []
    if agent:
        where.append("s.agent = ?")
        args.append(agent)
    if since is not None:
        where.append("s.activity >= ?")
        args.append(since)
    if imported is not None:
        where.append(f"s.kind {'=' if imported else '!='} 'imported'")
    more, more_args = id_conditions("s.id", *picked)  # the user's state (hidden: left out)
    where += more
    args += more_args
    clause = " AND ".join(where)
    groups: dict[str, dict[str, Any]] = {}

    def group(cwd: str) -> dict[str, Any]:
        root = project_root(cwd)
        g = groups.get(root)
        if g is None:
            name = os.path.basename(root.rstrip("/")) or root
            g = groups[root] = {"project": name, "root": root, "sessions": 0, "agents": set(), "last_active": 0.0,
                                "cwds": set(), **empty_usage()}  # fmt: skip
        return g

    if (
        not recount
        and since is None
        and place_answers.served(since=None, until=None, picked=picked)
        and ready(db)
    ):
        where, pargs = place_answers.place_filters(agent, imported=imported)
        sessions: Iterable[tuple[Any, ...]] = place_answers.project_sessions(db, where, pargs, picked[1])
        where.extend(("p.cwd IS NOT NULL", "p.cwd != ''"))
        usage: Iterable[tuple[Any, ...]] = (
            r[:8] for r in place_answers.groups(db, "cwd", where, pargs, picked[1])
        )
    else:
        sessions = db.execute(
            f"SELECT s.cwd, s.agent, count(*), max(s.activity) FROM sessions s WHERE {clause}"
            " GROUP BY s.cwd, s.agent",
            args,
        )
        usage = db.execute(
            "SELECT s.cwd, u.model, u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read),"
            f" sum(u.cache_write), sum(u.reasoning) FROM usage_rollup u JOIN sessions s ON s.id = u.session_id"
            f" WHERE {clause} GROUP BY s.cwd, u.model, u.long_ctx",
            args,
        )
    for cwd, ag, n, last in sessions:
        g = group(cwd)
        g["sessions"] += n
        g["agents"].add(ag)
        g["last_active"] = max(g["last_active"], last or 0.0)
        g["cwds"].add(cwd)
    for cwd, model, long_ctx, inp, outp, cr, cw, rs in usage:
        add_usage(
            group(cwd), inp, outp, cr, cw, rs, pricing.cost(model, inp, outp, cr, cw, bool(long_ctx)), model
        )
    out = []
    for g in groups.values():
        g["agents"] = sorted(g["agents"])
        g["cwds"] = sorted(g["cwds"])[:50]
        g["last_active"] = _iso(g["last_active"])
        out.append(g)
    out.sort(key=lambda g: (g["last_active"] or "", g["root"]), reverse=True)
    return {"projects": out}


def _iso(epoch: float) -> str | None:
    if not epoch:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")
