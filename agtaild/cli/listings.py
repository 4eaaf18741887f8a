"""The listings of `list`, `search` and `stats`: one row a session, two lines a search hit, a
usage table — fitted to the terminal's width when there is one (agtaild.cli.width)."""

from __future__ import annotations

from agtaild.cli.costs import cost_cell, unpriced_note
from agtaild.cli.format import (
    MARK_END,
    MARK_START,
    MIN_LAST,
    Style,
    local_time,
    one_line,
    session_ref,
    table,
    unique_short_ids,
)
from agtaild.cli.width import cells, fit

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from collections.abc import Callable, Sequence
    from typing import Any


FLAGS = (("I", "imported", "imported"), ("A", "archived", "archived"), ("P", "programmatic", "programmatic (SDK/script)"))


def flag_legend(sessions: Sequence[dict[str, Any]]) -> str:
    """What the flag letters shown in this listing mean (empty when none is shown)."""
    shown = [f"{letter} {words}" for letter, key, words in FLAGS if any(s.get(key) for s in sessions)]
    return ("flags: " + ", ".join(shown)) if shown else ""


def session_table(sessions: list[dict[str, Any]], width: int | None = None) -> str:
    """One row a session. Flags: I imported, A archived (deleted by its agent, kept by
    agtail), P programmatic (driven by an SDK or script, not typed by a person). ``width``:
    fit the terminal (the title takes the room left; when that is short the project shrinks
    and the times lose their year); without one, titles are cut at 80 characters."""
    ids = unique_short_ids(sessions)

    def rows(when: Callable[[str], str]) -> list[list[str]]:
        out = []
        for s, sid in zip(sessions, ids, strict=True):
            flags = "".join(letter for letter, key, _ in FLAGS if s.get(key))
            out.append(
                [
                    when(local_time(s.get("ended") or s.get("started") or s.get("mtime"))),
                    str(s.get("agent") or ""),
                    sid,
                    one_line(s.get("project") or "-", 24),
                    str(s.get("messages") or 0),
                    flags or "",
                    one_line(s.get("title") or s.get("first_prompt") or "", None if width else 80),
                ]
            )
        return out

    headers = ["LAST ACTIVE", "AGENT", "ID", "PROJECT", "MSGS", "", "TITLE"]
    found = rows(lambda when: when)
    if width is not None:
        fixed = sum(max(cells(r[i]) for r in [headers, *found]) + 2 for i in range(len(headers) - 1))
        if width - fixed < MIN_LAST:  # "12-01 20:44": five columns more for the title
            found = rows(lambda when: when[5:] if len(when) == 16 else when)
    return table(found, headers, right=(4,), width=width, shrink=(3,))


def branch_note(ev: dict[str, Any]) -> str:
    """Said after a search hit on an abandoned conversation branch (a rewind or edited prompt)."""
    extra = ev.get("extra") or {}
    if extra.get("branch") != "inactive":
        return ""
    return f"  (inactive branch {extra.get('alt', '?')} of {extra.get('alts', '?')}: show --around {ev.get('seq')})"


def hits(doc: dict[str, Any], style: Style, width: int | None = None) -> str:
    """Two lines a hit: where it is (session, event, time, project, title), and the snippet
    with its matches highlighted. ``width``: neither line is longer (the title, then the
    snippet, are cut); without one, the title is cut at 60 characters."""
    out = []
    for hit in doc.get("hits", []):
        s, ev = hit["session"], hit["event"]
        where = f"{session_ref(s)}  #{ev.get('seq')} {ev.get('kind')}" + (
            f"/{ev['role']}" if ev.get("role") else ""
        )
        where += branch_note(ev)
        if hit.get("found_by"):  # semantic / hybrid: which ranking found it
            where += f" [{'+'.join(hit['found_by'])}]"
        meta = f"{local_time(ev.get('ts'))}  {s.get('project') or '-'}  "
        title = one_line(s.get("title"), 60 if width is None else None)
        snippet = hit.get("snippet") or ""
        if width is not None:
            where = fit(where, width)
            meta = fit(meta, max(width - cells(where) - 2, 0))
            title = fit(title, max(width - cells(where) - 2 - cells(meta), 0))
            snippet = fit_snippet(snippet, width - 4)
        out.append(f"{style.bold(where)}  {style.dim((meta + title).rstrip())}".rstrip())
        out.append("    " + style.mark(snippet))
    return "\n".join(out)


def fit_snippet(snippet: str, width: int) -> str:
    """A snippet on one line in ``width`` columns, a highlight cut open closed again."""
    flat = " ".join(snippet.split())
    if cells(flat) <= width:
        return flat
    cut = fit(flat, max(width - 1, 0))
    if cut.count(MARK_START) > cut.count(MARK_END):
        cut = cut[:-1] + MARK_END + cut[-1:] if cut.endswith("…") else cut + MARK_END
    return cut


USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens")


def stats_table(doc: dict[str, Any], by: str) -> str:
    """The stats table; ``--by agent`` adds the sessions of each agent; a ``?`` in the cost is
    said under the table (the tokens and models without a price)."""
    sessions = by == "agent"
    rows = []
    for r in doc.get("rows", []):
        rows.append(
            [*([f"{r.get('sessions', 0):,}"] if sessions else []), *(f"{r.get(c, 0):,}" for c in USAGE_COLUMNS),
             cost_cell(r), str(r.get("key"))]
        )
    t = doc.get("totals") or {}
    rows.append([*([f"{t.get('sessions', 0):,}"] if sessions else []), *(f"{t.get(c, 0):,}" for c in USAGE_COLUMNS),
                 cost_cell(t), "TOTAL"])
    headers = [*(["SESSIONS"] if sessions else []), "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST",
               by.upper()]
    text = table(rows, headers, right=tuple(range(len(headers) - 1)))
    note = unpriced_note(t)
    return text + ("\n" + note if note else "")
