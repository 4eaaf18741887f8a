"""Hidden sessions leave the counts (stats, projects, tool and hour activity) as they leave
list and search, and the state filters select in SQL before a page is cut: a page of search
holds as many hits as asked for, whatever was hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main

CLAUDE = Path(__file__).resolve().parent / "corpus" / "real" / "claude-2.1.197" / "projects"
CD61 = "claude-code:cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
SUB = "claude-code:agent-abeadf394adf045da"


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    code = main(["--no-daemon", "--data-dir", str(tmp_path / "d"), "--only-roots", "--root", f"claude-code={CLAUDE}", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out) if "--json" in args else out


def stats(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    return run(tmp_path, capsys, "stats", "--json", *args)


def test_hidden_sessions_leave_stats_and_projects_unless_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {by: stats(tmp_path, capsys, "--by", by) for by in ("session", "model", "day", "agent", "project", "tool")}
    projects_before = run(tmp_path, capsys, "projects", "--json")["projects"]
    hidden = next(r for r in before["session"]["rows"] if r["key"] == CD61)
    run(tmp_path, capsys, "hide", "claude-code:cd61")
    for by, doc in before.items():
        after = stats(tmp_path, capsys, "--by", by)
        if by == "tool":
            assert sum(r["calls"] for r in after["rows"]) < sum(r["calls"] for r in doc["rows"])
        else:
            assert after["totals"]["total_tokens"] == doc["totals"]["total_tokens"] - hidden["total_tokens"], by
        assert stats(tmp_path, capsys, "--by", by, "--all") == doc, by
    assert CD61 not in [r["key"] for r in stats(tmp_path, capsys, "--by", "session")["rows"]]
    assert CD61 not in [r["key"] for r in stats(tmp_path, capsys, "--by", "session", "--limit", "2")["rows"]]
    assert stats(tmp_path, capsys, "--by", "session", "--limit", "2")["totals"]["total_tokens"] == (
        before["session"]["totals"]["total_tokens"] - hidden["total_tokens"]
    )
    by_agent = stats(tmp_path, capsys, "--by", "agent")
    assert by_agent["totals"]["sessions"] == before["agent"]["totals"]["sessions"] - 1
    only = stats(tmp_path, capsys, "--by", "session", "--hidden")
    assert [r["key"] for r in only["rows"]] == [CD61]
    # projects: one session fewer, its tokens gone; --all brings it back
    demo = next(p for p in projects_before if p["project"] == "demo-app")
    now = next(p for p in run(tmp_path, capsys, "projects", "--json")["projects"] if p["project"] == "demo-app")
    assert now["sessions"] == demo["sessions"] - 1
    assert now["total_tokens"] == demo["total_tokens"] - hidden["total_tokens"]
    assert run(tmp_path, capsys, "projects", "--all", "--json")["projects"] == projects_before
    # a label selects the counts too
    run(tmp_path, capsys, "label", "claude-code:2c4d", "client=acme")
    acme = stats(tmp_path, capsys, "--by", "session", "--label", "client=acme")
    assert [r["key"] for r in acme["rows"]] == ["claude-code:2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"]
    assert [p["sessions"] for p in run(tmp_path, capsys, "projects", "--label", "client", "--json")["projects"]] == [1]
    hours = stats(tmp_path, capsys, "--by", "hour", "--all")
    assert stats(tmp_path, capsys, "--by", "hour") != hours


def _pages(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        doc = run(tmp_path, capsys, "search", "the", "--limit", "3", "--json", *args, *(["--cursor", cursor] if cursor else []))
        pages.append([h["session"]["id"] for h in doc["hits"]])
        cursor = doc.get("next")
        if not cursor:
            return pages


def test_search_pages_are_full_whatever_is_hidden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    everything = _pages(tmp_path, capsys)
    first = everything[0]
    assert len(first) == 3 and SUB.split(":")[1] in first  # the subagent ranks on the first page
    run(tmp_path, capsys, "hide", SUB, CD61)
    pages = _pages(tmp_path, capsys)
    gone = {SUB.split(":")[1], CD61.split(":")[1]}
    assert all(len(page) == 3 for page in pages[:-1]) and len(pages[0]) == 3
    flat = [sid for page in pages for sid in page]
    assert not gone & set(flat)
    assert flat == [sid for page in everything for sid in page if sid not in gone]
    starred = run(tmp_path, capsys, "search", "the", "--limit", "2", "--starred", "--json")
    assert starred["hits"] == []
    run(tmp_path, capsys, "star", "claude-code:7773")
    hits = run(tmp_path, capsys, "search", "the", "--limit", "2", "--starred", "--json")["hits"]
    assert len(hits) == 2 and {h["session"]["id"][:8] for h in hits} == {"77734736"}


def test_thousands_of_hidden_sessions_are_one_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agtaild.userstate.store import Change, UserState

    everything = run(tmp_path, capsys, "list", "--json")["sessions"]
    store = UserState(tmp_path / "d")
    try:
        store.apply([Change(("", "claude-code", f"gone-{i:05d}"), "hide", "1") for i in range(40_000)])
        store.apply([Change(("", "claude-code", CD61.split(":")[1]), "hide", "1")])
    finally:
        store.close()
    listed = [s["id"] for s in run(tmp_path, capsys, "list", "--json")["sessions"]]
    assert listed == [s["id"] for s in everything if s["id"] != CD61.split(":")[1]]
    assert CD61 not in [r["key"] for r in stats(tmp_path, capsys, "--by", "session")["rows"]]
    assert all(h["session"]["id"] != CD61.split(":")[1] for h in run(tmp_path, capsys, "search", "hello", "--json")["hits"])
