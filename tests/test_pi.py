"""Pi adapter: facts checked by eye on the corpus files, branches, usage, incremental reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.pi.adapter import PiAdapter
from agtaild.model import Event
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

SYNTH = "pi/synthetic-agtail/.pi/agent/sessions"
REAL = "real/pi-0.73.1/sessions"
V1 = "pi/pi-mono/.pi/agent/sessions"
LONG_AGO = 1e12  # "now" far after every mtime: files are settled


def _units(corpus: Path, rel: str) -> list[Unit]:
    return list(PiAdapter().discover(corpus / rel))


def _read(unit: Unit):  # type: ignore[no-untyped-def]
    return PiAdapter().read(unit, None, now=LONG_AGO)


def _by_uuid(events: list[Event], uuid: str) -> list[Event]:
    return [e for e in events if e.uuid == uuid]


def test_discover_finds_every_sample(corpus: Path) -> None:
    assert len(_units(corpus, SYNTH)) == 1
    assert len(_units(corpus, V1)) == 1
    real = _units(corpus, REAL)
    assert sorted(Path(u.path).name[:24] for u in real) == [
        "2026-11-30T00-27-05-550Z",
        "2026-11-30T00-27-06-827Z",
        "2026-11-30T00-27-09-569Z",
    ]


def test_synthetic_v3_session_summary(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    res = _read(unit)
    s = res.session
    assert s.agent == "pi"
    assert s.id == "4b7e2c1a-9d3f-4e5a-8b6c-1d2e3f4a5b6c"
    assert s.title == "Fix ls column widths"  # the session_info entry
    assert s.first_prompt is not None and s.first_prompt.startswith("The screenshot shows the `ls` output")
    assert s.cwd == "/home/dev/src/agtail-demo" and s.project == "agtail-demo"
    assert s.models == ["claude-sonnet-4-5", "gpt-5.1-codex"]
    assert s.started == "2026-06-01T08:00:00.000Z" and s.ended == "2026-06-01T08:02:21.040Z"
    assert s.compactions == 1
    assert s.version == "3"
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events, acct.bad) == (31, 1, 6, 24, 0)
    assert acct.balanced()
    cmd = PiAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["pi", "--session", unit.path] and cmd.cwd == s.cwd


def test_synthetic_usage_totals_and_recorded_cost(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    res = _read(unit)
    u = res.session.usage
    # sums of the ten assistant messages' usage fields, added up by hand
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        8255,
        740,
        57464,
        6400,
    )
    assert u.total_tokens == 8255 + 740 + 57464 + 6400
    assert len(res.usage) == 10 and {r.key for r in res.usage} >= {"5a3c7cec", "5a3fa8ea"}
    assert res.session.extra["recorded_cost_usd"] == pytest.approx(0.063902)
    first = next(r for r in res.usage if r.key == "5a3c7cec")
    assert first.model == "claude-sonnet-4-5" and first.usage.cache_write_tokens == 6400


def test_synthetic_tool_results_are_joined(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    events = _read(unit).events
    tools = [e for e in events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["read", "edit", "bash", "edit", "bash", "write", "bash"]
    failing = next(t for t in tools if t.tool_use_id == "toolu_01Pq4Rs6Tu8Vw0Xy2Za4Bc6D")
    assert failing.input == {"command": "python -m pytest -q tests/test_table.py"}
    assert failing.is_error is True and "Command exited with code 1" in failing.result
    assert failing.extra["result_uuid"] == "5a3d1913"
    edit = next(t for t in tools if t.tool_use_id == "toolu_01Bn3Vc5Xz7Lk9Jh1Gf3Ds5A")
    assert edit.result == "Successfully replaced text in src/table.py." and edit.is_error is False
    assert "diff" in edit.extra["details"]
    # the user's own `!python -m pytest -q` (bashExecution) is a tool use with its output
    user_bash = next(t for t in tools if t.subtype == "bash_execution")
    assert user_bash.role == "user" and user_bash.result == "....\n4 passed in 0.11s\n"
    assert not [e for e in events if e.kind == "tool_result"]


def test_synthetic_branches_and_active_path(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    res = _read(unit)
    events = res.events
    assert res.session.extra["leaf"] == "5a3fa8ea"
    # the branch left by /tree: label, session_info, custom, !bash, a user turn and its answer
    abandoned = {"5a3d95ff", "5a3db53a", "5a3dd475", "5a3df3b0", "5a3e12eb", "5a3e3226"}
    for ev in events:
        assert ev.uuid is not None
        assert ev.extra["branch"] == ("inactive" if ev.uuid in abandoned else "active"), ev.uuid
    (summary,) = _by_uuid(events, "5a3e5161")
    assert summary.kind == "summary" and summary.subtype == "branch_summary"
    assert summary.parent_uuid == "5a3d76c4" and summary.extra["fromId"] == "5a3e3226"
    (answer,) = _by_uuid(events, "5a3e3226")
    assert answer.parent_uuid == "5a3e12eb" and "numeric" in (answer.text or "")
    # every parent_uuid points at an entry that is itself an event or a merged tool result
    known = {e.uuid for e in events} | {e.extra.get("result_uuid") for e in events}
    assert all(e.parent_uuid in known for e in events if e.parent_uuid)


def test_synthetic_other_entries(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    events = _read(unit).events
    (compaction,) = [e for e in events if e.subtype == "compaction"]
    assert compaction.kind == "summary" and compaction.text.startswith("## Goal")
    assert compaction.extra["firstKeptEntryId"] == "5a3e709c" and compaction.extra["tokensBefore"] == 48120
    (label,) = _by_uuid(events, "5a3d95ff")
    assert label.kind == "system" and label.text == "table-fix" and label.extra["targetId"] == "5a3c5db1"
    (reminder,) = _by_uuid(events, "5a3f2bfe")
    assert reminder.subtype == "custom_message" and reminder.text.startswith("Reminder: run the full")
    (change,) = _by_uuid(events, "5a3e8fd7")
    assert change.subtype == "model_change" and change.model == "gpt-5.1-codex"
    (first_user,) = _by_uuid(events, "5a3c5db1")
    assert first_user.extra["images"] == 1 and "iVBOR" not in str(first_user)
    thinking = [e for e in events if e.kind == "thinking"]
    assert [t.uuid for t in thinking] == ["5a3c7cec", "5a3eaf12"]


def test_real_pi_0731_basic_session(corpus: Path) -> None:
    unit = next(u for u in _units(corpus, REAL) if "01a229d9-21cd" in u.path)
    res = _read(unit)
    s = res.session
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:pi/basic]]"
    assert s.cwd == "/tmp/rt/pi/home/src/demo-app" and s.models == ["claude-mock-4"]
    tools = [e for e in res.events if e.kind == "tool_use"]
    assert len(tools) == 7 and all(t.result is not None for t in tools)
    assert s.accounting.merged == 7
    missing = next(t for t in tools if t.input == {"path": "/tmp/rt/pi/home/src/demo-app/does-not-exist.txt"})
    assert missing.is_error is True and missing.result.startswith("ENOENT")
    boom = next(t for t in tools if "sys.exit(3)" in t.input.get("command", ""))
    assert boom.is_error is True and boom.result.endswith("Command exited with code 3")
    # eight assistant responses of 1234/56/800/100 tokens each
    u = s.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        9872,
        448,
        6400,
        800,
    )
    last = [e for e in res.events if e.kind == "text"][-1]
    assert last.role == "assistant" and "日本語の挨拶も追加しました。" in last.text
    assert all(e.extra["branch"] == "active" for e in res.events)


def test_v1_session_without_ids(corpus: Path) -> None:
    (unit,) = _units(corpus, V1)
    res = _read(unit)
    s = res.session
    assert s.id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617" and s.version == "1"
    assert s.first_prompt == "/mode"  # a command, so the title comes from the next prompt
    assert s.title is not None and s.title.startswith("read packages/coding-agent/docs/theme.md in full")
    assert s.started == "2025-11-20T23:33:01.550Z"  # before the header's own timestamp
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.bad) == (1019, 1, 373, 0) and acct.balanced()
    u = s.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        1049,
        83156,
        43229469,
        4296232,
    )
    assert s.extra["recorded_cost_usd"] == pytest.approx(30.3301977, abs=1e-6)
    assert all(e.uuid is None and e.extra["branch"] == "active" for e in res.events)
    aborted = [e for e in res.events if e.subtype == "error"]
    assert aborted and aborted[0].text == "Request was aborted"


@pytest.mark.parametrize("rel", [SYNTH, REAL, V1])
@pytest.mark.parametrize("settled", [True, False])
def test_incremental_equals_one_shot(corpus: Path, tmp_path: Path, rel: str, settled: bool) -> None:
    adapter = PiAdapter()
    for i, unit in enumerate(_units(corpus, rel)):
        src = Path(unit.path)
        data = src.read_bytes()
        every = 1 if len(data) < 50_000 else 97
        dst = tmp_path / str(i) / "--b--" / src.name
        dunit = Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path / str(i)))
        replayed = replay_growing_file(adapter, src, dst, line_cuts(data, every), dunit, settled=settled)
        whole = read_once(adapter, dunit, now=LONG_AGO)
        assert replayed.snapshot() == whole.snapshot()


def test_garbage_lines_are_counted_not_fatal(corpus: Path, tmp_path: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    lines = Path(unit.path).read_bytes().splitlines(keepends=True)
    garbage = [
        b"not json at all\n",
        b'{"type":"message","id":"zz"\n',
        b"[1, 2, 3]\n",
        b'{"type":"weird_new"}\n',
    ]
    mixed = lines[:5] + garbage + lines[5:] + [b'{"type":"message","id":"torn","message":{"ro']
    dst = tmp_path / "b" / "x_1.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(b"".join(mixed))
    res = PiAdapter().read(
        Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path)), None, now=LONG_AGO
    )
    s = res.session
    assert s.bad_lines == 3 and s.bad_line_numbers == [6, 7, 36] and s.truncated
    assert s.accounting.balanced() and s.accounting.lines == 31 + 5
    unknown = [e for e in res.events if e.kind == "unknown"]
    assert [u.raw for u in unknown] == [[1, 2, 3], {"type": "weird_new"}]
    assert s.title == "Fix ls column widths"


def test_leaf_moved_by_a_later_append_rereads(tmp_path: Path, corpus: Path) -> None:
    """A /tree jump appended after a first read flips earlier events to inactive."""
    (unit,) = _units(corpus, SYNTH)
    lines = Path(unit.path).read_bytes().splitlines(keepends=True)
    dst = tmp_path / "b" / "x_1.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(b"".join(lines[:19]))  # up to the abandoned assistant answer
    dunit = Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path))
    adapter = PiAdapter()
    first = adapter.read(dunit, None, now=LONG_AGO)
    assert all(e.extra["branch"] == "active" for e in first.events)
    with open(dst, "ab") as fh:
        fh.write(lines[19])  # the branch_summary hanging off 5a3d76c4
    second = adapter.read(dunit, first.state, now=LONG_AGO)
    assert second.reset
    marks = {e.uuid: e.extra["branch"] for e in second.events}
    assert marks["5a3e3226"] == "inactive" and marks["5a3e5161"] == "active"


def test_in_place_rewrite_of_the_header_rereads(tmp_path: Path, corpus: Path) -> None:
    """pi migrates old files in place: a changed first line invalidates the saved offset."""
    (unit,) = _units(corpus, REAL)[:1]
    data = Path(unit.path).read_bytes()
    dst = tmp_path / "b" / "x_1.jsonl"
    dst.parent.mkdir()
    dst.write_bytes(data)
    dunit = Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path))
    adapter = PiAdapter()
    first = adapter.read(dunit, None, now=LONG_AGO)
    dst.write_bytes(data.replace(b'"version":3', b'"version":4', 1))
    second = adapter.read(dunit, first.state, now=LONG_AGO)
    assert second.reset and second.session.version == "4"
    third = adapter.read(dunit, second.state, now=LONG_AGO)
    assert not third.reset and third.events == []


def test_default_roots_follow_pi_coding_agent_dir(tmp_path: Path) -> None:
    adapter = PiAdapter()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".pi" / "agent" / "sessions"]
    moved = tmp_path / "elsewhere"
    assert adapter.default_roots({"PI_CODING_AGENT_DIR": str(moved)}, tmp_path) == [moved / "sessions"]
    # the same variable set for Oh My Pi (its agent dir holds agent.db) is not pi's
    moved.mkdir()
    (moved / "agent.db").write_bytes(b"")
    assert adapter.default_roots({"PI_CODING_AGENT_DIR": str(moved)}, tmp_path) == [
        tmp_path / ".pi" / "agent" / "sessions"
    ]


def test_resume_refused_for_imported_sessions(corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    s = _read(unit).session
    s.imported = True
    assert PiAdapter().resume(s) is None


def test_empty_files_are_not_sessions(tmp_path: Path, corpus: Path) -> None:
    (unit,) = _units(corpus, SYNTH)
    bucket = tmp_path / "--b--"
    bucket.mkdir()
    (bucket / "2026-01-01T00-00-00-000Z_empty.jsonl").write_bytes(b"")
    (bucket / Path(unit.path).name).write_bytes(Path(unit.path).read_bytes())
    assert [Path(u.path).name for u in PiAdapter().discover(tmp_path)] == [Path(unit.path).name]


def test_unanswered_tool_calls_are_bounded(tmp_path: Path) -> None:
    """Aborted turns leave calls without results; the state keeps only the newest 500."""
    lines = ['{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}']
    parent = None
    for i in range(600):
        call = {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": str(i)}}
        entry = {
            "type": "message",
            "id": f"a{i}",
            "parentId": parent,
            "message": {"role": "assistant", "content": [call]},
        }
        lines.append(json.dumps(entry))
        parent = f"a{i}"
    for i in (0, 599):
        result = {
            "role": "toolResult",
            "toolCallId": f"c{i}",
            "toolName": "bash",
            "content": [],
            "isError": False,
        }
        lines.append(json.dumps({"type": "message", "id": f"r{i}", "parentId": parent, "message": result}))
        parent = f"r{i}"
    dst = tmp_path / "b" / "x_s1.jsonl"
    dst.parent.mkdir()
    dst.write_text("\n".join(lines) + "\n")
    res = PiAdapter().read(
        Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path)), None, now=LONG_AGO
    )
    assert res.session.accounting.merged == 1
    assert [e.tool_use_id for e in res.events if e.kind == "tool_result"] == ["c0"]


def test_fields_of_the_wrong_type_are_kept_raw(tmp_path: Path) -> None:
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {"type": {"not": "a string"}, "id": "e1", "parentId": None},
        {
            "type": "custom",
            "id": "e2",
            "parentId": "e1",
            "customType": "session_exit",
            "data": {"kind": ["x"]},
        },
        {"type": "message", "id": "e3", "parentId": "e2", "message": {"role": ["user"], "content": 5}},
    ]
    dst = tmp_path / "b" / "x_s1.jsonl"
    dst.parent.mkdir()
    dst.write_text("".join(json.dumps(line) + "\n" for line in lines))
    unit = Unit(agent="pi", path=str(dst), files=[str(dst)], root=str(tmp_path))
    res = PiAdapter().read(unit, None, now=LONG_AGO)
    assert [e.kind for e in res.events] == ["unknown", "system", "unknown"]
    assert res.session.ending is None and res.session.accounting.balanced()
    again = PiAdapter().read(unit, res.state, now=LONG_AGO)  # the saved state decodes
    assert not again.reset
