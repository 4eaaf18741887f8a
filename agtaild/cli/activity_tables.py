"""`agtail stats --by tool` and `--by hour` as text: a tool table and an hour × weekday grid."""

from __future__ import annotations

from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: Shades of the hour grid, from no activity to the busiest cell.
SHADES = " ░▒▓█"


def tool_table(doc: dict[str, Any], by: str = "tool") -> str:
    """Calls, errors and their rate per tool (with its category) or per category (with its
    tools), and the agents that made them."""
    from agtaild.cli import format as fmt

    def most(counts: dict[str, int]) -> str:
        return ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))

    by_category = by == "tool-category"
    rows = []
    for r in doc.get("rows", []):
        calls, errors = int(r.get("calls") or 0), int(r.get("errors") or 0)
        rate = f"{100 * errors / calls:.0f}%" if calls else "-"
        beside = most(r.get("tools") or {}) if by_category else str(r.get("category") or "")
        rows.append([f"{calls:,}", f"{errors:,}", rate, str(r.get("key")), beside, most(r.get("agents") or {})])
    t = doc.get("totals") or {}
    rows.append([f"{t.get('calls', 0):,}", f"{t.get('errors', 0):,}", "", "TOTAL", "", ""])
    head = ["CALLS", "ERRORS", "ERR%", "CATEGORY", "TOOLS", "AGENTS"] if by_category else [
        "CALLS", "ERRORS", "ERR%", "TOOL", "CATEGORY", "AGENTS"]
    return fmt.table(rows, head, right=(0, 1, 2))


def hour_grid(doc: dict[str, Any]) -> str:
    """Events per hour of day (columns) × weekday (rows), shaded, then the busiest cells."""
    counts = {(int(r["weekday"]), int(r["hour"])): int(r.get("events") or 0) for r in doc.get("rows", [])}
    top = max(counts.values(), default=0)
    lines = ["     " + "".join(f"{h:<3}" if h % 3 == 0 else "   " for h in range(24)).rstrip()]
    for d in range(1, 8):
        cells = []
        for h in range(24):
            n = counts.get((d, h), 0)
            shade = SHADES[0] if not n or not top else SHADES[max(1, round(n / top * (len(SHADES) - 1)))]
            cells.append(shade * 2 + " ")
        lines.append(f"{WEEKDAYS[d - 1]}  " + "".join(cells).rstrip())
    busiest = sorted(doc.get("rows", []), key=lambda r: -int(r.get("events") or 0))[:5]
    if busiest:
        lines.append("")
        lines.append(
            "busiest: "
            + ", ".join(
                f"{WEEKDAYS[int(r['weekday']) - 1]} {int(r['hour']):02d}:00 ({count(int(r['events']), 'event')})"
                for r in busiest
            )
        )
    t = doc.get("totals") or {}
    lines.append(f"{count(t.get('events', 0), 'event')}, {count(t.get('total_tokens', 0), 'token')} (local time)")
    return "\n".join(lines)
