"""Cline adapter: task folders (CLI 2.18.0, extension) and SDK sessions (CLI 3.0.65)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.cline.adapter import ClineAdapter
from agtaild.model import ParentRef, Session

V2 = "real/cline-2.18.0"
V3 = "real/cline-3.0.65"
EXT = "cline/synthetic-agtail/.config/Code/User/globalStorage/saoudrizwan.claude-dev"
LATER = 1e12


def _units(root: Path) -> dict[str, Unit]:
    return {Path(u.path).name: u for u in ClineAdapter().discover(root)}


def _read(unit: Unit) -> ReadResult:
    return ClineAdapter().read(unit, None, now=LATER)


def _by_id(root: Path) -> dict[str, ReadResult]:
    out = {}
    for unit in ClineAdapter().discover(root):
        res = _read(unit)
        out[res.session.id] = res
    return out


def test_discovers_both_generations_from_every_root_form(corpus: Path, tmp_path: Path) -> None:
    assert sorted(_units(corpus / V2)) == ["1796055228103", "1796055250087"]
    assert sorted(_units(corpus / V2 / "tasks")) == ["1796055228103", "1796055250087"]
    v3 = sorted(_units(corpus / V3))
    assert v3 == [
        "1796054485464_ib83g",
        "1796054488458_7j4c8",
        "1796054491205_x8ivh",
        "agent_1796054488815_kglb5h.messages.json",
    ]
    assert sorted(_units(corpus / V3 / "sessions")) == v3
    # ~/.cline itself (data/ below it)
    home = tmp_path / ".cline"
    shutil.copytree(corpus / V3, home / "data")
    assert sorted(_units(home)) == v3
    assert sorted(_units(corpus / EXT)) == ["1780905600000"]


def test_default_roots_follow_clines_env_vars(tmp_path: Path) -> None:
    a = ClineAdapter()
    roots = a.default_roots({}, tmp_path)
    assert roots[0] == tmp_path / ".cline" / "data"
    assert tmp_path / ".config/Code/User/globalStorage/saoudrizwan.claude-dev" in roots
    assert tmp_path / ".config/Cursor/User/globalStorage/saoudrizwan.claude-dev" in roots
    env = {"CLINE_DIR": str(tmp_path / "c"), "CLINE_SESSION_DATA_DIR": str(tmp_path / "s")}
    roots = a.default_roots(env, tmp_path)
    assert roots[:2] == [tmp_path / "c" / "data", tmp_path / "s"]
    assert a.default_roots({"CLINE_DATA_DIR": str(tmp_path / "d")}, tmp_path)[0] == tmp_path / "d"


def test_cli2_task_basic_scenario(corpus: Path) -> None:
    res = _by_id(corpus / V2)["1796055228103"]
    s = res.session
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:cline2/basic]]"
    assert s.cwd == "/tmp/rt/cline2/home/src/demo-app" and s.project == "demo-app"
    assert s.models == ["mock-model"] and s.version == "2.18.0" and s.extra["core_version"] == "3.82.0"
    assert s.started == "2026-11-30T16:13:48.830Z" and s.ending is None
    kinds = [(e.kind, e.tool or e.role) for e in res.events]
    assert kinds == [
        ("text", "user"),
        ("thinking", "assistant"),
        ("text", "assistant"),
        ("tool_use", "execute_command"),
        ("tool_use", "write_to_file"),
        ("tool_use", "read_file"),
        ("thinking", "assistant"),
        ("tool_use", "replace_in_file"),
        ("tool_use", "execute_command"),
        ("tool_use", "read_file"),
        ("tool_use", "execute_command"),
        ("text", "assistant"),
    ]
    calls = [e for e in res.events if e.kind == "tool_use"]
    assert calls[0].input["command"] == "ls -la && git status --short"
    assert calls[0].result.startswith("Command executed successfully") and calls[0].is_error is False
    assert "Error reading file" in calls[5].result and calls[5].is_error is True
    assert calls[6].result.startswith("Command failed with exit code 3") and calls[6].is_error is True
    assert "日本語の挨拶も追加しました" in (res.events[-1].text or "")
    acct = s.accounting
    # 16 API messages + 24 UI messages + task_metadata.json
    assert acct.lines == 41 and acct.balanced() and acct.bad == 0


def test_cli2_usage_equals_task_history(corpus: Path) -> None:
    history = {h["id"]: h for h in json.loads((corpus / V2 / "state/taskHistory.json").read_text())}
    for sid, res in _by_id(corpus / V2).items():
        u, h = res.session.usage, history[sid]
        # OpenAI-style provider: Cline's tokensIn includes the cached prompt tokens.
        assert u.input_tokens + u.cache_read_tokens == h["tokensIn"]
        assert u.output_tokens == h["tokensOut"]
        assert u.cache_read_tokens == h["cacheReads"] and u.cache_write_tokens == h["cacheWrites"]
        assert len(res.usage) == 8 if sid == "1796055228103" else len(res.usage) == 5


def test_cli2_multi_turn_resumed_task(corpus: Path) -> None:
    res = _by_id(corpus / V2)["1796055250087"]
    users = [e.text for e in res.events if e.kind == "text" and e.role == "user"]
    assert users == [
        "README を書いてください。 [[S:cline2/mt1]]",
        "English and Japanese please. [[S:cline2/mt2]]",
        "Double-check it. [[S:cline2/mt3]]",
    ]
    assert res.session.extra["resumed"] == 3
    cmd = ClineAdapter().resume(res.session)
    assert cmd is not None and cmd.argv == ["cline", "--taskId", "1796055250087"]
    assert cmd.cwd == "/tmp/rt/cline2/home/src/demo-app"


def test_cli3_basic_session(corpus: Path) -> None:
    res = _by_id(corpus / V3)["1796054485464_ib83g"]
    s = res.session
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:cline/basic]]"
    assert s.cwd == "/tmp/rt/cline/home/src/demo-app" and s.git_branch == "main"
    assert s.models == ["mock-model"] and s.origin == "cli" and s.programmatic
    assert (s.started, s.ended) == ("2026-11-30T16:01:25.467Z", "2026-11-30T16:01:26.432Z")
    tools = [(e.tool, e.is_error) for e in res.events if e.kind == "tool_use"]
    assert tools == [
        ("run_commands", False),
        ("editor", False),
        ("read_files", False),
        ("editor", False),
        ("run_commands", False),
        ("read_files", True),
        ("run_commands", True),
    ]
    assert all(e.result for e in res.events if e.kind == "tool_use")
    assert not [e for e in res.events if e.kind == "tool_result"]
    assert res.events[0].text == "Create hello.py, run it, add a Japanese greeting. [[S:cline/basic]]"
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (18, 2, 7, 9) and acct.balanced()


def test_cli3_usage_equals_manifest_totals(corpus: Path) -> None:
    for res in _by_id(corpus / V3).values():
        s = res.session
        recorded = s.extra.get("recorded_usage")
        if recorded is None:
            assert s.parent is not None  # subagents have no manifest
            continue
        assert s.usage.input_tokens + s.usage.cache_read_tokens == recorded["inputTokens"]
        assert s.usage.output_tokens == recorded["outputTokens"]
        assert s.usage.cache_read_tokens == recorded["cacheReadTokens"]
        assert s.usage.cache_write_tokens == recorded["cacheWriteTokens"]


def test_cli3_subagent_links_to_the_spawning_call(corpus: Path) -> None:
    sessions = _by_id(corpus / V3)
    child = sessions["1796054488458_7j4c8__agent_1796054488815_kglb5h"].session
    parent = sessions["1796054488458_7j4c8"]
    (spawn,) = [e for e in parent.events if e.tool == "spawn_agent"]
    assert child.parent == ParentRef(agent="cline", id="1796054488458_7j4c8", tool_use_id=spawn.tool_use_id)
    assert spawn.result and "hello.py has 6 lines." in spawn.result
    assert child.title == "Count the lines of hello.py and report the number. [[S:cline/sub-inner]]"
    assert child.cwd == "/tmp/rt/cline/home/src/demo-app"
    assert ClineAdapter().resume(child) is None and not child.resumable


def test_cli3_resume_command(corpus: Path) -> None:
    s = _by_id(corpus / V3)["1796054491205_x8ivh"].session
    cmd = ClineAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["cline", "--id", "1796054491205_x8ivh"] and s.resumable
    assert cmd.cwd == "/tmp/rt/cline/home/src/demo-app"
    for bad in ("-rf", "--help", "a b", "x;y", ""):
        assert ClineAdapter().resume(Session(agent="cline", id=bad, extra={"store": "sessions"})) is None


def test_extension_task_has_no_cli_resume_and_anthropic_usage(corpus: Path) -> None:
    (res,) = _by_id(corpus / EXT).values()
    s = res.session
    assert ClineAdapter().resume(s) is None and not s.resumable
    assert s.cwd == "/home/dev/src/agtail-demo" and s.title == "Fix the misaligned columns in src/table.py"
    # No OpenAI-style provider: tokensIn is already without the cache.
    assert (s.usage.input_tokens, s.usage.output_tokens) == (22, 289)
    assert (s.usage.cache_read_tokens, s.usage.cache_write_tokens) == (28932, 15022)
    read = next(e for e in res.events if e.tool == "read_file")
    assert read.result and read.result.startswith("def render(rows, headers):")


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "root"
    shutil.copytree(src, dst)
    return dst


def test_cli3_endings_from_the_manifest(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus / V3, tmp_path)
    manifest = root / "sessions/1796054485464_ib83g/1796054485464_ib83g.json"
    doc = json.loads(manifest.read_text())
    for status, marker, ending in (
        ("cancelled", None, "interrupted"),
        ("failed", None, "error"),
        ("failed", "failed_external_process_exit", "interrupted"),
        ("completed", None, None),
    ):
        doc["status"] = status
        doc["metadata"].pop("terminal_marker", None)
        if marker:
            doc["metadata"]["terminal_marker"] = marker
        manifest.write_text(json.dumps(doc))
        assert _by_id(root)["1796054485464_ib83g"].session.ending == ending, status


def test_cli3_error_message_and_cli2_interrupt(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus / V3, tmp_path)
    messages = root / "sessions/1796054485464_ib83g/1796054485464_ib83g.messages.json"
    doc = json.loads(messages.read_text())
    doc["messages"].append(
        {"role": "assistant", "content": [{"type": "text", "text": "400 Bad Request"}],
         "metadata": {"displayOnly": True, "displayRole": "error"}, "ts": 1796054486300}
    )
    messages.write_text(json.dumps(doc))
    manifest = messages.with_name("1796054485464_ib83g.json")
    m = json.loads(manifest.read_text())
    m["status"] = "running"
    manifest.write_text(json.dumps(m))
    res = _by_id(root)["1796054485464_ib83g"]
    assert res.events[-1].kind == "system" and res.events[-1].is_error and res.events[-1].text == "400 Bad Request"
    assert res.session.ending == "error"

    root2 = tmp_path / "v2"
    shutil.copytree(corpus / V2, root2)
    api = root2 / "tasks/1796055250087/api_conversation_history.json"
    hist = json.loads(api.read_text())
    hist.append({"role": "assistant", "content": [{"type": "text", "text": "Let me\n\n[Response interrupted by user]"}],
                 "ts": 1796055290000})
    api.write_text(json.dumps(hist))
    assert _by_id(root2)["1796055250087"].session.ending == "interrupted"


def test_torn_and_garbage_files_are_counted_not_raised(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus / V2, tmp_path)
    task = root / "tasks/1796055228103"
    (task / "ui_messages.json").write_text('[{"ts": 1, "type": "say", "say": "te')
    (task / "task_metadata.json").write_text("[1, 2]")
    res = _by_id(root)["1796055228103"]
    acct = res.session.accounting
    assert acct.bad == 2 and acct.balanced() and acct.lines == 16 + 2
    assert res.session.truncated and sorted(res.session.extra["bad_files"]) == ["task_metadata.json", "ui_messages.json"]
    # Usage falls back to the API history's own metrics.
    assert res.session.usage.input_tokens + res.session.usage.cache_read_tokens == 8 * 1234


def test_unknown_ui_records_are_kept_raw(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus / V2, tmp_path)
    ui = root / "tasks/1796055228103/ui_messages.json"
    msgs = json.loads(ui.read_text())
    msgs.append({"ts": 1796055238700, "type": "say", "say": "brand_new_kind", "text": "hi"})
    ui.write_text(json.dumps(msgs))
    res = _by_id(root)["1796055228103"]
    last = res.events[-1]
    assert last.kind == "unknown" and last.raw["say"] == "brand_new_kind"


def test_from_epoch_ms_agrees_with_from_epoch() -> None:
    import random

    from agtaild.adapters.kit.stamps import from_epoch, from_epoch_ms

    rng = random.Random(7)
    values = [0, 1796055228830, 1780905600999, -5000, 4_102_444_800_000, *(rng.randint(0, 4 * 10**12) for _ in range(5000))]
    for v in values:
        assert from_epoch_ms(v) == from_epoch(v, unit="ms"), v
    for v in (10**20, -(10**20), float("nan"), float("inf"), True, "1796055228830", None):
        assert from_epoch_ms(v) is None, v


def test_mirror_layout_is_found_again(corpus: Path, tmp_path: Path) -> None:
    a = ClineAdapter()
    for i, rel in enumerate((V2, V3, EXT)):
        units = list(a.discover(corpus / rel))
        mirror = tmp_path / str(i)
        for unit in units:
            for f in a.native_files(unit):
                target = mirror / a.relative_path(unit, f)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, target)
        assert sorted(_by_id(mirror)) == sorted(_by_id(corpus / rel)), rel
