"""The team server's event-counting views: stats ``by=tool`` and ``by=hour``, and projects.

The same documents as agtaild.index.activity and agtaild.index.projects. Hours are in the team
server's local time zone (its ``TZ`` / ``/etc/localtime``), as a local daemon uses its user's.
A project is the git root the pushing machine found for the session's working directory
(``sessions.project_root``, set at push time: the repository is on that machine, not here).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from agtaild.index.activity import HourCells, tool_rows
from agtaild.index.queries import add_usage, empty_usage
from agtaild.pg.queries import EVENTS, TeamFilter
from agtaild.pricing import PriceTable


def local_zone() -> str:
    """This process's IANA time zone name (PostgreSQL needs a name), else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"


def _where(flt: TeamFilter, col: str) -> tuple[list[str], list[Any]]:
    where, args = TeamFilter(agent=flt.agent, machine=flt.machine, project=flt.project).sql("s")
    if flt.since is not None:
        where.append(f"{col} >= %s")
        args.append(flt.since.epoch)
    if flt.until is not None:
        where.append(f"{col} < %s")
        args.append(flt.until.epoch)
    return where, args


def by_tool(cur: Any, flt: TeamFilter, by: str = "tool") -> dict[str, Any]:
    """Tool calls by name or by category, as the local index answers (agtaild.index.activity)."""
    where, args = _where(flt, "e.epoch")
    cur.execute(
        "SELECT s.agent, e.doc::json->>'tool', e.doc::json->'extra'->>'tool_category',"
        " coalesce(e.doc::json->>'is_error' = 'true', false), count(*)"
        f" FROM {EVENTS.get()} e JOIN sessions s USING (machine, agent, sid, collection)"
        f" WHERE {' AND '.join(['e.kind = %s', *where])} GROUP BY 1, 2, 3, 4",
        ["tool_use", *args],
    )
    return tool_rows(cur.fetchall(), by)


def by_hour(cur: Any, pricing: PriceTable, flt: TeamFilter) -> dict[str, Any]:
    zone = local_zone()
    cells = HourCells()
    local = "extract(isodow FROM to_timestamp({c}) AT TIME ZONE %s)::int, extract(hour FROM to_timestamp({c}) AT TIME ZONE %s)::int"
    where, args = _where(flt, "e.epoch")
    cur.execute(
        f"SELECT {local.format(c='e.epoch')}, count(*) FROM {EVENTS.get()} e JOIN sessions s USING (machine, agent, sid, collection)"
        f" WHERE {' AND '.join(['e.epoch IS NOT NULL', *where])} GROUP BY 1, 2",
        [zone, zone, *args],
    )
    for day, hour, n in cur.fetchall():
        cells.cell(day, hour)["events"] += n
    where, args = _where(flt, "u.epoch")
    cur.execute(
        f"SELECT {local.format(c='u.epoch')}, u.model, u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read),"
        " sum(u.cache_write), sum(u.reasoning) FROM usage u JOIN sessions s USING (machine, agent, sid, collection)"
        f" WHERE {' AND '.join(['u.counted', 'u.epoch IS NOT NULL', *where])} GROUP BY 1, 2, 3, 4",
        [zone, zone, *args],
    )
    for day, hour, model, long_ctx, *tokens in cur.fetchall():
        inp, outp, cr, cw, rs = (int(t) for t in tokens)
        cells.add(day, hour, pricing, model, long_ctx, inp, outp, cr, cw, rs)
    return cells.doc()


def projects(cur: Any, pricing: PriceTable, flt: TeamFilter) -> dict[str, Any]:
    where, args = TeamFilter(agent=flt.agent, machine=flt.machine, imported=flt.imported).sql("s")
    if flt.since is not None:
        where.append("s.activity >= %s")
        args.append(flt.since.epoch)
    where.append("s.project_root IS NOT NULL")
    clause = " AND ".join(where)
    groups: dict[str, dict[str, Any]] = {}

    def group(root: str) -> dict[str, Any]:
        g = groups.get(root)
        if g is None:
            name = os.path.basename(root.rstrip("/")) or root
            g = groups[root] = {"project": name, "root": root, "sessions": 0, "agents": set(), "machines": set(),
                                "last_active": 0.0, "cwds": set(), **empty_usage()}  # fmt: skip
        return g

    cur.execute(
        "SELECT s.project_root, s.cwd, s.agent, s.machine, count(*), max(s.activity) FROM sessions s"
        f" WHERE {clause} GROUP BY 1, 2, 3, 4",
        args,
    )
    for root, cwd, agent, machine, n, last in cur.fetchall():
        g = group(root)
        g["sessions"] += n
        g["agents"].add(agent)
        g["machines"].add(machine)
        g["last_active"] = max(g["last_active"], last or 0.0)
        g["cwds"].add(cwd)
    cur.execute(
        "SELECT s.project_root, u.model, u.long_ctx, sum(u.input), sum(u.output), sum(u.cache_read),"
        " sum(u.cache_write), sum(u.reasoning) FROM usage u JOIN sessions s USING (machine, agent, sid, collection)"
        f" WHERE u.counted AND {clause} GROUP BY 1, 2, 3",
        args,
    )
    for root, model, long_ctx, *tokens in cur.fetchall():
        inp, outp, cr, cw, rs = (int(t) for t in tokens)
        add_usage(
            group(root), inp, outp, cr, cw, rs, pricing.cost(model, inp, outp, cr, cw, bool(long_ctx)), model
        )
    out = []
    for g in groups.values():
        g["agents"] = sorted(g["agents"])
        g["machines"] = sorted(g["machines"])
        g["cwds"] = sorted(g["cwds"])[:50]
        last = g["last_active"]
        g["last_active"] = (
            datetime.fromtimestamp(last, UTC).isoformat().replace("+00:00", "Z") if last else None
        )
        out.append(g)
    out.sort(key=lambda g: (g["last_active"] or "", g["root"]), reverse=True)
    return {"projects": out}
