"""A model without a price must not hide the cost that is known (issue 23, item 10): the usage
JSON keeps ``cost_usd`` null (never a guess) and adds ``cost_known_usd``, ``unpriced_tokens``
and ``unpriced_models``; the stats TOTAL, the `show` header and the projects table print the
known part and say what is unpriced."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.cli import main
from tests.daemon_proc import CLAUDE_REAL

CORPUS = CLAUDE_REAL.parent.parent
PI_REAL = CORPUS / "pi-0.73.1" / "sessions"
SID = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"


@pytest.fixture
def roots(tmp_path: Path) -> list[str]:
    """Claude Code (priced) with one session whose later responses name a model without a
    price, and pi (its mock model has no price at all)."""
    projects = tmp_path / "claude" / "projects"
    shutil.copytree(CLAUDE_REAL, projects)
    path = projects / "-tmp-rt-claude-home-src-demo-app" / f"{SID}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    half = len(lines) // 2
    path.write_text("".join(lines[:half] + [x.replace('"claude-opus-4-8"', '"claude-unpriced-9"') for x in lines[half:]]))
    return ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots",
            "--root", f"claude-code={projects}", "--root", f"pi={PI_REAL}"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_stats_json_and_table(roots: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, *roots, "--json", "stats", "--by", "model"))
    by_model = {r["key"]: r for r in doc["rows"]}
    priced = [r for r in doc["rows"] if r["cost_usd"] is not None]
    assert priced and by_model["claude-unpriced-9"]["cost_usd"] is None and by_model["claude-mock-4"]["cost_usd"] is None
    t = doc["totals"]
    assert t["cost_usd"] is None  # unknown stays unknown
    assert t["cost_known_usd"] == pytest.approx(sum(r["cost_usd"] for r in priced))
    assert t["cost_known_usd"] > 0
    unpriced = by_model["claude-unpriced-9"]["total_tokens"] + by_model["claude-mock-4"]["total_tokens"]
    assert t["unpriced_tokens"] == unpriced
    assert t["unpriced_models"] == ["claude-mock-4", "claude-unpriced-9"]
    # A fully priced row says nothing more; a fully unpriced one knows $0 of its cost.
    assert "unpriced_tokens" not in priced[0]
    assert by_model["claude-mock-4"]["cost_known_usd"] == 0.0

    table = run(capsys, *roots, "stats", "--by", "agent")
    total = next(line for line in table.splitlines() if line.rstrip().endswith("TOTAL"))
    known = f"${t['cost_known_usd']:,.2f}"
    assert f"{known}+?" in total, total
    assert f"? = {unpriced:,} tokens of models without a price (claude-mock-4, claude-unpriced-9)" in table


def test_show_header_and_projects(roots: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    session = json.loads(run(capsys, *roots, "--json", "show", f"claude-code:{SID}"))["session"]
    u = session["usage"]
    assert u["cost_usd"] is None and u["cost_known_usd"] > 0 and u["unpriced_models"] == ["claude-unpriced-9"]
    header = run(capsys, *roots, "show", f"claude-code:{SID}").splitlines()[1]
    assert f"${u['cost_known_usd']:,.2f} + ? (" in header, header
    assert "tokens of claude-unpriced-9 unpriced)" in header, header
    assert not header.rstrip().endswith("tokens ?")
    projects = run(capsys, *roots, "projects")
    row = next(line for line in projects.splitlines() if "claude-code" in line and "demo-app" in line)
    assert "+?" in row, row
