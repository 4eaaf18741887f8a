"""`stats --by agent` has a SESSIONS column (issue 23, item 17): each agent row counts the
sessions whose counted usage falls in the scope, with and without date bounds; the totals too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.cli import main
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL


@pytest.fixture
def roots(tmp_path: Path) -> list[str]:
    return [
        "--data-dir",
        str(tmp_path / "data"),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={CLAUDE_REAL}",
        "--root",
        f"codex={CODEX_REAL}",
    ]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def with_usage(capsys: pytest.CaptureFixture[str], roots: list[str], agent: str) -> int:
    sessions = json.loads(run(capsys, *roots, "--json", "list", "--agent", agent, "--limit", "1000"))[
        "sessions"
    ]
    return sum(1 for s in sessions if s["usage"]["total_tokens"])


@pytest.mark.parametrize("bounds", [(), ("--since", "2026-11-01"), ("--since", "2026-11-29T00:00Z")])
def test_sessions_per_agent(
    roots: list[str], capsys: pytest.CaptureFixture[str], bounds: tuple[str, ...]
) -> None:
    doc = json.loads(run(capsys, *roots, "--json", "stats", "--by", "agent", *bounds))
    rows = {r["key"]: r for r in doc["rows"]}
    expected = {agent: with_usage(capsys, roots, agent) for agent in ("claude-code", "codex")}
    assert {k: r["sessions"] for k, r in rows.items()} == expected
    assert doc["totals"]["sessions"] == sum(expected.values())
    table = run(capsys, *roots, "stats", "--by", "agent", *bounds)
    head = table.splitlines()[0].split()
    assert "SESSIONS" in head
    col = head.index("SESSIONS")
    for line in table.splitlines()[1:]:
        cells = line.split()
        key = cells[-1]
        if key in rows:
            assert cells[col] == str(rows[key]["sessions"]), line
    assert table.splitlines()[-1].split()[col] == str(sum(expected.values()))


def test_a_range_with_no_usage(roots: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, *roots, "--json", "stats", "--by", "agent", "--since", "2099-01-01"))
    assert doc["rows"] == [] and doc["totals"]["sessions"] == 0


def test_the_sessions_per_agent_are_counted_in_one_ordered_walk(
    roots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The count from the rollup (dates, or the recount) reads it by (agent, session) (schema m017):
    no temporary B-tree for the grouping or the DISTINCT."""
    import sqlite3

    run(capsys, *roots, "index")
    db = sqlite3.connect(Path(roots[1]) / "index.sqlite3")
    try:
        plan = " ".join(
            r[3]
            for r in db.execute(
                "EXPLAIN QUERY PLAN SELECT u.agent, count(DISTINCT u.session_id) FROM usage_rollup u WHERE 1"
                " GROUP BY u.agent"
            )
        )
    finally:
        db.close()
    assert "usage_rollup_agent" in plan and "TEMP B-TREE" not in plan, plan
