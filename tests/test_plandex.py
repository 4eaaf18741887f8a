"""Plandex on hand-made server plan folders (tests/corpus/plandex/synthetic-agtail/orgs, built
from plandex 2.2.1's server source; see PROVENANCE)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.plandex import PlandexAdapter
from agtaild.cli import main
from agtaild.errors import AgtailError

SAMPLE = Path(__file__).parent / "corpus" / "plandex" / "synthetic-agtail"
ORG = "3c1e9a4f-0b7d-4e2a-9f61-5a8c2d7b1e90"
A, B = "9d2f6b1a-4c3e-4f5a-8b7c-1e2d3f4a5b6c", "a7e8f9b0-1c2d-4e3f-9a5b-6c7d8e9f0a1b"
LATER = 4_000_000_000.0


def _read(root: Path = SAMPLE) -> dict:
    adapter = PlandexAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _plan(plan: str) -> Path:
    return SAMPLE / "orgs" / ORG / "plans" / plan


def test_one_session_per_plan_and_every_file_is_counted() -> None:
    read = _read()
    assert sorted(read) == sorted([A, B])  # the project's map cache is not a plan
    for plan, r in read.items():
        files = sum(
            len(list((_plan(plan) / d).glob("*.json"))) for d in ("conversation", "descriptions", "results")
        )
        assert r.session.accounting.lines == files and r.session.accounting.balanced(), plan
    s = read[A].session
    assert s.title == "Add a /health route to server.go that returns ok & a test"  # Go's \u0026 decoded
    assert (s.started, s.ended, s.extra["org_id"]) == (
        "2025-07-10T09:00:00.123Z",
        "2025-07-10T09:05:04.250Z",
        ORG,
    )
    assert s.messages == 4 and s.resumable is False and PlandexAdapter().resume(s) is None
    # Plandex's own counts of its replies' tokens, one record per reply
    replies = [json.loads(p.read_text()) for p in (_plan(A) / "conversation").glob("*.json")]
    assert s.usage.output_tokens == sum(m["tokens"] for m in replies if m["role"] == "assistant") == 856
    assert len(read[A].usage) == 2 and s.extra["tokens"] == sum(m["tokens"] for m in replies)


def test_messages_in_num_order_with_their_description_and_builds() -> None:
    events = _read()[A].events
    assert [(e.kind, e.role, e.tool) for e in events] == [
        ("text", "user", None), ("text", "assistant", None), ("tool_use", "assistant", "build"),
        ("tool_use", "assistant", "build"), ("tool_use", "assistant", "build"), ("text", "user", None),
        ("text", "assistant", None),
    ]  # fmt: skip
    reply = events[1]
    assert "<health>" in reply.text and reply.extra["flags"] == ["didMakePlan", "didWriteCode"]
    assert reply.extra["description"]["commit_msg"] == "Added /health route and its test"
    assert reply.extra["description"]["operations"] == [
        {"Type": "file", "Path": "server.go"},
        {"Type": "file", "Path": "health_test.go"},
    ]
    route, test_file, readme = events[2:5]
    assert (
        route.input == {"path": "server.go"} and route.result == "route /health" and route.is_error is False
    )
    assert route.extra["edit"]["files"][0]["hunks"][0]["lines"] == [
        ' \thttp.HandleFunc("/", index)',
        '+\thttp.HandleFunc("/health", health)',
    ]
    assert test_file.extra["edit"]["files"][0]["op"] == "create"
    assert readme.is_error is True  # its replacement failed
    assert events[-1].extra["stopped"] is True


def test_errors_removals_and_a_file_cut_short() -> None:
    r = _read()[B]
    s = r.session
    assert (
        s.ending == "error" and _read()[A].session.ending == "interrupted"
    )  # B's last reply has hasError; A's was stopped
    removal = next(e for e in r.events if e.tool == "build")
    assert removal.extra["edit"]["files"][0] == {
        "path": "legacy/util.go",
        "op": "delete",
        "hunks": [],
        "numbered": False,
        "cut": 0,
    }
    assert (
        s.bad_lines == 1
        and s.truncated
        and s.extra["bad_files"] == ["conversation/1c2d3e4f-0004-4000-8000-00000000000d.json"]
    )


def test_a_file_being_written_is_read_again_later(tmp_path: Path) -> None:
    root = tmp_path / "server"
    shutil.copytree(SAMPLE, root)
    adapter = PlandexAdapter()
    unit = next(u for u in adapter.discover(root) if u.path.endswith(B))
    torn = Path(unit.path) / "conversation" / "1c2d3e4f-0004-4000-8000-00000000000d.json"
    os.utime(torn, (LATER - 1, LATER - 1))
    with pytest.raises(AgtailError, match="being written"):
        adapter.read(unit, None, now=LATER)


def test_roots(tmp_path: Path) -> None:
    adapter = PlandexAdapter()
    assert adapter.default_roots({"PLANDEX_BASE_DIR": str(tmp_path / "pdx")}, tmp_path) == [tmp_path / "pdx"]
    assert adapter.default_roots({}, tmp_path) == [tmp_path / "plandex-server"]
    org = SAMPLE / "orgs" / ORG
    assert sorted(Path(u.path).name for u in adapter.discover(org)) == sorted([A, B])  # an org's folder
    assert [Path(u.path).name for u in adapter.discover(_plan(A))] == [A]  # one plan's folder


def test_cli_lists_searches_and_shows(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"plandex={SAMPLE}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = {row["id"]: row for row in json.loads(capsys.readouterr().out)["sessions"]}
    assert set(listed) == {A, B} and listed[B]["title"] == "Delete the legacy/ folder"
    assert main([*args, "search", "health", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {A}
    assert main([*args, "show", A]) == 0
    assert "Now remove the old index handler" in capsys.readouterr().out
