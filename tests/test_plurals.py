"""Counts read as English (issue 23, item 16): "1 match", "(1 more line)", "(1 event)" —
one helper (agtaild.words.count) behind every message that puts a number before a noun."""

from __future__ import annotations

import re

import pytest

from agtaild.cli import activity_tables, branches, diff
from agtaild.cli import format as fmt
from agtaild.mcp import render
from agtaild.words import count, plural


@pytest.mark.parametrize(
    ("noun", "many"),
    [("match", "matches"), ("line", "lines"), ("event", "events"), ("entry", "entries"),
     ("query", "queries"), ("day", "days"), ("bad line", "bad lines"), ("box", "boxes")],
)
def test_plural_rules(noun: str, many: str) -> None:
    assert plural(noun) == many
    assert count(1, noun) == f"1 {noun}"
    assert count(2, noun) == f"2 {many}"
    assert count(0, noun) == f"0 {many}"


def test_count_groups_digits_unless_told() -> None:
    assert count(1200, "event") == "1,200 events"
    assert count(1200, "event", grouped=False) == "1200 events"
    assert count(1, "person", "people") == "1 person" and count(3, "person", "people") == "3 people"


_WRONG = re.compile(r"\b1 (matches|lines|events|more lines|sessions|files|hits|calls)\b")


def test_one_tool_output_line_left_out_is_a_line() -> None:
    ev = {"seq": 3, "kind": "tool_use", "tool": "Bash", "input": {"command": "ls"},
          "result": "\n".join(f"line {i}" for i in range(7))}
    text = "\n".join(fmt.event_lines(ev, fmt.Style()))
    assert "(1 more line)" in text and not _WRONG.search(text)


def test_one_diff_line_and_one_summary_line_left_out() -> None:
    lines = [f"+x{i}" for i in range(diff.SHOWN_LINES + 1)]
    edit = {"files": [{"path": "a.py", "op": "update", "numbered": True,
                       "hunks": [{"old_start": 1, "new_start": 1, "lines": lines}]}]}
    text = "\n".join(diff.diff_lines(edit, fmt.Style()))
    assert "1 more line " in text and not _WRONG.search(text)
    summary = "\n".join(f"s{i}" for i in range(branches.FOLDED_SUMMARY_LINES + 1))
    assert branches.folded_summary(summary, full=False)[-1] == "… summary folded: 1 more line (--full)"


def test_an_hour_with_one_event() -> None:
    doc = {"rows": [{"key": "1 09", "weekday": 1, "hour": 9, "events": 1}],
           "totals": {"events": 1, "total_tokens": 0}}
    text = activity_tables.hour_grid(doc)
    assert "Mon 09:00 (1 event)" in text and "1 event, 0 tokens" in text
    assert not _WRONG.search(text)


def test_mcp_one_match() -> None:
    doc = {"hits": [{"session": {"agent": "codex", "id": "a"}, "event": {"seq": 1, "kind": "text"}, "snippet": "x"}]}
    text = render.hits(doc, query="x", more=None)
    assert text.startswith("1 match for 'x'") and not _WRONG.search(text)
