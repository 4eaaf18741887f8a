"""The text of `agtail top`: the limit windows, then the active sessions sorted by burn.

Pure functions of a ``usage.live`` answer (and the sort, agent filter and selection the
full screen keeps), so `top --once`, the full screen and the tests print the same lines.
Times are relative ("resets in 2h05m", "recorded 4m ago") with the local clock time beside.
"""

from __future__ import annotations

from agtaild.cli.costs import cost, cost_cell, tokens
from agtaild.cli.format import one_line, table
from agtaild.cli.width import fit

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: Sort orders, as the `s` key cycles them: (name, key of a session, largest first).
SORTS = ("burn", "burn30", "cost", "tokens", "idle")
HEADERS = ("AGENT", "SESSION", "MODEL", "TOK/M 5m", "$/H 5m", "TOK/M 30m", "$/H 30m", "TOKENS", "COST", "IDLE", "PROJECT")


def duration(seconds: float | None) -> str:
    """``2h05m``, ``4m``, ``3d02h``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    s = int(abs(seconds))
    sign = "-" if seconds < 0 else ""
    if s < 60:
        return f"{sign}{s}s"
    if s < 3600:
        return f"{sign}{s // 60}m"
    if s < 86400:
        return f"{sign}{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{sign}{s // 86400}d{s % 86400 // 3600:02d}h"


def _span(minutes: int) -> str:
    """A window's length: ``5h``, ``7d``, ``90m``."""
    if minutes and minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes and minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def _clock(iso: str | None) -> str:
    from agtaild.cli.format import local_time

    text = local_time(iso)
    return text[11:16] if len(text) >= 16 else text


def _rate(rate: dict[str, Any]) -> tuple[str, str]:
    per_hour = rate.get("usd_per_hour")
    if per_hour is None:
        known = rate.get("usd_per_hour_known")
        dollars = f"{cost(known)}+?" if known else "?"
    else:
        dollars = cost(per_hour)
    return tokens(round(rate.get("tokens_per_minute") or 0)), dollars


def sort_sessions(sessions: list[dict[str, Any]], order: str, agent: str | None = None) -> list[dict[str, Any]]:
    rows = [s for s in sessions if agent is None or s["agent"] == agent]

    def key(s: dict[str, Any]) -> tuple[float, ...]:
        burn5, burn30 = s["burn"]["5m"]["tokens"], s["burn"]["30m"]["tokens"]
        if order == "burn30":
            return (-burn30, -burn5, s["idle_seconds"])
        if order == "cost":
            return (-(s["usage"].get("cost_usd") or s["usage"].get("cost_known_usd") or 0.0), -burn5)
        if order == "tokens":
            return (-s["usage"]["total_tokens"], -burn5)
        if order == "idle":
            return (s["idle_seconds"], -burn5)
        return (-burn5, -burn30, s["idle_seconds"])

    return sorted(rows, key=key)


def window_line(w: dict[str, Any]) -> str:
    """One limit window in words."""
    agent, kind = w["agent"], w["kind"]
    if kind == "block":
        u = w["usage"]
        line = (
            f"{agent} 5h block {_clock(w['start'])}–{_clock(w['end'])}: {tokens(u['total_tokens'])} tokens"
            f" {cost_cell(u)}, resets in {duration(w['resets_in_seconds'])}"
        )
        p = w.get("projection")
        if p:
            line += f"; projection at the {p['from_rate']} rate: {tokens(p['total_tokens'])} tokens {cost(p['cost_usd'])}"
        return line
    if kind == "week":
        u = w["usage"]
        return f"{agent} last 7 days: {tokens(u['total_tokens'])} tokens {cost_cell(u)} (computed; no limit recorded)"
    age = f"recorded {duration(w.get('age_seconds'))} ago"
    unknown = w.get("unknown")
    unknown_note = f"; unknown fields: {', '.join(sorted(unknown))}" if unknown else ""
    if kind == "snapshot":
        told = ", ".join(f"{k} {w[k]}" for k in ("limit_id", "plan_type", "rate_limit_reached_type") if w.get(k))
        return f"{agent} rate limits: {told or 'no window recorded'} ({age}){unknown_note}"
    minutes = w.get("window_minutes")
    span = _span(minutes) if isinstance(minutes, int) else "?"
    used = w.get("used_percent")
    used_text = "?" if used is None else f"{used:g}%"
    resets = w.get("resets_in_seconds")
    when = "reset time unknown" if resets is None else (
        f"resets in {duration(resets)} ({_clock(w.get('resets_at'))})" if resets >= 0 else "reset passed"
    )
    return f"{agent} {kind} ({span} window): {used_text} used, {when} ({age}){unknown_note}"


def today_line(today: dict[str, Any]) -> str:
    u = today["usage"]
    parts = ", ".join(f"{r['key']} {tokens(r['total_tokens'])}" for r in today.get("agents") or [])
    return f"today ({today['day']}): {tokens(u['total_tokens'])} tokens {cost_cell(u)}" + (f" — {parts}" if parts else "")


def session_rows(sessions: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for s in sessions:
        t5, d5 = _rate(s["burn"]["5m"])
        t30, d30 = _rate(s["burn"]["30m"])
        rows.append([
            s["agent"], s["id"][:8], s.get("model") or "-", t5, d5, t30, d30,
            tokens(s["usage"]["total_tokens"]), cost_cell(s["usage"]), duration(s["idle_seconds"]),
            one_line(s.get("project") or s.get("cwd") or "-", None),
        ])  # fmt: skip
    return rows


def screen_lines(
    doc: dict[str, Any],
    *,
    width: int | None = None,
    order: str = "burn",
    agent: str | None = None,
    selected: int | None = None,
) -> list[str]:
    """Every line of one `top` screen (the selected session row marked with ``>``)."""
    from agtaild.cli.format import local_time

    lines = [f"agtail top {local_time(doc['now'], seconds=True)[11:]}  sort: {order}  agent: {agent or 'all'}"
             f"  (sessions active in the last {doc['active_minutes']} min)"]  # fmt: skip
    lines += [window_line(w) for w in doc["windows"]] or ["no limit window recorded or computed"]
    lines.append(today_line(doc["today"]))
    lines.append("")
    sessions = sort_sessions(doc["sessions"], order, agent)
    if not sessions:
        lines.append("no active sessions")
    else:
        text = table(
            session_rows(sessions), HEADERS, right=(3, 4, 5, 6, 7, 8, 9), width=None if width is None else width - 2, shrink=(2,)
        )
        rows = text.splitlines()
        lines.append("  " + rows[0])
        for i, row in enumerate(rows[1:]):
            lines.append(("> " if i == selected else "  ") + row)
        ahead = sum(int(s.get("ahead") or 0) for s in sessions)
        if ahead:
            lines.append(f"{ahead} responses are dated after this machine's clock: left out of the rates")
    return [fit(line, width) if width else line for line in lines]
