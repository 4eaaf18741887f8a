"""Human-readable output: aligned tables, transcripts, times, ids. (``--json`` skips all this.)

Colour only when stdout is a terminal and ``NO_COLOR`` is not set. Times are shown in the
local zone; long texts are abbreviated (``show --full`` prints them whole). The listings of
`list`, `search` and `stats` are in agtaild.cli.listings, cost wording in agtaild.cli.costs,
diffs in agtaild.cli.diff.
"""

from __future__ import annotations

import math
import os
import sys
import time

from agtaild.cli.costs import cost_phrase, tokens
from agtaild.cli.width import cells, fit, pad
from agtaild.textsafe import trusted
from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, TextIO

#: The highlight markers in search snippets, as the API sends them (agtaild.index.text makes
#: them; importing it here would load msgspec and the model into every CLI command).
MARK_START = "«"
MARK_END = "»"


class Style:
    def __init__(self, stream: TextIO | None = None) -> None:
        stream = stream or sys.stdout
        self.on = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")

    def _wrap(self, code: str, text: str) -> str:
        # Trusted tokens: only agtail's own colours survive the output stream's sanitiser.
        if not (self.on and text):
            return text
        return trusted("\x1b[" + code + "m") + text + trusted("\x1b[0m")

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def mark(self, snippet: str) -> str:
        """Turn the «» highlight markers of a snippet into colour (kept as-is without colour)."""
        if not self.on:
            return snippet
        return snippet.replace(MARK_START, trusted("\x1b[1;33m")).replace(MARK_END, trusted("\x1b[0m"))


def local_time(value: str | float | None, *, seconds: bool = False) -> str:
    """An ISO timestamp or epoch as local 'YYYY-MM-DD HH:MM' ('-' when unknown)."""
    if value is None or value == "":
        return "-"
    shape = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    try:
        if isinstance(value, (int, float)):
            local = time.localtime(_whole_seconds(value))
        else:
            fields = _iso_fields(value)
            if fields is None:  # not the shape the index writes
                local = None
            elif fields[1] is None:  # no zone: shown as written
                local = fields[0]
            else:
                local = time.localtime(_epoch(fields[0]) - fields[1])
        if local is not None and 1000 <= local.tm_year <= 9998:
            return time.strftime(shape, local)
        return _local_time_datetime(value, shape)  # the rest as datetime has it
    except (ValueError, OverflowError, OSError):
        return str(value)[:16]


def _whole_seconds(value: float) -> int:
    """The second ``datetime.fromtimestamp(value)`` falls in: it rounds to the microsecond
    (half to even) first, so 1.9999999 is in second 2, and -1e-9 in second 0."""
    if isinstance(value, int):
        return value
    fraction, whole = math.modf(value)
    micros = round(fraction * 1e6)
    if micros >= 1_000_000:
        whole += 1
    elif micros < 0:
        whole -= 1
    return int(whole)


def _local_time_datetime(value: str | float, shape: str) -> str:
    from datetime import datetime

    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value).astimezone().strftime(shape)
    dt = datetime.fromisoformat(value)
    return (dt.astimezone() if dt.tzinfo else dt).strftime(shape)


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _iso_fields(text: str) -> tuple[time.struct_time, int | None] | None:
    """``YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]`` (what the index stores) as its fields and
    its offset from UTC in seconds (None: no zone); None for any other shape. Without
    importing datetime, which costs a listing more than the rest of its formatting."""
    if len(text) < 19 or text[4] != "-" or text[7] != "-" or text[10] not in "T " or text[13] != ":" or text[16] != ":":
        return None
    parts = (text[0:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    year, month, day, hour, minute, second = map(int, parts)
    rest = text[19:]
    if rest[:1] == ".":
        digits = len(rest) - len(rest[1:].lstrip("0123456789")) - 1
        if digits < 1:
            return None
        rest = rest[1 + digits :]
    offset: int | None = None
    if rest == "Z":
        offset = 0
    elif len(rest) == 6 and rest[0] in "+-" and rest[3] == ":" and rest[1:3].isdigit() and rest[4:6].isdigit():
        hours, minutes = int(rest[1:3]), int(rest[4:6])
        if hours > 23 or minutes > 59:
            return None
        offset = (hours * 3600 + minutes * 60) * (1 if rest[0] == "+" else -1)
    elif rest:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not (year >= 1 and 1 <= month <= 12 and hour < 24 and minute < 60 and second < 60):
        return None
    if not 1 <= day <= _DAYS[month - 1] + (1 if month == 2 and leap else 0):
        return None
    return time.struct_time((year, month, day, hour, minute, second, 0, 1, -1)), offset


def _epoch(t: time.struct_time) -> int:
    """Seconds since 1970 of a UTC calendar time (days from the civil calendar, H. Hinnant)."""
    y = t.tm_year - (t.tm_mon <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (t.tm_mon + (-3 if t.tm_mon > 2 else 9)) + 2) // 5 + t.tm_mday - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    return days * 86400 + t.tm_hour * 3600 + t.tm_min * 60 + t.tm_sec


def clock(value: str | None) -> str:
    full = local_time(value, seconds=True)
    return full[11:] if len(full) >= 19 else "--:--:--"


def one_line(text: Any, width: int | None) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` columns (None: whole)."""
    flat = " ".join(str(text or "").split())
    return flat if width is None else fit(flat, width)


#: With a width to fit: the least room the last column (a title) keeps before the columns
#: that may shrink give up theirs, and the least such a column keeps.
MIN_LAST = 20
MIN_SHRUNK = 8


def table(
    rows: Sequence[Sequence[str]],
    headers: Sequence[str],
    right: Sequence[int] = (),
    *,
    width: int | None = None,
    shrink: Sequence[int] = (),
    last: Callable[[str, int], str] = fit,
) -> str:
    """Aligned columns; the last column is left free (titles run on). With ``width`` (the
    terminal's), no line is longer than it: the last column is cut to the room left (by
    ``last``: at the right, or e.g. keeping a path's end), and when that room is under
    :data:`MIN_LAST` the columns in ``shrink`` give up theirs first (down to MIN_SHRUNK)."""
    all_rows = [list(headers), *[list(r) for r in rows]]
    n = len(headers)
    widths = [max(cells(r[i]) for r in all_rows) for i in range(n - 1)]

    def room() -> int:
        return (width or 0) - sum(widths) - 2 * (n - 1)

    if width is not None:
        for i in shrink:
            short = MIN_LAST - room()
            if short > 0 and widths[i] > MIN_SHRUNK:
                widths[i] = max(MIN_SHRUNK, cells(headers[i]), widths[i] - short)
    lines = []
    for row in all_rows:
        parts = []
        for i, cell in enumerate(row):
            if i == n - 1:
                parts.append(cell if width is None else last(cell, max(room(), 0)))
                continue
            shown = cell if cells(cell) <= widths[i] else fit(cell, widths[i])
            parts.append(pad(shown, widths[i], right=i in right))
        line = "  ".join(parts).rstrip()
        lines.append(line if width is None else fit(line, width))  # the last guard: never wraps
    return "\n".join(lines)


def short_id(sid: str, others: Sequence[str] = ()) -> str:
    """Enough of an id to type as a prefix (subagent ids share a long "agent-" start): at
    least 8 characters, more when ``others`` (ids shown beside it) share that start — time-
    ordered ids (UUIDv7, pi's, OpenCode's) often agree on their first 8 characters."""
    n = 14 if sid.startswith("agent-") else 8
    rivals = [o for o in others if o != sid]
    while n < len(sid) and any(o.startswith(sid[:n]) for o in rivals):
        n += 1
    return sid[:n]


def unique_short_ids(sessions: Sequence[dict[str, Any]]) -> list[str]:
    """A short id per session: the index's ``short_id`` (unique among all the agent's
    sessions), else one unique among the shown sessions of the same agent."""
    by_agent: dict[str, list[str]] = {}
    for s in sessions:
        by_agent.setdefault(str(s.get("agent")), []).append(str(s.get("id") or ""))
    return [
        str(s["short_id"]) if s.get("short_id") else short_id(str(s.get("id") or ""), by_agent[str(s.get("agent"))])
        for s in sessions
    ]


def session_ref(s: dict[str, Any], short: bool = True) -> str:
    """AGENT:ID; short, the index's unique prefix (the whole id when the index gave none)."""
    sid = str(s.get("id", ""))
    return f"{s.get('agent')}:{str(s.get('short_id') or sid) if short else sid}"


def session_header(s: dict[str, Any], style: Style) -> str:
    u = s.get("usage") or {}
    bits = [
        s.get("cwd") or "-",
        *([f"({s['git_branch']})"] if s.get("git_branch") else []),
        "·",
        ", ".join(s.get("models") or []) or "-",
        "·",
        f"{local_time(s.get('started'))} → {local_time(s.get('ended'))}",
        "·",
        count(s.get("messages") or 0, "message"),
        "·",
        f"{tokens(u.get('total_tokens'))} tokens {cost_phrase(u)}",
    ]
    tags = [
        t
        for t, on in (
            ("imported", s.get("imported")),
            ("archived", s.get("archived")),
            ("truncated", s.get("truncated")),
            ("programmatic", s.get("programmatic")),
        )
        if on
    ]
    if s.get("collection"):
        tags.append(f"collection {s['collection']}")
    head = f"{style.bold(session_ref(s, short=False))}  {s.get('title') or ''}".rstrip()
    return "\n".join([head, style.dim(" ".join(bits) + (f" · {', '.join(tags)}" if tags else ""))])


def compact_input(value: Any) -> str:
    """A tool input as a person reads it: the command, path or query alone when it has one."""
    if isinstance(value, dict):
        for key in (
            "command",
            "cmd",
            "file_path",
            "path",
            "pattern",
            "query",
            "url",
            "description",
            "prompt",
        ):
            if isinstance(value.get(key), (str, list)):
                inner = value[key]
                return " ".join(inner) if isinstance(inner, list) else inner
    if isinstance(value, str):
        return value
    import json  # only for a value that is not text

    return json.dumps(value, ensure_ascii=False)


def cut_line(line: str, width: int) -> str:
    """A line cut at ``width`` characters with a marker, its whitespace kept as written
    (tool output is indentation-sensitive: ``2\t    return`` must not become ``2 return``)."""
    return line if len(line) <= width else f"{line[:width]}… (+{count(len(line) - width, 'char')})"


def _block(text: str, indent: str, max_lines: int | None, width: int = 200) -> list[str]:
    lines = text.strip("\n").splitlines() or [""]
    shown = lines if max_lines is None else lines[:max_lines]
    out = [indent + (line if max_lines is None else cut_line(line, width)) for line in shown]
    if max_lines is not None and len(lines) > max_lines:
        out.append(f"{indent}… ({count(len(lines) - max_lines, 'more line')})")
    return out


def transcript(
    session: dict[str, Any],
    events: Iterable[dict[str, Any]],
    style: Style,
    *,
    full: bool = False,
    all_branches: bool = False,
    diffs: bool = True,
) -> str:
    """A readable transcript: who said what, tool calls with their (abbreviated) results.
    The active branch only, with a marker at each fork (``all_branches``: every branch)."""
    return "\n".join(transcript_lines(session, events, style, full=full, all_branches=all_branches, diffs=diffs))


def transcript_lines(
    session: dict[str, Any] | None,
    events: Iterable[dict[str, Any]],
    style: Style,
    *,
    full: bool = False,
    all_branches: bool = False,
    diffs: bool = True,
) -> Iterator[str]:
    """The transcript line by line (``show`` prints them as events arrive, page by page)."""
    from agtaild.cli import branches

    if session is not None:
        yield session_header(session, style)
        yield ""
    for marker, ev in branches.walk(events, all_branches=all_branches):
        if ev is None:
            yield style.cyan(marker or "")
            continue
        yield from event_lines(ev, style, full=full, diffs=diffs)


def event_lines(ev: dict[str, Any], style: Style, *, full: bool = False, diffs: bool = True) -> list[str]:
    """The lines of one event in a transcript (an edit as a diff unless ``diffs`` is off)."""
    from agtaild.cli import branches, diff

    out: list[str] = []
    text_lines = None if full else 40
    tool_lines = None if full else 6
    kind = ev.get("kind")
    when = style.dim(f"[{clock(ev.get('ts'))}] #{ev.get('seq')}")
    role = ev.get("role") or ""
    if branches.is_boundary(ev):
        out.append(f"{when} {style.bold(branches.divider(ev))}")
        if ev.get("text") and ev.get("subtype") == "compaction":
            out += [style.dim("  " + x) for x in branches.folded_summary(ev["text"], full=full)]
    elif branches.is_compact_summary(ev):
        out.append(f"{when} {style.dim('compaction summary')}")
        out += [style.dim("  " + x) for x in branches.folded_summary(ev.get("text") or "", full=full)]
    elif kind == "text":
        out.append(f"{when} {style.bold(role or 'message')}")
        edit = diff.edit_of(ev) if diffs else None  # edits written in the text (Aider's blocks)
        text = ev.get("text") or ""
        out += _block(diff.fold_text(text, edit) if edit is not None else text, "  ", text_lines, 10_000)
        if edit is not None:
            out += diff.diff_lines(edit, style, full=full)
    elif kind == "thinking":
        out.append(f"{when} {style.dim('thinking')}")
        out += [_thinking_line(line, style) for line in _block(ev.get("text") or "", "  ", None if full else 3)]
    elif kind == "tool_use":
        edit = diff.edit_of(ev)
        # An edit's call line names the files it touches (an apply_patch input is the patch).
        called = diff.edit_summary(edit) if edit is not None else compact_input(ev.get("input"))
        out.append(f"{when} {style.cyan('▸ ' + (ev.get('tool') or '?'))} {one_line(called, 160)}")
        if ev.get("text"):
            out += _block(ev["text"], "  ", text_lines)
        if edit is not None and diffs:
            out += diff.diff_lines(edit, style, full=full)
        elif not diffs:  # the raw input: as JSON, or the patch text a call line no longer shows
            inp = ev.get("input")
            if isinstance(inp, (dict, list)):
                import json  # a tool's input, shown whole

                out += _block(json.dumps(inp, ensure_ascii=False, indent=2), "    ", None if full else 40)
            elif isinstance(inp, str) and edit is not None:
                out += _block(inp, "    ", None if full else 40)
        result = ev.get("result")
        if result is not None:
            body = result if isinstance(result, str) else compact_input(result)
            exit_code = (ev.get("extra") or {}).get("exit_code")
            said = f"error (exit {exit_code}):" if isinstance(exit_code, int) and exit_code else "error:"
            mark = style.red(f"  ⎿ {said}") if ev.get("is_error") else "  ⎿"
            lines = _block(body, "    ", tool_lines)
            out.append(f"{mark} {lines[0][4:]}")
            out += lines[1:]
    elif kind == "tool_result":
        out.append(f"{when} {style.cyan('⎿ result')}")
        out += _block(compact_input(ev.get("result")), "    ", tool_lines)
    elif kind == "hook":
        hook = ev.get("hook") or {}
        desc = " ".join(str(x) for x in (hook.get("event"), hook.get("tool"), hook.get("command")) if x)
        out.append(f"{when} {style.dim('hook ' + one_line(desc, 160))}")
        if hook.get("text") or ev.get("text"):
            out += [
                style.dim(x) for x in _block(hook.get("text") or ev.get("text") or "", "  ", tool_lines)
            ]
    elif kind in ("summary", "system"):
        label = kind + (f"/{ev['subtype']}" if ev.get("subtype") else "")
        out.append(f"{when} {style.dim(label)} {style.dim(one_line(ev.get('text'), 200))}")
    else:
        raw = ev.get("raw")
        out.append(
            f"{when} {style.dim(str(kind))} {style.dim(one_line(compact_input(raw) if raw else ev.get('text'), 160))}"
        )
    return out


def _thinking_line(line: str, style: Style) -> str:
    """A line of reasoning, dim; a Markdown heading in bold (``**Inspecting the workspace**``,
    as Codex heads each step) shown bold, without its asterisks."""
    body = line.strip()
    if len(body) > 4 and body.startswith("**") and body.endswith("**") and "**" not in body[2:-2]:
        return line[: len(line) - len(line.lstrip())] + style.bold(body[2:-2])
    return style.dim(line)
