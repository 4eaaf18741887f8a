"""Kiro CLI adapter: v2 JSONL + sidecar, the classic SQLite store, v3 directories."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.kiro.adapter import KiroAdapter
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

V2_ROOT = "kiro/synthetic-agtail/.kiro/sessions"
DB = "kiro/synthetic-agtail-sqlite/.local/share/kiro-cli/data.sqlite3"
V2_ID = "5d2e8f4a-1b3c-4d5e-9f60-718293a4b5c6"
LONG_AGO = 1e12


def _units(root: Path) -> list[Unit]:
    return list(KiroAdapter().discover(root))


def _read(unit: Unit) -> ReadResult:
    return KiroAdapter().read(unit, None, now=LONG_AGO)


def _v2_copy(corpus: Path, tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    shutil.copytree(corpus / V2_ROOT, root)
    return root / "cli" / f"{V2_ID}.jsonl"


# -- v2 ----------------------------------------------------------------------------------------
def test_v2_session(corpus: Path) -> None:
    (unit,) = _units(corpus / V2_ROOT)
    assert unit.hints["store"] == "v2" and [Path(f).suffix for f in unit.files] == [".jsonl", ".json"]
    res = _read(unit)
    s = res.session
    assert s.agent == "kiro" and s.id == V2_ID
    assert s.title == "Count TODO comments"  # from the sidecar
    assert s.first_prompt == "How many TODO comments are left in src/?"
    assert s.cwd == "/home/dev/src/agtail-demo" and s.models == ["claude-sonnet-4.5"]
    assert s.started == "2026-09-01T03:33:20.118Z" and s.ended == "2026-09-01T03:35:02.007Z"
    acct = s.accounting
    assert (acct.lines, acct.events, acct.merged, acct.metadata) == (10, 7, 3, 0) and acct.balanced()
    prompts = [e for e in res.events if e.role == "user"]
    # Prompt times are epoch seconds: 1788200000 and 1788200090
    assert [p.ts for p in prompts] == ["2026-08-31T18:13:20.000Z", "2026-08-31T18:14:50.000Z"]
    assert s.usage.is_zero()  # Kiro writes no token counts into these files
    cmd = KiroAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["kiro-cli", "chat", f"--resume-id={V2_ID}"] and cmd.cwd == s.cwd


def test_v2_tool_results_joined(corpus: Path) -> None:
    (unit,) = _units(corpus / V2_ROOT)
    tools = {e.tool: e for e in _read(unit).events if e.kind == "tool_use"}
    assert sorted(tools) == ["grep", "read", "write"]
    grep = tools["grep"]
    assert grep.input["pattern"] == "TODO" and grep.extra["purpose"] == "Count TODO comments"
    assert json.loads(grep.result)["numMatches"] == 3 and grep.is_error is False
    assert (
        tools["write"].result
        == "Successfully replaced 1 occurrence(s) in /home/dev/src/agtail-demo/src/cli.py."
    )
    assert tools["read"].result.endswith("# TODO: --json flag\n")
    thinking = [e for e in _read(unit).events if e.kind == "thinking"]
    assert len(thinking) == 2 and all(t.extra.get("redacted") and t.text is None for t in thinking)


def test_v2_incremental_equals_one_shot(corpus: Path, tmp_path: Path) -> None:
    src = corpus / V2_ROOT / "cli" / f"{V2_ID}.jsonl"
    dst = tmp_path / "cli" / src.name
    dst.parent.mkdir()
    shutil.copy(src.with_suffix(".json"), dst.with_suffix(".json"))
    unit = Unit(agent="kiro", path=str(dst), files=[str(dst)], root=str(tmp_path), hints={"store": "v2"})
    adapter = KiroAdapter()
    for settled in (True, False):
        dst.unlink(missing_ok=True)
        replayed = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
        assert replayed.snapshot() == read_once(adapter, unit, now=LONG_AGO).snapshot()


def test_v2_corruption_steering_and_garbage(corpus: Path, tmp_path: Path) -> None:
    path = _v2_copy(corpus, tmp_path)
    lines = [
        {"kind": "Prompt", "data": {"content": [{"kind": "text", "data": "draw it"}], "meta": {"timestamp": 1788300000}}},
        {"kind": "AssistantMessage", "data": {"content": [
            {"kind": "toolUse", "data": {"toolUseId": "t1", "name": "read", "input": {"path": "a"}}}]}},
        {"kind": "AssistantMessage", "data": {"content": [{"kind": "toolUse", "data": {
            "toolUseId": "t2", "name": "write",
            "input": "SYSTEM NOTE: the actual tool use arguments were too complicated to be generated"}}]}},
        {"kind": "ToolResults", "data": {"content": [
            {"kind": "toolResult", "data": {"toolUseId": "t1", "content": [{"kind": "text", "data": "A"}],
                                            "status": "error"}},
            {"kind": "text", "data": "[LIVE STEERING - New message from user] stop"}]}},
        {"kind": "Checkpoint", "data": {"x": 1}},
    ]  # fmt: skip
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    with open(path, "ab") as fh:
        fh.write(b"not json\n" + body + b'{"kind":"Prompt","data":')
    (unit,) = _units(tmp_path / "sessions")
    res = _read(unit)
    s = res.session
    assert s.bad_lines == 2 and s.bad_line_numbers == [11, 17] and s.truncated and s.accounting.balanced()
    read = next(e for e in res.events if e.tool_use_id == "t1")
    assert read.result == "A" and read.is_error is True
    write = next(e for e in res.events if e.tool_use_id == "t2")
    assert write.result is None and write.extra["corrupted_input"] is True
    steering = next(e for e in res.events if e.subtype == "steering")
    assert steering.role == "user" and "LIVE STEERING" in steering.text
    unknown = [e for e in res.events if e.kind == "unknown"]
    assert [u.subtype for u in unknown] == ["Checkpoint"]


def test_v2_subagent_parent_and_empty_logs(corpus: Path, tmp_path: Path) -> None:
    path = _v2_copy(corpus, tmp_path)
    side = json.loads(path.with_suffix(".json").read_text())
    side.update(
        parent_session_id="0b0b0b0b-0000-4000-8000-000000000001",
        session_created_reason="subagent",
        title=None,
    )
    path.with_suffix(".json").write_text(json.dumps(side))
    (path.parent / "11111111-2222-4333-8444-555555555555.jsonl").write_bytes(b"")  # opened, never used
    (unit,) = _units(tmp_path / "sessions")
    s = _read(unit).session
    assert s.parent is not None and s.parent.id == "0b0b0b0b-0000-4000-8000-000000000001"
    assert s.forked_from is None and s.extra["created_reason"] == "subagent"
    assert s.title == "How many TODO comments are left in src/?"  # no sidecar title: the first prompt


# -- SQLite -------------------------------------------------------------------------------------
def test_sqlite_sessions(corpus: Path) -> None:
    units = {u.path.rsplit("#", 1)[1]: u for u in _units(corpus / DB)}
    assert sorted(units) == ["v1:%2FUsers%2Fdev%2Fold-project", "v2:3e9d1c7a-2b4f-4e6a-8c0d-1f2e3a4b5c6d"]
    res = _read(units["v2:3e9d1c7a-2b4f-4e6a-8c0d-1f2e3a4b5c6d"])
    s = res.session
    assert s.id == "3e9d1c7a-2b4f-4e6a-8c0d-1f2e3a4b5c6d" and s.extra["store"] == "sqlite-v2"
    assert s.cwd == "/home/dev/src/agtail" and s.title == "What does scan() return?"
    assert s.models == ["claude-sonnet-4"]
    # created_at / updated_at are epoch milliseconds
    assert s.started == "2026-02-03T09:15:02.311Z" and s.ended == "2026-02-03T09:16:40.002Z"
    read = next(e for e in res.events if e.kind == "tool_use")
    assert read.tool == "fs_read" and read.result.startswith("def scan(root):") and read.is_error is False
    assert read.model == "claude-sonnet-4" and read.ts == "2026-02-03T09:15:02.400Z"
    cancelled = next(e for e in res.events if e.kind == "tool_result")
    assert cancelled.is_error is True and cancelled.result == "Tool use was cancelled by the user"
    assert [e.text for e in res.events if e.role == "user"] == [
        "What does scan() return?",
        "stop, that's enough",
    ]
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (7, 1, 1, 5) and acct.balanced()
    cmd = KiroAdapter().resume(s)
    assert cmd is not None and cmd.argv[-1:] == [f"--resume-id={s.id}"]


def test_sqlite_v1_table(corpus: Path) -> None:
    (unit,) = [u for u in _units(corpus / DB) if "#v1:" in u.path]
    s = _read(unit).session
    assert s.id == "6f5e4d3c-2b1a-4098-8776-655443322110" and s.extra["store"] == "sqlite-v1"
    assert s.cwd == "/Users/dev/old-project" and s.title == "hello"
    assert s.started == "2025-09-12T15:00:00.000Z"  # 08:00 at -07:00
    cmd = KiroAdapter().resume(s)
    assert (
        cmd is not None
        and cmd.argv == ["kiro-cli", "chat", "--resume"]
        and cmd.cwd == "/Users/dev/old-project"
    )


def test_sqlite_unchanged_row_is_not_read_again(corpus: Path) -> None:
    unit = _units(corpus / DB)[0]
    first = _read(unit)
    second = KiroAdapter().read(unit, first.state, now=LONG_AGO)
    assert not second.reset and second.events == [] and second.session.id == first.session.id


def test_sqlite_rows_still_in_the_wal_are_seen(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "data.sqlite3"
    shutil.copy(corpus / DB, db)
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        doc = {
            "conversation_id": "c-new",
            "history": [{"user": {"content": {"Prompt": {"prompt": "new one"}}}}],
        }
        writer.execute(
            "INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?)",
            ("/home/dev/src/new", "c-new", json.dumps(doc), 1770200000000, 1770200000000),
        )
        writer.commit()
        assert (tmp_path / "data.sqlite3-wal").stat().st_size > 0
        units = {u.path.rsplit("#", 1)[1]: u for u in _units(db)}
        assert "v2:c-new" in units
        assert _read(units["v2:c-new"]).session.first_prompt == "new one"
    finally:
        writer.close()


def test_sqlite_archive_mirror_round_trip(corpus: Path, tmp_path: Path) -> None:
    adapter = KiroAdapter()
    units = _units(corpus / DB)
    mirror = tmp_path / "archive" / "kiro"
    for unit in units:
        for file in adapter.native_files(unit):
            target = mirror / adapter.relative_path(unit, file)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(file, target)
    assert sorted(p.name for p in mirror.iterdir()) == ["data.sqlite3"]
    assert len(_units(mirror)) == 2


def test_default_roots(tmp_path: Path) -> None:
    roots = KiroAdapter().default_roots(
        {"KIRO_HOME": str(tmp_path / "k"), "XDG_DATA_HOME": str(tmp_path / "d")}, tmp_path
    )
    assert roots[0] == tmp_path / "k" / "sessions"
    assert roots[1].name == "data.sqlite3" and roots[1].parent.name == "kiro-cli"


# -- v3 -----------------------------------------------------------------------------------------
def test_v3_directories_are_read_without_guessing(corpus: Path, tmp_path: Path) -> None:
    """No real v3 file has been seen: these records are invented around the documented record
    names. What is checked is that such a session is found, plain messages are read, and
    everything else is kept raw with the books balanced."""
    root = tmp_path / "sessions"
    shutil.copytree(corpus / V2_ROOT, root)
    folder = root / "0a1b2c3d" / "sess_6a7b8c9d-0000-4000-8000-000000000003"
    folder.mkdir(parents=True)
    records = [
        {"type": "session_start", "timestamp": "2026-10-01T10:00:00Z", "data": {"cwd": "/home/dev/src/v3"}},
        {"role": "user", "content": "hello v3", "timestamp": "2026-10-01T10:00:01Z"},
        {"type": "turn_start"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        {"type": "tool_call", "name": "read", "id": "x"},
        {"type": "usage_summary", "input_tokens": 10},
    ]
    (folder / "messages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + "[broken\n")
    units = _units(root)
    assert [u.hints["store"] for u in units] == ["v2", "v3"]
    res = _read(units[1])
    s = res.session
    assert s.id == "sess_6a7b8c9d-0000-4000-8000-000000000003" and s.cwd == "/home/dev/src/v3"
    assert s.first_prompt == "hello v3" and s.bad_lines == 1 and s.accounting.balanced()
    assert [e.kind for e in res.events] == ["system", "text", "system", "text", "unknown", "system"]
    assert s.usage.is_zero()
    assert res.events[4].raw == {"type": "tool_call", "name": "read", "id": "x"}
    cmd = KiroAdapter().resume(s)
    assert cmd is not None and cmd.argv[-1] == f"--resume-id={s.id}"
