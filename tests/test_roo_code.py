"""Roo Code adapter: Cline-format task folders with Roo's additions (synthetic samples)."""

from __future__ import annotations

import json
from pathlib import Path

from agtaild.adapters.base import ReadResult
from agtaild.adapters.roo_code.adapter import RooCodeAdapter
from agtaild.model import ParentRef

SYNTH = "roo-code/synthetic-agtail/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline"
PARENT = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
CHILD = "7c8d9e0f-1a2b-4c3d-9e4f-5a6b7c8d9e0f"


def _by_id(root: Path) -> dict[str, ReadResult]:
    a = RooCodeAdapter()
    return {r.session.id: r for r in (a.read(u, None, now=1e12) for u in a.discover(root))}


def test_default_roots_cover_every_editor(tmp_path: Path) -> None:
    roots = RooCodeAdapter().default_roots({}, tmp_path)
    assert tmp_path / ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline" in roots
    assert tmp_path / "Library/Application Support/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline" in roots


def test_parent_task(corpus: Path) -> None:
    res = _by_id(corpus / SYNTH)[PARENT]
    s = res.session
    assert s.title == "Rename the helper parseDate to parseIsoDate everywhere"
    assert s.cwd == "/home/dev/src/roo-demo" and s.extra["mode"] == "code"
    assert [e.kind for e in res.events] == [
        "text", "text", "tool_use", "thinking", "tool_use", "summary", "tool_use", "system", "text",
    ]
    assert s.compactions == 1
    diff = next(e for e in res.events if e.tool == "apply_diff")
    assert diff.is_error is True and diff.result == "Error: no match for SEARCH block"
    # Usage = the UI's api_req_started records = the history item's totals.
    item = json.loads((corpus / SYNTH / "tasks" / PARENT / "history_item.json").read_text())
    u = s.usage
    assert (u.input_tokens, u.output_tokens) == (item["tokensIn"], item["tokensOut"])
    assert (u.cache_read_tokens, u.cache_write_tokens) == (item["cacheReads"], item["cacheWrites"])
    assert s.extra["recorded_cost_usd"] == item["totalCost"]
    assert s.accounting.balanced() and s.accounting.lines == 10 + 14 + 2
    assert RooCodeAdapter().resume(s) is None and not s.resumable


def test_subtask_links_to_the_new_task_call(corpus: Path) -> None:
    sessions = _by_id(corpus / SYNTH)
    child = sessions[CHILD].session
    assert child.parent == ParentRef(agent="roo-code", id=PARENT, tool_use_id="toolu_02")
    read = next(e for e in sessions[CHILD].events if e.kind == "tool_use")
    assert read.tool == "read_file" and read.result == "1 | import { parseDate } from '../src/util'"
    assert sessions[CHILD].events[-1].text == "tests updated."
