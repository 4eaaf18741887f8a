"""Snowflake Cortex Code on hand-made conversation files (tests/corpus/cortex-code)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agtaild.adapters.cortex_code import CortexCodeAdapter
from agtaild.cli import main
from agtaild.errors import AgtailError
from agtaild.model import Session

ROOT = (
    Path(__file__).parent
    / "corpus"
    / "cortex-code"
    / "synthetic-agtail"
    / ".snowflake"
    / "cortex"
    / "conversations"
)
LATER = 4_000_000_000.0
BASIC = "3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c"
SPLIT = "7c6b5a49-3827-4160-9f5e-4d3c2b1a0f9e"


def _read(root: Path = ROOT, now: float = LATER) -> dict:
    adapter = CortexCodeAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=now) for u in adapter.discover(root))}


def test_conversations_and_their_history_files() -> None:
    read = _read()
    assert sorted(read) == [BASIC, SPLIT]  # the .back.<ts>.json backup is no conversation
    doc = json.loads((ROOT / f"{BASIC}.json").read_text())
    acct = read[BASIC].session.accounting
    assert acct.lines == len(doc["history"]) and acct.balanced() and (acct.merged, acct.bad) == (5, 0)
    unit = next(u for u in CortexCodeAdapter().discover(ROOT) if SPLIT in u.path)
    assert unit.files == [str(ROOT / f"{SPLIT}.json"), str(ROOT / f"{SPLIT}.history.jsonl")]
    split = read[SPLIT].session
    lines = [ln for ln in (ROOT / f"{SPLIT}.history.jsonl").read_text().splitlines() if ln.strip()]
    assert (
        split.accounting.lines == len(lines) == 5 and split.bad_lines == 1 and split.bad_line_numbers == [3]
    )


def test_prompts_tools_results_and_edits() -> None:
    r = _read()[BASIC]
    s = r.session
    assert (s.title, s.cwd, s.project, s.git_branch) == (
        "Gamma orders row count",
        "/home/dev/gamma-sql",
        "gamma-sql",
        "main",
    )
    assert (s.started, s.ended, s.ending, s.messages) == (
        "2026-12-01T19:00:00.000Z",
        "2026-12-01T19:03:10.500Z",
        None,
        6,
    )
    assert s.extra["connection_name"] == "dev_conn" and s.usage.total_tokens == 0 and r.usage == []
    users = [e for e in r.events if e.kind == "text" and e.role == "user"]
    assert [u.text.split()[0] for u in users] == ["[[S:cortex/basic]]", "[[S:cortex/continue]]"]
    assert users[0].ts == "2026-12-01T19:00:05.250Z" and users[0].uuid == "m2"
    internal = [e for e in r.events if e.subtype == "internal"]
    assert len(internal) == 2 and all(e.kind == "system" and "<system-reminder>" in e.text for e in internal)
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("snowflake_sql_execute", False), ("read", False), ("edit", False), ("bash", True), ("write", False),
    ]  # fmt: skip
    assert tools[0].input["query"] == "SELECT COUNT(*) FROM GAMMA_ORDERS" and "1204" in tools[0].result
    assert tools[3].extra["status"] == "error" and "command not found" in tools[3].result
    edit = tools[2].extra["edit"]["files"][0]
    assert edit["path"] == "/home/dev/gamma-sql/load.sql"
    assert edit["hunks"][0]["lines"] == ["-GAMMA_ORDRES", "+GAMMA_ORDERS"]
    assert tools[4].extra["edit"]["files"][0]["op"] == "create"
    assert [e.raw["type"] for e in r.events if e.kind == "unknown"] == ["chart_spec"]


def test_split_history_default_title_and_an_open_call() -> None:
    r = _read()[SPLIT]
    s = r.session
    assert (
        s.title == "[[S:cortex/split]] Explain the gamma warehouse sizing."
    )  # "Chat for session: …" is no title
    assert s.ending == "interrupted" and s.cwd == "/home/dev/gamma-wh" and s.git_branch is None
    assert [e.text for e in r.events if e.role == "assistant" and e.kind == "text"] == [
        "The gamma warehouse is X-SMALL; it suspends after 60 s."
    ]
    assert (
        _read(now=os.path.getmtime(ROOT / f"{SPLIT}.json"))[SPLIT].session.ending is None
    )  # not settled yet


def test_odd_files(tmp_path: Path) -> None:
    (tmp_path / "torn.json").write_text((ROOT / f"{BASIC}.json").read_text()[:300])
    (tmp_path / "list.json").write_text("[1]")
    doc = json.loads((ROOT / f"{BASIC}.json").read_text())
    doc["history"][3:3] = [7, {"role": "tool", "content": []}]
    (tmp_path / "odd.json").write_text(json.dumps(doc))
    (tmp_path / "gone.json").write_text(json.dumps({"session_id": "gone", "history": []}))
    os.mkfifo(tmp_path / "gone.history.jsonl")
    adapter = CortexCodeAdapter()
    units = {Path(u.path).stem: u for u in adapter.discover(tmp_path)}
    torn = adapter.read(units["torn"], None, now=LATER).session
    assert (torn.bad_lines, torn.truncated) == (1, True)
    odd = adapter.read(units["odd"], None, now=LATER)
    assert odd.session.accounting.balanced() and len([e for e in odd.events if e.kind == "unknown"]) == 3
    assert adapter.read(units["list"], None, now=LATER).events[0].kind == "unknown"
    with pytest.raises(AgtailError, match="history could not be read"):
        adapter.read(units["gone"], None, now=LATER)


def test_roots_and_resume(tmp_path: Path) -> None:
    adapter = CortexCodeAdapter()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".snowflake" / "cortex" / "conversations"]
    assert adapter.default_roots({"SNOWFLAKE_HOME": str(tmp_path / "sf")}, tmp_path) == [
        tmp_path / "sf" / "cortex" / "conversations"
    ]
    cmd = adapter.resume(Session(agent="cortex-code", id=BASIC, cwd="/w"))
    assert cmd is not None and (cmd.argv, cmd.cwd) == (["cortex", "--resume", BASIC], "/w")


def test_cli_list_search_show(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"cortex-code={ROOT}",
    ]
    assert main([*base, "list", "--json"]) == 0
    assert {s["id"] for s in json.loads(capsys.readouterr().out)["sessions"]} == {BASIC, SPLIT}
    assert main([*base, "search", "GAMMA_ORDERS", "--json"]) == 0
    assert BASIC in {h["session"]["id"] for h in json.loads(capsys.readouterr().out)["hits"]}
    assert main([*base, "show", BASIC, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert any(e.get("tool") == "bash" and e.get("is_error") for e in shown["events"])
