"""Goose adapter on hand-made samples (tests/corpus/goose/synthetic-agtail, built by its
build_goose_samples.py from the documented schema: no real Goose could be recorded)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.goose.adapter import GooseAdapter
from agtaild.model import Session

DATA = "goose/synthetic-agtail/.local/share/goose"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> GooseAdapter:
    return GooseAdapter()


def read_all(adapter: GooseAdapter, root: Path) -> dict[str, object]:
    return {
        adapter.read(u, None, now=LATER).session.id: adapter.read(u, None, now=LATER)
        for u in adapter.discover(root)
    }


def test_discovery_database_and_legacy_files(adapter: GooseAdapter, corpus: Path, tmp_path: Path) -> None:
    sessions = corpus / DATA / "sessions"
    units = [u.path for u in adapter.discover(corpus / DATA)]
    db = sessions / "sessions.db"
    assert units == [f"{db}#20251130_1", f"{db}#20251130_2", str(sessions / "20250301_legacy.jsonl")]
    assert [u.path for u in adapter.discover(sessions)] == units
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".local/share/goose/sessions"]
    assert adapter.default_roots({"GOOSE_PATH_ROOT": "/g"}, tmp_path) == [Path("/g/data/sessions")]


def test_events_results_usage_and_endings(adapter: GooseAdapter, corpus: Path) -> None:
    got = read_all(adapter, corpus / DATA)
    main = got["20251130_1"]
    s = main.session
    assert s.title == "List the repo files" and s.cwd == "/home/dev/src/goose-demo" and s.models == ["gpt-4o"]
    assert [e.kind for e in main.events] == [
        "text", "thinking", "text", "tool_use", "tool_use", "system", "system", "text",
    ]  # fmt: skip
    shell, editor = main.events[3], main.events[4]
    assert shell.result == "README.md\nsrc" and shell.is_error is False
    assert editor.result == "File not found: missing.md" and editor.is_error is True
    assert (s.accounting.lines, s.accounting.events, s.accounting.merged) == (7, 5, 2)
    assert s.compactions == 1 and s.ending is None
    assert s.started == "2025-11-30T10:53:20.000Z" and s.ended == "2025-11-30T10:54:10.000Z"
    # usage = Goose's accumulated columns; its own cost is kept beside agtail's
    conn = sqlite3.connect(corpus / DATA / "sessions" / "sessions.db")
    acc_in, acc_out, cost = conn.execute(
        "SELECT accumulated_input_tokens, accumulated_output_tokens, accumulated_cost FROM sessions WHERE id = ?",
        ("20251130_1",),
    ).fetchone()
    conn.close()
    assert (s.usage.input_tokens, s.usage.output_tokens) == (acc_in, acc_out)
    assert s.extra["agent_cost_usd"] == cost
    sub = got["20251130_2"].session
    assert sub.programmatic is True and sub.extra["session_type"] == "sub_agent"
    assert sub.ending == "interrupted" and adapter.resume(sub) is None
    assert (sub.usage.input_tokens, sub.usage.output_tokens) == (
        700,
        30,
    )  # no accumulated columns: the plain ones


def test_legacy_jsonl_session(adapter: GooseAdapter, corpus: Path) -> None:
    r = read_all(adapter, corpus / DATA)["20250301_legacy"]
    s = r.session
    assert s.title == "Explain the Makefile" and s.cwd == "/home/dev/src/old-demo"
    assert [e.role for e in r.events] == ["user", "assistant"]
    assert s.accounting.metadata == 1 and s.accounting.balanced()
    assert (s.usage.input_tokens, s.usage.output_tokens) == (1400, 100)
    assert adapter.resume(s) is None


def test_resume(adapter: GooseAdapter, corpus: Path) -> None:
    s = read_all(adapter, corpus / DATA)["20251130_1"].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["goose", "session", "--resume", "--session-id", "20251130_1"]
    assert cmd.cwd == "/home/dev/src/goose-demo"
    for bad in ("-x", "--name", "a b", ""):
        assert adapter.resume(Session(agent="goose", id=bad)) is None
