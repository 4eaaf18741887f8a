"""Warp's agent mode on its hand-made state database (tests/corpus/warp/synthetic-agtail/
warp-terminal/warp.sqlite, built from warp 19548ae's schema and serde shapes; see PROVENANCE)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.warp import WarpAdapter
from agtaild.adapters.warp.rows import plain
from agtaild.cli import main
from agtaild.errors import AgtailError

SAMPLE = Path(__file__).parent / "corpus" / "warp" / "synthetic-agtail"
DB = SAMPLE / "warp-terminal" / "warp.sqlite"
MAIN, CHILD, OLD, FORK = (
    "6f1d2c3b-4a59-4e7f-8123-9abcdef01234", "7a2e3d4c-5b6a-4f80-9234-abcdef012345",
    "8b3f4e5d-6c7b-4091-a345-bcdef0123456", "9c4a5f6e-7d8c-41a2-b456-cdef01234567",
)  # fmt: skip
LATER = 4_000_000_000.0


def _read(root: Path = SAMPLE) -> dict:
    adapter = WarpAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _count(sql: str, *args: str) -> int:
    with sqlite3.connect(f"file:{DB}?mode=ro&immutable=1", uri=True) as conn:
        return conn.execute(sql, args).fetchone()[0]


def test_every_conversation_id_is_a_session_and_every_row_is_counted() -> None:
    read = _read()
    assert sorted(read) == sorted([MAIN, CHILD, OLD, FORK])  # OLD is known from ai_queries alone
    for cid, r in read.items():
        rows = (
            _count("SELECT count(*) FROM agent_conversations WHERE conversation_id = ?", cid)
            + _count("SELECT count(*) FROM ai_queries WHERE conversation_id = ?", cid)
            + _count("SELECT count(*) FROM blocks WHERE instr(ai_metadata, ?) > 0", cid)
            + _count("SELECT count(*) FROM agent_tasks WHERE conversation_id = ?", cid)
        )
        assert r.session.accounting.lines == rows and r.session.accounting.balanced(), cid
    s = read[MAIN].session
    assert (s.title, s.cwd, s.project, s.models) == (
        "Fix failing cart tests",
        "/home/dev/shop",
        "shop",
        ["claude-4-sonnet"],
    )
    assert (s.started, s.ended) == ("2026-11-30T09:10:00.000Z", "2026-11-30T09:12:40.250Z")
    assert s.resumable is False and WarpAdapter().resume(s) is None
    assert s.extra["warp_usage"]["token_usage"][0]["warp_tokens"] == 18250 and s.usage.is_zero()


def test_queries_and_the_commands_the_agent_ran_in_time_order() -> None:
    events = _read()[MAIN].events
    assert [(e.kind, e.tool) for e in events] == [
        ("text", None), ("tool_use", "run_command"), ("tool_use", "run_command"), ("text", None),
        ("tool_use", "run_command"), ("system", None),
    ]  # fmt: skip
    first = events[0]
    assert first.text == "Why do the cart tests fail?" and first.extra["context_kinds"] == [
        "Directory",
        "Git",
    ]
    failing = events[1]
    assert failing.input == {
        "command": "pytest -q tests/test_cart.py",
        "pwd": "/home/dev/shop",
    }  # escapes removed
    assert failing.is_error and failing.extra["exit_code"] == 1 and failing.tool_use_id == "toolu_run_01"
    assert (
        failing.result
        == "F.\nFAILED tests/test_cart.py::test_total - assert 9 == 10\n1 failed, 1 passed in 0.05s"
    )
    assert events[4].is_error is False and "4e5f6a7" in events[4].result
    assert all(
        (e.input or {}).get("command") != "ls" for e in events
    )  # the user's own command is not the agent's
    task = events[-1]
    assert task.subtype == "agent_task" and task.extra["task_id"] == "task-main-01" and task.raw is None
    assert task.extra["bytes"] == _count(
        "SELECT length(task) FROM agent_tasks WHERE task_id = ?", "task-main-01"
    )
    assert "not decoded" in task.extra["encoding"]


def test_subagent_fork_and_endings() -> None:
    read = _read()
    child = read[CHILD].session
    assert child.parent is not None and child.parent.id == MAIN and child.origin == "subagent"
    assert child.extra["agent_name"] == "test-runner" and child.title == "Run the cart tests"
    assert read[CHILD].events[0].extra["subagent_task_id"] == "task-child-01"
    fork = read[FORK].session
    assert (
        fork.forked_from is not None and fork.forked_from.id == MAIN and fork.ending == "interrupted"
    )  # cancelled
    old = read[OLD].session
    assert (
        old.ending == "error" and old.cwd == "/home/dev/media" and old.models == ["gpt-4o"]
    )  # its last query failed
    assert old.bad_lines == 1 and old.title == "list the biggest files here"


def test_plain_removes_what_a_terminal_would_obey() -> None:
    assert (
        plain(b"\x1b[1;31mred\x1b[0m\r\n\x1b]0;title\x07x\xc2\x9b2Jy") == "red\nxy"
    )  # the 8-bit CSI, as UTF-8
    assert plain(b"\xff ok") == "\ufffd ok" and plain(None) == ""


def test_default_roots_and_the_folder_above_the_channels(tmp_path: Path) -> None:
    adapter = WarpAdapter()
    roots = adapter.default_roots({"XDG_STATE_HOME": str(tmp_path / "state")}, tmp_path)
    assert (
        tmp_path / "state" / "warp-terminal" in roots
        and tmp_path / "state" / "warp-terminal-preview" in roots
    )
    assert adapter.databases(SAMPLE / "warp-terminal") == [DB]
    assert adapter.databases(SAMPLE) == [DB]  # a root above the channel folders finds them


def test_a_damaged_database_is_an_error_not_a_deletion(tmp_path: Path) -> None:
    root = tmp_path / "w"
    shutil.copytree(SAMPLE, root)
    adapter = WarpAdapter()
    unit = next(u for u in adapter.discover(root) if u.path.endswith(MAIN))
    (root / "warp-terminal" / "warp.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x01" * 300)
    with pytest.raises(AgtailError):
        adapter.read(unit, None, now=LATER)


def test_cli_lists_searches_and_shows(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"warp={SAMPLE / 'warp-terminal'}",
    ]
    assert main([*args, "list", "--json"]) == 0
    listed = {row["id"]: row for row in json.loads(capsys.readouterr().out)["sessions"]}
    assert set(listed) == {MAIN, CHILD, OLD, FORK} and listed[MAIN]["title"] == "Fix failing cart tests"
    assert main([*args, "search", "test_total", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {MAIN}
    assert main([*args, "show", MAIN]) == 0
    assert "Why do the cart tests fail?" in capsys.readouterr().out


def test_naive_times_read_as_norm_iso_reads_them() -> None:
    from agtaild.adapters.kit.stamps import norm_iso
    from agtaild.adapters.warp.rows import naive_utc

    for value in ("2026-11-30 09:10:00.250000", "2026-11-30 09:10:00", "2026-02-28 23:59:59.999999",
                  "2026-11-30T09:10:00.1", "2026-11-30 09:10:00.123456789"):  # fmt: skip
        assert naive_utc(value) == norm_iso(value), value
    assert naive_utc("2026-02-30 10:00:00") is None and naive_utc("later") is None and naive_utc(None) is None
