"""OpenCode adapter: facts checked by eye on the real 1.18.33 database and the synthetic
database and JSON tree in tests/corpus/opencode/."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.kit.sqlite_db import split_unit_path
from agtaild.adapters.opencode.adapter import OpenCodeAdapter
from agtaild.adapters.opencode.parts import STALE_SECONDS, usage_of

REAL_DB = "real/opencode-1.18.33/opencode.db"
SYNTH_DATA = "opencode/synthetic-agtail-sqlite/.local/share/opencode"
JSON_STORAGE = "opencode/synthetic-agtail-json/.local/share/opencode/storage"
BASIC = "ses_dd627737fffe1gm2gtU2rjVWqS"
PARENT = "ses_dd6276053ffeLsQzVqW5KxlEG3"
CHILD = "ses_dd6275b00ffewmV4ihKKO0Xb0c"
MULTI = "ses_dd62753fcffeOzef7lbgyCFCuK"
DEMO_APP = "/tmp/rt/opencode/home/src/demo-app"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> OpenCodeAdapter:
    return OpenCodeAdapter()


def units(adapter: OpenCodeAdapter, root: Path) -> dict[str, Unit]:
    out = {}
    for u in adapter.discover(root):
        key = split_unit_path(u.path)[1] if "#" in u.path else Path(u.path).stem
        out[key] = u
    return out


def read(adapter: OpenCodeAdapter, root: Path, session_id: str, *, now: float = LATER) -> ReadResult:
    return adapter.read(units(adapter, root)[session_id], None, now=now)


@pytest.fixture
def db_copy(corpus: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "opencode" / "opencode.db"
    dst.parent.mkdir()
    shutil.copy(corpus / REAL_DB, dst)
    dst.chmod(0o600)
    return dst


def test_discovers_every_session_of_the_database(adapter: OpenCodeAdapter, corpus: Path) -> None:
    found = list(adapter.discover(corpus / REAL_DB))
    db = str(corpus / REAL_DB)
    assert [u.path for u in found] == [f"{db}#{sid}" for sid in (BASIC, PARENT, CHILD, MULTI)]
    assert found[0].files == [db, db + "-wal", db + "-shm"]
    assert adapter.native_files(found[0]) == [db]
    assert adapter.relative_path(found[0], db) == "opencode.db"


def test_basic_session(adapter: OpenCodeAdapter, corpus: Path) -> None:
    res = read(adapter, corpus / REAL_DB, BASIC)
    s = res.session
    assert s.title == "Mock session title" and s.version == "1.18.33"
    assert s.cwd == DEMO_APP and s.project == "demo-app"
    assert s.first_prompt == '"Create hello.py, run it, add a Japanese greeting. [[S:opencode/basic]]"'
    assert s.models == ["mock-model"]
    assert (s.started, s.ended) == ("2026-11-30T00:26:27.328Z", "2026-11-30T00:26:30.941Z")  # ms, not s
    assert s.messages == 10 and s.ending is None and s.parent is None
    # 1 session row + 10 message rows + 33 part rows
    assert s.accounting.lines == 44 and s.accounting.balanced() and s.accounting.bad == 0
    tools = [e for e in res.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["bash", "write", "read", "edit", "bash", "read", "bash", "todowrite"]
    assert tools[4].input == {"command": "python3 hello.py", "description": "Run the script"}
    assert tools[4].result == "Hello, world! こんにちは、worldさん\n" and tools[4].is_error is False
    assert tools[5].is_error is True
    assert tools[5].result == f"File not found: {DEMO_APP}/does-not-exist.txt"
    assert tools[0].tool_use_id == "call_mock9c94644ec18649968da80122"
    patches = [e for e in res.events if e.subtype == "patch"]
    assert [p.extra["files"] for p in patches] == [[f"{DEMO_APP}/hello.py"]] * 2
    assert [e.text for e in res.events if e.kind == "thinking"] == [
        "The user wants a greeting script; list files first.",
        "Switch to an f-string with a Japanese greeting.",
    ]
    assert (
        res.events[-1].text
        == "Done. `hello.py` now prints `Hello, world! こんにちは、worldさん`.\n\n日本語の挨拶も追加しました。"
    )


def test_usage_agrees_with_the_session_row(adapter: OpenCodeAdapter, corpus: Path) -> None:
    """OpenCode keeps its own totals in the session row; one record per step-finish adds up
    to them (output here includes reasoning, which OpenCode counts beside it)."""
    conn = sqlite3.connect(f"file:{corpus / REAL_DB}?mode=ro", uri=True)
    for sid in (BASIC, PARENT, CHILD, MULTI):
        res = read(adapter, corpus / REAL_DB, sid)
        row = conn.execute(
            "SELECT tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, cost FROM session WHERE id=?",
            (sid,),
        ).fetchone()
        u = res.session.usage
        assert (u.input_tokens, u.output_tokens, u.reasoning_tokens, u.cache_read_tokens) == (
            row[0],
            row[1] + row[2],
            row[2],
            row[3],
        )
        assert res.session.extra["recorded_cost_usd"] == row[4] == 0.0
    basic = read(adapter, corpus / REAL_DB, BASIC)
    assert len(basic.usage) == 9 and {r.model for r in basic.usage} == {"mock-model"}
    assert all(r.key.startswith("prt_") for r in basic.usage)  # the step-finish parts


def test_child_session_links_to_the_task_call(adapter: OpenCodeAdapter, corpus: Path) -> None:
    child = read(adapter, corpus / REAL_DB, CHILD).session
    parent = read(adapter, corpus / REAL_DB, PARENT)
    assert child.title == "Count lines in hello.py (@general subagent)"
    assert child.parent is not None and child.parent.id == PARENT
    assert child.parent.tool_use_id == "call_mock52bca744079146189bda74af"
    task = next(e for e in parent.events if e.tool == "task")
    assert task.tool_use_id == child.parent.tool_use_id and task.extra["subagent_id"] == CHILD
    assert "hello.py has 6 lines." in task.result
    assert child.first_prompt == "Count the lines of hello.py and report the number. [[S:opencode/sub-inner]]"


def test_multi_turn_prompts_and_resume(adapter: OpenCodeAdapter, corpus: Path) -> None:
    s = read(adapter, corpus / REAL_DB, MULTI).session
    res = read(adapter, corpus / REAL_DB, MULTI)
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]
    assert prompts == [
        '"README を書いてください。 [[S:opencode/mt1]]"',
        '"English and Japanese please. [[S:opencode/mt2]]"',
        '"Double-check it. [[S:opencode/mt3]]"',
    ]
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["opencode", "--session", MULTI] and cmd.cwd == DEMO_APP


def test_unchanged_session_is_not_read_again(adapter: OpenCodeAdapter, db_copy: Path) -> None:
    unit = units(adapter, db_copy)[BASIC]
    first = adapter.read(unit, None, now=LATER)
    again = adapter.read(unit, first.state, now=LATER)
    assert not again.reset and again.events == [] and again.session.title == first.session.title
    conn = sqlite3.connect(db_copy)
    conn.execute(
        "UPDATE part SET data = json_set(data, '$.text', 'Edited.'), time_updated = time_updated + 1 "
        "WHERE id = 'prt_229d89a65001RSz7Y2g7JiYQDj'"
    )
    conn.commit()
    conn.close()
    changed = adapter.read(unit, again.state, now=LATER)
    assert changed.reset and changed.events[-1].text == "Edited."


def _cut_after_running_tool(db: Path) -> None:
    """What a kill during a tool leaves: the tool part stuck in "running", its message never
    completed, nothing after it."""
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM part WHERE message_id = 'msg_229d8c915001Qs18kJ55MBs73x'")
    conn.execute("DELETE FROM message WHERE id = 'msg_229d8c915001Qs18kJ55MBs73x'")
    conn.execute("DELETE FROM part WHERE id = 'prt_229d8c8cd001Xx1uFHmoneuwJi'")  # its step-finish
    conn.execute(
        "UPDATE part SET data = json_set(json_remove(data, '$.state.output', '$.state.metadata'), "
        "'$.state.status', 'running') WHERE id = 'prt_229d8c8090018CjJEggA8T7n4g'"
    )
    conn.execute(
        "UPDATE message SET data = json_remove(data, '$.time.completed') WHERE id = 'msg_229d8c52b001j6l5x9vZsMdWJg'"
    )
    conn.commit()
    conn.close()


def test_running_tool_at_the_end_means_interrupted(adapter: OpenCodeAdapter, db_copy: Path) -> None:
    _cut_after_running_tool(db_copy)
    unit = units(adapter, db_copy)[MULTI]
    last_activity = 1795998402765 / 1000.0  # the part's time_updated, the newest row
    live = adapter.read(unit, None, now=last_activity + 1)
    assert live.session.ending is None  # it may still be running
    bash = [e for e in live.events if e.tool == "bash"][-1]
    assert bash.extra["status"] == "running" and bash.result is None and bash.is_error is None
    # nothing changes in the database, but once quiet long enough the same state re-reads
    quiet = adapter.read(unit, live.state, now=last_activity + STALE_SECONDS + 1)
    assert quiet.reset and quiet.session.ending == "interrupted"
    assert quiet.session.accounting.balanced()


@pytest.mark.parametrize(
    ("error", "ending", "text"),
    [
        (
            {"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}},
            "interrupted",
            None,
        ),
        ({"name": "MessageOutputLengthError", "data": {}}, "limit", "MessageOutputLengthError"),
        (
            {"name": "APIError", "data": {"message": "Bad Request", "statusCode": 400, "isRetryable": False}},
            "interrupted",
            "APIError: Bad Request",
        ),
    ],
)
def test_errors_on_the_last_reply(
    adapter: OpenCodeAdapter, db_copy: Path, error: dict, ending: str, text: str | None
) -> None:
    conn = sqlite3.connect(db_copy)
    conn.execute(
        "UPDATE message SET data = json_set(data, '$.error', json(?)) WHERE id = 'msg_229d8c915001Qs18kJ55MBs73x'",
        (json.dumps(error),),
    )
    conn.commit()
    conn.close()
    res = read(adapter, db_copy, MULTI)
    assert res.session.ending == ending
    err = res.events[-1]
    assert err.kind == "system" and err.subtype == "error" and err.is_error
    if text:
        assert err.text == text
    assert res.session.accounting.balanced()


def test_bad_rows_are_counted(adapter: OpenCodeAdapter, db_copy: Path) -> None:
    conn = sqlite3.connect(db_copy)
    conn.execute("UPDATE part SET data = '{not json' WHERE id = 'prt_229d89814001GesfHQftH5IGef'")
    conn.execute("UPDATE message SET data = '[1, 2]' WHERE id = 'msg_229d89a27001uIeO2KHSS17M8P'")
    conn.commit()
    conn.close()
    res = read(adapter, db_copy, BASIC)
    s = res.session
    assert s.bad_lines == 2 and s.accounting.bad == 2 and s.accounting.lines == 44 and s.accounting.balanced()
    assert [e.tool for e in res.events if e.kind == "tool_use"] == [
        "bash",
        "write",
        "read",
        "edit",
        "read",
        "bash",
        "todowrite",
    ]


def test_rows_still_in_the_wal_are_read(adapter: OpenCodeAdapter, db_copy: Path) -> None:
    writer = sqlite3.connect(db_copy)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute(
            "UPDATE part SET data = json_set(data, '$.text', 'Written, not checkpointed.'), "
            "time_updated = time_updated + 1 WHERE id = 'prt_229d8c962001cFmbIKu0UIRzgN'"
        )
        writer.commit()
        assert Path(str(db_copy) + "-wal").stat().st_size > 0
        res = read(adapter, db_copy, MULTI)
        assert res.events[-1].text == "Written, not checkpointed."
    finally:
        writer.close()


def test_synthetic_database_and_data_dir_root(adapter: OpenCodeAdapter, corpus: Path) -> None:
    found = units(adapter, corpus / SYNTH_DATA)
    assert list(found) == ["ses_330f6fdfffffvXS7FE4L1bZEbE"]
    unit = found["ses_330f6fdfffffvXS7FE4L1bZEbE"]
    assert adapter.relative_path(unit, unit.files[0]) == "opencode.db"
    res = adapter.read(unit, None, now=LATER)
    s = res.session
    assert s.title == "Add --json flag to agtail ls" and s.cwd == "/home/dev/src/agtail"
    assert s.extra["recorded_cost_usd"] == 0.0304  # 0.0211 + 0.0093, as OpenCode recorded it
    first = res.usage[0]
    # total 5766 = 5230 + 344 + 192: reasoning is beside output, so output = 344 + 192
    assert (first.usage.input_tokens, first.usage.output_tokens, first.usage.reasoning_tokens) == (
        5230,
        536,
        192,
    )
    assert first.model == "gpt-5.1-codex"


def test_older_json_storage(adapter: OpenCodeAdapter, corpus: Path) -> None:
    found = units(adapter, corpus / JSON_STORAGE)
    unit = found["ses_4870006fffffe71lHFE8l6hlvY"]
    assert len(unit.files) == 21  # session + 5 messages + 15 parts
    rel = adapter.relative_path(unit, unit.path)
    assert (
        rel == "storage/session/c0b3f1d2a8e94f6b1e2d3c4b5a69788776655443/ses_4870006fffffe71lHFE8l6hlvY.json"
    )
    res = adapter.read(unit, None, now=LATER)
    s = res.session
    assert s.title == "README vs CLI duration units" and s.version == "1.1.25"
    assert (
        s.first_prompt
        == "The CLI prints durations in seconds but the README says milliseconds. Which one is right?"
    )
    assert s.accounting.lines == 21 and s.accounting.balanced() and s.messages == 5
    assert s.extra["recorded_cost_usd"] == 0.03186
    edit = next(e for e in res.events if e.tool == "edit")
    assert edit.input["newString"] == "Durations are printed in seconds with one decimal, e.g. `1.5s`."
    assert [e.text for e in res.events if e.kind == "text" and e.role == "user"] == [
        "The CLI prints durations in seconds but the README says milliseconds. Which one is right?",
        "Yes, fix the README.",
    ]
    assert len(res.usage) == 3 and s.usage.cache_write_tokens == 2210 + 380


def test_a_session_in_both_stores_is_read_from_the_database(
    adapter: OpenCodeAdapter, corpus: Path, tmp_path: Path
) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(corpus / JSON_STORAGE, data / "storage")
    shutil.copy(corpus / SYNTH_DATA / "opencode.db", data / "opencode.db")
    (data / "opencode.db").chmod(0o600)
    conn = sqlite3.connect(data / "opencode.db")
    for table, column in (("session", "id"), ("message", "session_id"), ("part", "session_id")):
        conn.execute(f"UPDATE {table} SET {column} = 'ses_4870006fffffe71lHFE8l6hlvY'")
    conn.commit()
    conn.close()
    paths = [u.path for u in adapter.discover(data)]
    assert paths == [f"{data / 'opencode.db'}#ses_4870006fffffe71lHFE8l6hlvY"]
    assert [u.path for u in adapter.discover(data / "storage")] == []


def test_default_roots(adapter: OpenCodeAdapter, tmp_path: Path) -> None:
    home = tmp_path
    data = home / ".local/share/opencode"
    assert adapter.default_roots({}, home) == [data / "opencode.db", data / "storage"]
    xdg = adapter.default_roots({"XDG_DATA_HOME": "/x"}, home)
    assert xdg == [Path("/x/opencode/opencode.db"), Path("/x/opencode/storage")]
    data.mkdir(parents=True)
    (data / "opencode-dev.db").write_bytes(b"")
    roots = adapter.default_roots({"OPENCODE_DB": "other.db"}, home)
    assert roots == [data / "opencode.db", data / "opencode-dev.db", data / "other.db", data / "storage"]
    assert adapter.default_roots({"OPENCODE_DATA_DIR": "/d"}, home)[0] == Path("/d/opencode.db")


def test_usage_convention_follows_the_recorded_total() -> None:
    separate = usage_of(
        {"total": 160, "input": 100, "output": 40, "reasoning": 20, "cache": {"read": 0, "write": 0}}
    )
    inside = usage_of(
        {"total": 140, "input": 100, "output": 40, "reasoning": 20, "cache": {"read": 0, "write": 0}}
    )
    assert separate is not None and inside is not None
    assert (separate.output_tokens, inside.output_tokens) == (60, 40)
    assert usage_of({"input": 0, "output": 0}) is None and usage_of("x") is None


def test_missing_or_garbage_database_is_skipped(adapter: OpenCodeAdapter, tmp_path: Path) -> None:
    assert list(adapter.discover(tmp_path / "nothing.db")) == []
    garbage = tmp_path / "opencode.db"
    garbage.write_bytes(b"this is not a database" * 100)
    assert list(adapter.discover(garbage)) == []
    assert list(adapter.discover(tmp_path)) == []
