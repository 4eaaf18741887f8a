"""Every tool call has a category beside its own name (issue 23, item 9): one mapping
(agtaild/adapters/kit/tool_categories.py), stored in the index (``extra.tool_category``,
``events.tool_category``), and `stats` groups by either (``--by tool`` rows name their
category, ``--by tool-category`` rows list their tools), through the CLI, JSON-RPC and REST."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.kit.tool_categories import CATEGORIES, category_of
from agtaild.api.params import METHOD_TABLE
from agtaild.cli import main
from agtaild.config import load_config
from agtaild.query.service import Service
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL

REAL = CLAUDE_REAL.parent.parent
ROOTS = [
    f"claude-code={CLAUDE_REAL}", f"codex={CODEX_REAL}", f"gemini={REAL / 'gemini-0.61.0'}",
    f"qwen={REAL / 'qwen-0.15.10'}", f"kimi={REAL / 'kimi-1.51.0'}", f"droid={REAL / 'droid-0.225.2'}",
    f"cline={REAL / 'cline-3.0.65'}", f"openhands={REAL / 'openhands-1.16.0'}", f"pi={REAL / 'pi-0.73.1' / 'sessions'}",
    f"copilot-cli={REAL / 'copilot-1.0.102'}", f"opencode={REAL / 'opencode-1.18.33' / 'opencode.db'}",
]
#: The issue's nine names of one shell (and the agents whose samples use them).
SHELLS = ("bash", "Bash", "run_shell_command", "exec_command", "Execute", "Shell", "run_commands", "terminal",
          "execute_command")


@pytest.mark.parametrize(
    ("tool", "inp", "category"),
    [
        *((name, None, "shell") for name in SHELLS),
        ("Read", None, "read"), ("read_file", None, "read"), ("view", None, "read"),
        ("Write", None, "write"), ("create", None, "write"), ("WriteFile", None, "write"),
        ("Edit", None, "edit"), ("apply_patch", None, "edit"), ("StrReplaceFile", None, "edit"),
        ("Grep", None, "search"), ("Glob", None, "search"), ("WebFetch", None, "web"), ("web_search", None, "web"),
        ("Task", None, "subagent"), ("spawn_agent", None, "subagent"), ("TaskCreate", None, "todo"),
        ("todowrite", None, "todo"), ("update_plan", None, "todo"),
        ("file_editor", {"command": "view", "path": "a"}, "read"),
        ("file_editor", {"command": "create", "path": "a", "file_text": "x"}, "write"),
        ("file_editor", {"command": "str_replace", "path": "a", "old_str": "x", "new_str": "y"}, "edit"),
        ("editor", {"path": "a", "new_text": "x"}, "write"),
        ("editor", {"path": "a", "old_text": "x", "new_text": "y"}, "edit"),
        ("mcp__github__search_code", None, "search"), ("mcp__shop__place_order", None, "other"),
        ("run_in_sandbox_shell", None, "shell"), ("ExitPlanMode", None, "other"), (None, None, "other"),
    ],
)
def test_the_mapping(tool: str | None, inp: object, category: str) -> None:
    assert category_of(tool, inp) == category
    assert category in CATEGORIES


def test_an_unknown_tool_that_edits_is_an_edit() -> None:
    assert category_of("frobnicate", {"x": 1}) == "other"
    assert category_of("frobnicate", {"x": 1}, has_edit=True) == "edit"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("categories") / "data"
    config = load_config(data_dir=str(where), root_options=ROOTS, only_roots=True)
    svc = Service(config)
    try:
        svc.update_index()
    finally:
        svc.close()
    return where


def _cli(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> str:
    roots = [x for r in ROOTS for x in ("--root", r)]
    code = main(["--data-dir", str(data), "--no-daemon", "--only-roots", *roots, *argv, "--no-update"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_stats_by_category_and_by_tool(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_cli(capsys, data, "--json", "stats", "--by", "tool-category"))
    rows = {r["key"]: r for r in doc["rows"]}
    assert set(rows) <= set(CATEGORIES) and {"shell", "read", "write", "edit", "subagent", "todo"} <= set(rows)
    assert set(rows["shell"]["tools"]) == {"bash", "Bash", "run_shell_command", "exec_command", "Execute", "Shell",
                                           "run_commands", "terminal"}
    assert sum(r["calls"] for r in rows.values()) == doc["totals"]["calls"]
    by_tool = json.loads(_cli(capsys, data, "--json", "stats", "--by", "tool"))
    assert by_tool["totals"] == doc["totals"]
    named = {r["key"]: r for r in by_tool["rows"]}
    assert all(named[t]["category"] == "shell" for t in rows["shell"]["tools"])
    assert rows["shell"]["calls"] == sum(n for n in rows["shell"]["tools"].values())
    table = _cli(capsys, data, "stats", "--by", "tool-category").splitlines()
    assert table[0].split() == ["CALLS", "ERRORS", "ERR%", "CATEGORY", "TOOLS", "AGENTS"]
    assert next(x for x in table if "  shell  " in x).split()[0] == str(rows["shell"]["calls"])
    assert _cli(capsys, data, "stats", "--by", "tool").splitlines()[0].split()[4] == "CATEGORY"


def test_each_call_carries_its_category(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_cli(capsys, data, "--json", "show", "codex:01a229d7-c676"))
    calls = [e for e in doc["events"] if e["kind"] == "tool_use"]
    assert {e["tool"]: e["extra"]["tool_category"] for e in calls} == {"exec_command": "shell", "apply_patch": "edit"}


def test_the_api_parameter(data: Path) -> None:
    assert METHOD_TABLE["stats"].parse_json({"by": "tool-category"}) == {"by": "tool-category"}
    spec = json.loads((Path(__file__).parent.parent / "docs" / "openapi.json").read_text())
    assert "tool-category" in json.dumps(spec)


def test_an_index_made_before_the_column_gets_it_filled(data: Path, tmp_path: Path) -> None:
    """m010_tool_category on an index without it: the column is filled from the stored events."""
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    db = sqlite3.connect(copy / "index.sqlite3")
    before = sorted(db.execute("SELECT id, tool_category FROM events WHERE kind = 'tool_use'"))
    assert before and all(c for _, c in before)
    db.execute("DROP INDEX events_tool_categories")
    db.execute("ALTER TABLE events DROP COLUMN tool_category")
    db.execute("DELETE FROM _migrations WHERE name = 'm010_tool_category'")
    db.commit()
    db.close()
    config = load_config(data_dir=str(copy), root_options=ROOTS, only_roots=True)
    svc = Service(config)
    try:
        rows = svc.call("stats", {"by": "tool-category"})["rows"]
    finally:
        svc.close()
    assert {r["key"] for r in rows} >= {"shell", "edit"}
    db = sqlite3.connect(copy / "index.sqlite3")
    assert sorted(db.execute("SELECT id, tool_category FROM events WHERE kind = 'tool_use'")) == before
    db.close()
