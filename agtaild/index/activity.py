"""Stats that count events rather than tokens: ``--by tool`` and ``--by hour``.

* tool: every ``tool_use`` event by tool name — calls, errors (``is_error``), calls per agent,
  its category — grouped in SQL over ``events.tool`` / ``events.tool_failed`` /
  ``events.tool_category`` (set for tool calls when they are stored); a tool call has no
  tokens of its own, so the usage fields are zero. tool-category: the same by category
  (agtaild.adapters.kit.tool_categories), each row with the tools in it.
* hour: activity by hour of day × weekday in the local time zone of agtaild (the user's):
  events per cell, and the tokens/cost of the API responses in it (each counted once).
  Keys are ``"<weekday> <hour>"`` with ISO weekdays (1 = Monday … 7 = Sunday), e.g. ``"1 09"``.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import msgspec

from agtaild.index import quarters, tool_totals, week
from agtaild.index.codec import EVENT_FIELDS
from agtaild.index.params import TimeBound
from agtaild.index.queries import add_usage, empty_usage
from agtaild.index.selection import Picked, id_conditions
from agtaild.pricing import PriceTable

_TOOL_AT = EVENT_FIELDS.index("tool")
_ERROR_AT = EVENT_FIELDS.index("is_error")
_unpack = msgspec.msgpack.Decoder()
#: strftime('%w') (0 = Sunday) → ISO weekday.
_ISO_DAY = {"0": 7, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
UNKNOWN_TOOL = "(unknown)"
_SHIFT = quarters.SHIFT


def _where(
    agent: str | None,
    project: str | None,
    since: TimeBound | None,
    until: TimeBound | None,
    col: str,
    picked: Picked = (None, None),
) -> tuple[str, list[Any]]:
    where = [f"{col} IS NOT NULL"]
    args: list[Any] = []
    more, more_args = id_conditions(col.split(".")[0] + ".session_id", *picked)
    where += more
    args += more_args
    if agent:
        where.append("s.agent = ?")
        args.append(agent)
    if project:
        where.append("s.project = ?")
        args.append(project)
    if since is not None:
        where.append(f"{col} >= ?")
        args.append(since.epoch)
    if until is not None:
        where.append(f"{col} < ?")
        args.append(until.epoch)
    return " AND ".join(where), args


def by_tool(
    db: sqlite3.Connection,
    *,
    agent: str | None = None,
    project: str | None = None,
    since: TimeBound | None = None,
    until: TimeBound | None = None,
    by: str = "tool",
    picked: Picked = (None, None),
) -> dict[str, Any]:
    """Tool calls by tool name (``by="tool"``: each row names its ``category``) or by category
    (``by="tool-category"``: each row lists its ``tools``)."""
    if tool_totals.answers(project=project, since=since, until=until, picked=picked):
        return tool_rows(tool_totals.groups(db, agent), by)  # the writer's totals
    clause, args = _where(agent, project, since, until, "e.epoch", picked)
    if since is None and until is None:
        clause = clause.replace("e.epoch IS NOT NULL", "1")
    groups = db.execute(
        "SELECT s.agent, e.tool, e.tool_category, e.tool_failed, count(*) FROM events e"
        " JOIN sessions s ON s.id = e.session_id"
        f" WHERE e.kind = 'tool_use' AND {clause} GROUP BY s.agent, e.tool, e.tool_category, e.tool_failed",
        args,
    )
    return tool_rows(groups, by)


def tool_rows(groups: Any, by: str) -> dict[str, Any]:
    """The ``--by tool`` / ``--by tool-category`` document from (agent, tool, category, failed,
    calls) groups; shared with the team database (agtaild.pg.activity)."""
    rows: dict[str, dict[str, Any]] = {}
    kinds: dict[str, dict[str, int]] = {}  # by tool: its calls per category
    calls = errors = 0
    for ag, tool, category, failed, n in groups:
        name = tool or UNKNOWN_TOOL
        kind = category or "other"
        key = kind if by == "tool-category" else name
        row = rows.get(key)
        if row is None:
            row = rows[key] = {"key": key, "calls": 0, "errors": 0, "agents": {}, **empty_usage()}
            if by == "tool-category":
                row["tools"] = {}
        row["calls"] += n
        row["agents"][ag] = row["agents"].get(ag, 0) + n
        if by == "tool-category":
            row["tools"][name] = row["tools"].get(name, 0) + n
        else:
            seen = kinds.setdefault(key, {})
            seen[kind] = seen.get(kind, 0) + n
        calls += n
        if failed:
            row["errors"] += n
            errors += n
    for key, seen in kinds.items():  # a tool's category: the one most of its calls have
        rows[key]["category"] = min(seen, key=lambda c: (-seen[c], c))
    for row in rows.values():
        if "tools" in row:
            row["tools"] = dict(sorted(row["tools"].items(), key=lambda x: (-x[1], x[0])))
    out = sorted(rows.values(), key=lambda r: (-r["calls"], r["key"]))
    return {"totals": {**empty_usage(), "calls": calls, "errors": errors}, "rows": out}


def tool_of(data: bytes) -> tuple[str | None, bool]:
    """(tool name, failed) of a stored tool call (the ``events.tool`` columns of an index made
    before they existed: agtaild.index.schema.m007_tools)."""
    if data[:1] == b"{":
        doc = msgspec.json.decode(data)
        return (str(doc["tool"]) if doc.get("tool") else None), doc.get("is_error") is True
    values = _unpack.decode(data)
    tool = values[_TOOL_AT] if len(values) > _TOOL_AT else None
    failed = values[_ERROR_AT] if len(values) > _ERROR_AT else None
    return (str(tool) if tool else None), failed is True


def by_hour(
    db: sqlite3.Connection,
    pricing: PriceTable,
    *,
    agent: str | None = None,
    project: str | None = None,
    since: TimeBound | None = None,
    until: TimeBound | None = None,
    picked: Picked = (None, None),
) -> dict[str, Any]:
    cells = HourCells()

    # SQL groups by quarter hour (integer arithmetic) and Python turns each quarter into its
    # local weekday and hour: SQLite's 'localtime' per row was most of the time (measured on the
    # 200 MB corpus: 150 ms of the events' 55 ms scan). Every UTC offset, and every daylight-saving
    # change, falls on a quarter hour, so a quarter lies within one local hour.
    bucket = quarters.QUARTER_SQL  # the quarter of an epoch column, as the writer's counts have it
    local: dict[int, tuple[str, str]] = {}
    # Sessions are joined only for the filters that need them (a lookup per row otherwise).
    join = " JOIN sessions s ON s.id = {t}.session_id" if agent or project else ""

    def when(quarter: int) -> tuple[str, str]:
        got = local.get(quarter)
        if got is None:
            t = time.localtime((quarter - _SHIFT // 900) * 900)
            got = local[quarter] = (str((t.tm_wday + 1) % 7), f"{t.tm_hour:02d}")
        return got

    # Over the whole history (no project, bound or selection of sessions): the writer's sums
    # per quarter of the week (agtaild.index.week), a few thousand rows at any size; each bucket
    # is then a local quarter of the week. Else events per quarter: from the writer's counts per
    # session (agtaild.index.quarters) when the bounds are whole quarters (dates and hours
    # always are), else by counting the events themselves.
    weekly = week.answers(project=project, since=since, until=until, picked=picked)
    if weekly:

        def when(quarter: int) -> tuple[str, str]:  # here a local hour of the week, Monday first
            return str((quarter // 24 + 1) % 7), f"{quarter % 24:02d}"

    bounds = [b.epoch for b in (since, until) if b is not None]
    rolled = quarters.answers(bounds)
    over: dict[str, Any] = {"agent": agent, "project": project, "picked": picked,
            "since": since.epoch if since is not None else None, "until": until.epoch if until is not None else None}  # fmt: skip
    if weekly:
        per_quarter = week.event_counts(db, agent)
    elif rolled:
        per_quarter = quarters.counts(db, **over)
    else:
        clause, args = _where(agent, project, since, until, "e.epoch", picked)
        per_quarter = db.execute(
            f"SELECT {bucket.format(col='e.epoch')}, count(*) FROM events e{join.format(t='e')}"
            f" WHERE {clause} GROUP BY 1",
            args,
        ).fetchall()
    for quarter, n in per_quarter:
        wd, hour = when(quarter)
        cells.cell(_ISO_DAY.get(wd, 0), int(hour))["events"] += n
    # Tokens are summed per (local weekday, hour, model, long-context flag) and each sum priced
    # once, in that order, as a GROUP BY on the local time would.
    groups: dict[tuple[str, str, str | None, int], list[int]] = {}
    if weekly:
        usage_rows = week.usage_counts(db, agent)
    elif rolled:
        usage_rows = quarters.usage_counts(db, **over)
    else:
        clause, args = _where(agent, project, since, until, "u.epoch", picked)
        usage_rows = db.execute(
            f"SELECT {bucket.format(col='u.epoch')}, u.model, u.long_ctx, sum(u.input), sum(u.output),"
            f" sum(u.cache_read), sum(u.cache_write), sum(u.reasoning) FROM usage u{join.format(t='u')}"
            f" WHERE u.counted = 1 AND {clause} GROUP BY 1, u.model, u.long_ctx",
            args,
        ).fetchall()
    for quarter, model, long_ctx, inp, outp, cr, cw, rs in usage_rows:
        wd, hour = when(quarter)
        acc = groups.setdefault((wd, hour, model, long_ctx), [0, 0, 0, 0, 0])
        for i, v in enumerate((inp, outp, cr, cw, rs)):
            acc[i] += v
    for (wd, hour, model, long_ctx), (inp, outp, cr, cw, rs) in sorted(
        groups.items(), key=lambda g: (g[0][0], g[0][1], g[0][2] is not None, g[0][2] or "", g[0][3])
    ):
        cells.add(_ISO_DAY.get(wd, 0), int(hour), pricing, model, long_ctx, inp, outp, cr, cw, rs)
    doc = cells.doc()
    # Usage with no time at all (nor has its session) is in no hour: the answer says how much.
    from agtaild.index.stats import undated_usage

    undated = undated_usage(db, pricing, agent=agent, project=project)
    if undated is not None:
        doc["undated"] = undated
    return doc


class HourCells:
    """A ``by=hour`` document being built (here and on the team server, agtaild.pg.activity):
    a cell per ISO weekday and hour, and the token totals."""

    def __init__(self) -> None:
        self.cells: dict[str, dict[str, Any]] = {}
        self.totals = empty_usage()

    def cell(self, weekday: int, hour: int) -> dict[str, Any]:
        key = f"{weekday} {hour:02d}"
        c = self.cells.get(key)
        if c is None:
            c = self.cells[key] = {"key": key, "weekday": weekday, "hour": hour, "events": 0, **empty_usage()}
        return c

    def add(self, weekday: int, hour: int, pricing: PriceTable, model: str | None, long_ctx: Any,
            inp: int, outp: int, cr: int, cw: int, rs: int) -> None:  # fmt: skip
        """One group's tokens, priced once, into its cell and the totals."""
        cost = pricing.cost(model, inp, outp, cr, cw, bool(long_ctx))
        add_usage(self.cell(weekday, hour), inp, outp, cr, cw, rs, cost, model)
        add_usage(self.totals, inp, outp, cr, cw, rs, cost, model)

    def doc(self) -> dict[str, Any]:
        out = sorted(self.cells.values(), key=lambda c: (c["weekday"], c["hour"]))
        self.totals["events"] = sum(c["events"] for c in out)
        return {"totals": self.totals, "rows": out}
