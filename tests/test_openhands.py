"""OpenHands CLI adapter on the real 1.16.0 samples (plus edits of copies for endings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.base import ReadResult
from agtaild.adapters.openhands.adapter import OpenHandsAdapter
from agtaild.model import ParentRef, Session

REAL = "real/openhands-1.16.0"
BASIC = "8a0801db9b5c4ed1a0564888b675e043"
SUB = "0b0e985cb484406595871435e5307c32"
CHILD = "01a6f3b452fe43769b4bfa6252a11a43"
MT = "afabe68ad10d4771b377ef7e7005a702"


def _by_id(root: Path) -> dict[str, ReadResult]:
    a = OpenHandsAdapter()
    return {r.session.id: r for r in (a.read(u, None, now=1e12) for u in a.discover(root))}


def test_discovery_from_home_or_conversations_folder(corpus: Path, tmp_path: Path) -> None:
    ids = sorted(_by_id(corpus / REAL))
    assert ids == sorted([BASIC, SUB, CHILD, MT])
    assert sorted(_by_id(corpus / REAL / "conversations")) == ids
    (unit,) = [u for u in OpenHandsAdapter().discover(corpus / REAL) if u.path.endswith(BASIC)]
    assert len([f for f in unit.files if "/events/" in f]) == 20
    sub_unit = next(u for u in OpenHandsAdapter().discover(corpus / REAL) if u.path.endswith(SUB))
    native = OpenHandsAdapter().native_files(sub_unit)
    assert native and not [f for f in native if "subagents" in f]


def test_default_roots_follow_env(tmp_path: Path) -> None:
    a = OpenHandsAdapter()
    assert a.default_roots({}, tmp_path) == [tmp_path / ".openhands" / "conversations"]
    assert a.default_roots({"OPENHANDS_PERSISTENCE_DIR": str(tmp_path / "p")}, tmp_path) == [tmp_path / "p/conversations"]
    assert a.default_roots({"OPENHANDS_CONVERSATIONS_DIR": str(tmp_path / "c")}, tmp_path) == [tmp_path / "c"]


def test_basic_conversation(corpus: Path) -> None:
    res = _by_id(corpus / REAL)[BASIC]
    s = res.session
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:openhands/basic]]"
    assert s.cwd == "/tmp/rt/openhands/home/src/demo-app" and s.models == ["openai/mock-model"]
    assert (s.started, s.ended) == ("2026-11-30T16:07:08.519Z", "2026-11-30T16:07:11.680Z")
    assert [(e.kind, e.tool or e.subtype or e.role) for e in res.events] == [
        ("text", "user"),
        ("thinking", "assistant"),
        ("text", "assistant"),
        ("tool_use", "terminal"),
        ("tool_use", "file_editor"),
        ("tool_use", "file_editor"),
        ("thinking", "assistant"),
        ("tool_use", "file_editor"),
        ("tool_use", "terminal"),
        ("tool_use", "file_editor"),
        ("tool_use", "terminal"),
        ("tool_use", "task_tracker"),
        ("text", "finish"),
    ]
    calls = [e for e in res.events if e.kind == "tool_use"]
    assert calls[0].input["command"] == "ls -la && git status --short" and calls[0].result.startswith("total 12")
    assert calls[5].is_error is True and "does not exist" in calls[5].result
    assert calls[6].is_error is True and calls[6].extra["exit_code"] == 3 and calls[6].result == "boom"
    assert "日本語の挨拶も追加しました" in (res.events[-1].text or "")
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (22, 3, 9, 10) and acct.balanced()
    assert s.ending is None and s.extra["execution_status"] == "finished"


def test_usage_equals_accumulated_token_usage(corpus: Path) -> None:
    for cid, res in _by_id(corpus / REAL).items():
        folder = corpus / REAL / "conversations" / cid
        if not folder.is_dir():
            folder = corpus / REAL / "conversations" / SUB / "subagents" / cid
        state = json.loads((folder / "base_state.json").read_text())
        acc = state["stats"]["usage_to_metrics"]["agent"]["accumulated_token_usage"]
        u = res.session.usage
        assert u.input_tokens + u.cache_read_tokens + u.cache_write_tokens == acc["prompt_tokens"], cid
        assert u.output_tokens == acc["completion_tokens"] and u.reasoning_tokens == acc["reasoning_tokens"], cid
        assert u.cache_read_tokens == acc["cache_read_tokens"], cid
        assert len(res.usage) == len(state["stats"]["usage_to_metrics"]["agent"]["token_usages"]), cid


def test_subagent_links_to_the_task_call(corpus: Path) -> None:
    sessions = _by_id(corpus / REAL)
    (task,) = [e for e in sessions[SUB].events if e.tool == "task"]
    assert task.result == "hello.py has 6 lines." and task.extra["subagent"] == "bash-runner"
    child = sessions[CHILD].session
    assert child.parent == ParentRef(agent="openhands", id=SUB, tool_use_id=task.tool_use_id)
    assert OpenHandsAdapter().resume(child) is None and not child.resumable
    assert sessions[SUB].session.resumable


def test_resume_with_the_dashed_id(corpus: Path) -> None:
    s = _by_id(corpus / REAL)[MT].session
    users = [e.text for e in _by_id(corpus / REAL)[MT].events if e.kind == "text" and e.role == "user"]
    assert users[1:] == ["English and Japanese please. [[S:openhands/mt2]]", "Double-check it. [[S:openhands/mt3]]"]
    cmd = OpenHandsAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["openhands", "--resume", "afabe68a-d10d-4771-b377-ef7e7005a702"]
    assert cmd.cwd == "/tmp/rt/openhands/home/src/demo-app"
    for bad in ("--help", "-x", "not-a-uuid", ""):
        assert OpenHandsAdapter().resume(Session(agent="openhands", id=bad)) is None


def _copy(corpus: Path, tmp_path: Path) -> Path:
    root = tmp_path / "oh"
    shutil.copytree(corpus / REAL, root)
    return root


def test_error_event_and_killed_during_a_tool(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus, tmp_path)
    events = root / "conversations" / MT / "events"
    (events / "event-00011-x.json").write_text(json.dumps({
        "kind": "ConversationErrorEvent", "id": "e1", "timestamp": "2026-11-30T16:08:00.000000",
        "source": "environment", "code": "LLMBadRequestError", "detail": "400 Bad Request",
    }))
    res = _by_id(root)[MT]
    assert res.events[-1].kind == "system" and res.events[-1].is_error and res.events[-1].text == "400 Bad Request"
    assert res.session.ending == "error"

    basic = root / "conversations" / BASIC / "events"
    for f in sorted(basic.glob("event-0001[5-9]-*.json")):
        f.unlink()  # killed during the failing command: its observation and the rest never came
    res = _by_id(root)[BASIC]
    assert res.events[-1].kind == "tool_use" and res.events[-1].result is None
    assert res.session.ending == "interrupted"


def test_bad_and_unknown_event_files(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus, tmp_path)
    events = root / "conversations" / MT / "events"
    (events / "event-00011-a.json").write_text('{"kind": "MessageEv')
    (events / "event-00012-b.json").write_text(json.dumps({"kind": "BrandNewEvent", "id": "n", "x": 1}))
    (root / "conversations" / MT / "base_state.json").write_text("{not json")
    res = _by_id(root)[MT]
    s = res.session
    assert s.accounting.bad == 2 and s.accounting.balanced() and s.truncated
    assert res.events[-1].kind == "unknown" and res.events[-1].raw["x"] == 1
    assert s.title == "README を書いてください。 [[S:openhands/mt1]]"


def test_mirror_layout_is_found_again(corpus: Path, tmp_path: Path) -> None:
    a = OpenHandsAdapter()
    for unit in a.discover(corpus / REAL):
        for f in a.native_files(unit):
            target = tmp_path / a.relative_path(unit, f)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
    assert sorted(_by_id(tmp_path)) == sorted(_by_id(corpus / REAL))


def test_every_event_file_count_reads_as_a_prefix(corpus: Path, tmp_path: Path) -> None:
    """Event files are only ever added: reading after each new file gives a prefix of the
    full read's events (calls get their results once the observation file lands)."""
    root = _copy(corpus, tmp_path)
    events = root / "conversations" / BASIC / "events"
    files = sorted(events.iterdir())
    full = _by_id(root)[BASIC]
    shape = [(e.kind, e.tool, e.text) for e in full.events]
    held = tmp_path / "held"
    held.mkdir()
    for f in files:
        f.rename(held / f.name)
    for f in files:
        (held / f.name).rename(f)
        res = _by_id(root)[BASIC]
        got = [(e.kind, e.tool, e.text) for e in res.events]
        assert got == shape[: len(got)], f.name
        assert res.session.accounting.balanced()
    assert [e.result for e in res.events] == [e.result for e in full.events]
