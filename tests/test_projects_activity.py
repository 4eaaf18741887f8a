"""`agtail projects` (git root identity, worktrees grouped with their repository) and
`stats --by tool` / `--by hour`, on real Claude Code sample lines."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.index.projects import project_root
from tests.claude_rewind import SAMPLE, sample_lines

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=GIT_ENV)


def _session(root: Path, sid: str, cwd: Path) -> None:
    """The real sample with its working directory moved to ``cwd``, under a new session id."""
    old_cwd = sample_lines()[2]["cwd"]
    text = SAMPLE.read_text(encoding="utf-8").replace(old_cwd, str(cwd)).replace(SAMPLE.stem, sid)
    dest = root / ("-" + str(cwd).strip("/").replace("/", "-")) / f"{sid}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(["--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_worktrees_group_with_their_repository(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = tmp_path / "work" / "myrepo"
    repo.mkdir(parents=True)
    _git("init", "-q", cwd=repo)
    (repo / "a.txt").write_text("a")
    _git("add", "a.txt", cwd=repo)
    _git("commit", "-q", "-m", "a", cwd=repo)
    worktree = tmp_path / "work" / "myrepo-feature"
    _git("worktree", "add", "-q", str(worktree), cwd=repo)
    (repo / "sub").mkdir()
    other = tmp_path / "work" / "plain-dir"
    other.mkdir()
    assert project_root(str(worktree)) == str(repo)
    assert project_root(str(repo / "sub")) == str(repo)
    assert project_root(str(other)) == str(other)
    assert project_root("/gone/repo/.claude/worktrees/x") == "/gone/repo"

    root = tmp_path / "projects"
    _session(root, "aaaaaaaa-0000-4000-8000-000000000001", repo)
    _session(root, "aaaaaaaa-0000-4000-8000-000000000002", worktree)
    _session(root, "aaaaaaaa-0000-4000-8000-000000000003", repo / "sub")
    _session(root, "aaaaaaaa-0000-4000-8000-000000000004", other)
    base = [
        "--data-dir",
        str(tmp_path / "data"),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={root}",
    ]
    doc = _run(capsys, *base, "projects")
    by_root = {p["root"]: p for p in doc["projects"]}
    assert set(by_root) == {str(repo), str(other)}
    mine = by_root[str(repo)]
    assert mine["project"] == "myrepo" and mine["sessions"] == 3 and mine["agents"] == ["claude-code"]
    assert set(mine["cwds"]) == {str(repo), str(worktree), str(repo / "sub")}
    assert mine["last_active"].startswith("2026-11-30T00:28")
    # Usage is counted as stats counts it: each API response once (the copies repeat the
    # sample's responses, so they count once in all), split over the projects.
    totals = _run(capsys, *base, "stats", "--by", "agent")["totals"]
    assert sum(p["total_tokens"] for p in doc["projects"]) == totals["total_tokens"] > 0
    assert sum(p["cost_usd"] for p in doc["projects"]) == pytest.approx(totals["cost_usd"])
    assert main([*base, "projects"]) == 0
    out = capsys.readouterr().out
    assert "myrepo  " + str(repo) in out and "plain-dir" in out


def test_stats_by_tool_and_by_hour(capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path) -> None:
    root = corpus / "real" / "claude-2.1.197" / "projects"
    base = [
        "--data-dir",
        str(tmp_path / "data"),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={root}",
    ]
    tools = _run(capsys, *base, "stats", "--by", "tool")
    # The same counts from the transcripts themselves.
    want: dict[str, list[int]] = {}
    for s in _run(capsys, *base, "list")["sessions"]:
        for e in _run(capsys, *base, "show", f"claude-code:{s['id']}")["events"]:
            if e["kind"] == "tool_use":
                c = want.setdefault(e["tool"] or "(unknown)", [0, 0])
                c[0] += 1
                c[1] += e["is_error"] is True
    assert {r["key"]: [r["calls"], r["errors"]] for r in tools["rows"]} == want
    assert want["Bash"][1] >= 1  # the sample's failing command
    assert tools["totals"]["calls"] == sum(c for c, _ in want.values())
    assert all(r["agents"] == {"claude-code": r["calls"]} for r in tools["rows"])
    hours = _run(capsys, *base, "stats", "--by", "hour")
    assert hours["totals"]["events"] == sum(r["events"] for r in hours["rows"]) > 0
    for r in hours["rows"]:
        assert (
            1 <= r["weekday"] <= 7 and 0 <= r["hour"] <= 23 and r["key"] == f"{r['weekday']} {r['hour']:02d}"
        )
    assert main([*base, "stats", "--by", "hour"]) == 0
    grid = capsys.readouterr().out.splitlines()
    assert [g[:3] for g in grid[1:8]] == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
