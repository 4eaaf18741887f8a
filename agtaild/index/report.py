"""A stand-up report: per project, the sessions of a time range with their prompts (one line
each), the files they edited, the commands that failed and then passed, and their tokens
and cost.

Deterministic: the same index and range give the same document (everything is sorted; the
clock is not read). No model is asked anything. Files edited come from the edits the
adapters recorded on edit and write calls (``extra.edit``, else the call's path); a command
"failed then passed" when a shell call failed and a later call of the same command in the
same session succeeded. The query layer masks the answer like every text answer.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agtaild.index.codec import decode_event
from agtaild.index.queries import add_usage, empty_usage
from agtaild.pricing import PriceTable

#: A prompt's line in the report is cut to this many characters.
PROMPT_CHARS = 160
#: Prompts and commands listed per session at most (the counts say how many there were).
MAX_PER_SESSION = 50
NO_PROJECT = "(no project)"
_SHELLS = (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"], ["zsh", "-lc"], ["zsh", "-c"])


def one_line(text: str, limit: int = PROMPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def command_of(tool_input: Any) -> str | None:
    """The command line of a shell call's input (Claude's ``command``, Codex's ``cmd`` /
    ``command`` list; ``bash -lc X`` is X)."""
    if not isinstance(tool_input, dict):
        return None
    value = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[:2] in _SHELLS:
            return one_line(value[2])
        return one_line(" ".join(value)) or None
    return one_line(value) or None if isinstance(value, str) else None


def edited_paths(doc: dict[str, Any]) -> list[str]:
    """The files an edit or write call changed."""
    extra = doc.get("extra")
    edit = extra.get("edit") if isinstance(extra, dict) else None
    files = edit.get("files") if isinstance(edit, dict) else None
    if isinstance(files, list):
        paths = [f["path"] for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]
        if paths:
            return paths
    tool_input = doc.get("input")
    if isinstance(tool_input, dict):
        for key in ("file_path", "path", "filePath"):
            if isinstance(tool_input.get(key), str):
                return [tool_input[key]]
    return []


def failed_then_passed(calls: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """Commands (in call order) that failed and later, the same command, passed: each with
    how many times it failed before passing."""
    failures: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for command, failed in calls:
        if failed:
            failures[command] = failures.get(command, 0) + 1
        elif failures.get(command):
            out.append({"command": command, "failed": failures.pop(command)})
    return out


def relative(path: str, cwd: str | None) -> str:
    """A path inside the session's working directory, relative to it (as the agents show them)."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _session_detail(
    db: sqlite3.Connection, rid: int, cwd: str | None, since: float | None, until: float | None
) -> dict[str, Any]:
    where, args = ["session_id = ?"], list[Any]([rid])
    if since is not None:
        where.append("epoch >= ?")
        args.append(since)
    if until is not None:
        where.append("epoch < ?")
        args.append(until)
    scope = " AND ".join(where)
    prompts: list[str] = []
    for text, data in db.execute(f"SELECT text, data FROM events WHERE {scope} AND kind = 'text' ORDER BY seq", args):
        doc = decode_event(data)
        if doc.get("role") == "user" and not doc.get("subtype") and not doc.get("sidechain") and text and text.strip():
            prompts.append(one_line(text))
    files: set[str] = set()
    calls: list[tuple[str, bool]] = []
    rows = db.execute(
        f"SELECT tool_category, tool_failed, data FROM events WHERE {scope} AND kind = 'tool_use'"
        " AND tool_category IN ('edit', 'write', 'shell') ORDER BY seq",
        args,
    )
    for category, failed, data in rows:
        doc = decode_event(data)
        if category == "shell":
            command = command_of(doc.get("input"))
            if command:
                calls.append((command, bool(failed)))
        else:
            files.update(relative(path, cwd) for path in edited_paths(doc))
    fixed = failed_then_passed(calls)
    return {
        "prompts": prompts[:MAX_PER_SESSION],
        "prompt_count": len(prompts),
        "files_edited": sorted(files),
        "failed_then_passed": fixed[:MAX_PER_SESSION],
        "commands": len(calls),
        "commands_failed": sum(1 for _, f in calls if f),
    }


def _usage(db: sqlite3.Connection, pricing: PriceTable, rid: int, since: float | None, until: float | None) -> dict[str, Any]:
    where, args = ["session_id = ?", "counted = 1"], list[Any]([rid])
    if since is not None:
        where.append("epoch >= ?")
        args.append(since)
    if until is not None:
        where.append("epoch < ?")
        args.append(until)
    u = empty_usage()
    rows = db.execute(
        "SELECT model, long_ctx, sum(input), sum(output), sum(cache_read), sum(cache_write), sum(reasoning)"
        f" FROM usage WHERE {' AND '.join(where)} GROUP BY model, long_ctx ORDER BY model, long_ctx",
        args,
    )
    for model, long_ctx, inp, outp, cr, cw, rs in rows:
        add_usage(u, inp, outp, cr, cw, rs, pricing.cost(model, inp, outp, cr, cw, bool(long_ctx)), model)
    return u


def report(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    since: float | None,
    until: float | None,
    agent: str | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """The report of the sessions active in [since, until)."""
    from agtaild.index.live import iso

    where: list[str] = ["1"]
    args: list[Any] = []
    if since is not None:
        where.append("s.activity >= ?")
        args.append(since)
    if until is not None:
        where.append("coalesce(s.started, s.activity) < ?")
        args.append(until)
    if agent:
        where.append("s.agent = ?")
        args.append(agent)
    if project:
        where.append("s.project = ?")
        args.append(project)
    rows = db.execute(
        "SELECT s.id, s.agent, s.sid, s.title, s.cwd, s.project, s.started, s.activity FROM sessions s"
        f" WHERE {' AND '.join(where)} ORDER BY coalesce(s.project, ''), coalesce(s.started, s.activity), s.agent, s.sid",
        args,
    ).fetchall()
    projects: dict[str, dict[str, Any]] = {}
    total = empty_usage()
    for rid, agent_id, sid, title, cwd, proj, started, activity in rows:
        detail = _session_detail(db, rid, cwd, since, until)
        usage = _usage(db, pricing, rid, since, until)
        if not detail["prompt_count"] and not detail["commands"] and not detail["files_edited"] and not usage["total_tokens"]:
            continue  # active only by a timestamp: nothing of it falls in the range
        name = proj or NO_PROJECT
        entry = projects.setdefault(name, {"project": name, "cwds": set(), "sessions": [], "usage": empty_usage()})
        if cwd:
            entry["cwds"].add(cwd)
        entry["sessions"].append({
            "agent": agent_id, "id": sid, "title": title, "started": iso(started), "last_activity": iso(activity),
            **detail, "usage": usage,
        })  # fmt: skip
        for u in (entry["usage"], total):
            _add(u, usage)
    out = []
    for name in sorted(projects):
        entry = projects[name]
        files = sorted({f for s in entry["sessions"] for f in s["files_edited"]})
        out.append({**entry, "cwds": sorted(entry["cwds"]), "files_edited": files})
    return {"since": iso(since), "until": iso(until), "projects": out, "usage": total,
            "sessions": sum(len(p["sessions"]) for p in out)}  # fmt: skip


def _add(into: dict[str, Any], u: dict[str, Any]) -> None:
    """Add one usage document to another (a cost unknown anywhere stays unknown)."""
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "total_tokens"):
        into[key] += u[key]
    if u["cost_usd"] is None or into["cost_usd"] is None:
        known = (into.get("cost_known_usd") if into["cost_usd"] is None else into["cost_usd"]) or 0.0
        known += (u.get("cost_known_usd") if u["cost_usd"] is None else u["cost_usd"]) or 0.0
        into["cost_usd"] = None
        into["cost_known_usd"] = known
        into["unpriced_tokens"] = int(into.get("unpriced_tokens") or 0) + int(u.get("unpriced_tokens") or 0)
        into["unpriced_models"] = sorted(set(into.get("unpriced_models") or []) | set(u.get("unpriced_models") or []))
    else:
        into["cost_usd"] += u["cost_usd"]
