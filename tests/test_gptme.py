"""gptme on its real recording (tests/corpus/real/gptme-0.35.1, gptme 0.35.1) and on damaged copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.gptme import GptmeAdapter
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

LOGS = Path(__file__).parent / "corpus" / "real" / "gptme-0.35.1" / "logs"
LATER = 4_000_000_000.0


def _read(root: Path) -> dict:
    adapter = GptmeAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (LOGS / name / "conversation.jsonl").read_text().splitlines() if line.strip()]


def test_every_conversation_and_line_of_the_recording() -> None:
    read = _read(LOGS)
    folders = sorted(p.name for p in LOGS.iterdir() if (p / "conversation.jsonl").stat().st_size)
    assert sorted(read) == folders == [
        "apierror", "basic", "interrupted", "killed", "markdown", "subagent", "subagent-lister-48fp"
    ]  # fmt: skip
    for name, result in read.items():
        acct = result.session.accounting
        assert acct.lines == len(_lines(name)) and acct.balanced() and acct.bad == 0, (name, acct)
        usage = [m["metadata"]["usage"] for m in _lines(name) if "usage" in m.get("metadata", {})]
        assert result.session.usage.input_tokens == sum(u["input_tokens"] for u in usage), name
        assert result.session.usage.output_tokens == sum(u["output_tokens"] for u in usage), name
        assert len(result.usage) == len(usage), name


def test_native_tool_calls_results_and_edits() -> None:
    r = _read(LOGS)["basic"]
    s = r.session
    assert (s.title, s.version, s.models) == ("Stub session title", "0.35.1", ["local/stub-model"])
    assert s.cwd and s.cwd.endswith("/home/src/demo-app")
    assert s.first_prompt and s.first_prompt.startswith("[[S:gptme/basic]]")
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("shell", False), ("save", False), ("patch", False), ("shell", True), ("complete", False),
        ("shell", False), ("complete", False),
    ]  # fmt: skip
    assert tools[0].tool_use_id == "call_a34cc04abe92400c9c28" and tools[0].input == {"command": "ls -la && echo hello-from-stub"}
    assert tools[3].extra["exit_code"] == 1
    patch = tools[2].extra["edit"]["files"][0]
    assert patch["path"] == "notes.txt" and patch["hunks"][0]["lines"] == ["-beta", "+gamma"]
    assert tools[1].extra["edit"]["files"][0]["op"] == "create"
    assert [e.text for e in r.events if e.kind == "thinking"] == ["The user wants a tour: list files first."]
    nudges = [e for e in r.events if e.subtype == "auto_prompt"]
    assert len(nudges) == 2 and all(e.kind == "system" for e in nudges)
    assert s.messages == 9  # 2 prompts + 7 replies with text; the nudges are not prompts


def test_markdown_format_subagent_and_endings() -> None:
    read = _read(LOGS)
    md = read["markdown"]
    tools = [e for e in md.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["shell", "save", "patch", "shell"]
    assert [t.is_error for t in tools] == [False, False, False, True]
    assert tools[1].result == "Saved to notes.txt (overwritten)" and tools[1].input["path"] == "notes.txt"
    child = read["subagent-lister-48fp"].session
    assert child.parent is not None and child.parent.id == "subagent" and child.extra["subagent"]["agent_id"] == "lister"
    assert child.parent.tool_use_id == "call_4d6f228bd6394d57bfcb"  # the ipython call that ran subagent()
    spawn = next(e for e in read["subagent"].events if e.tool_use_id == child.parent.tool_use_id)
    assert spawn.extra["subagent"] == "subagent-lister-48fp"
    adapter = GptmeAdapter()
    unit = next(u for u in adapter.discover(LOGS) if "lister" in u.path)
    parent_log = str(LOGS / "subagent" / "conversation.jsonl")
    assert parent_log in unit.files and parent_log not in adapter.native_files(unit)
    assert child.usage.input_tokens == 21101  # what the parent's subagent() reported
    assert read["apierror"].session.ending == "error"
    cut = [e for e in read["interrupted"].events if e.extra.get("interrupted")]
    assert len(cut) == 1 and cut[0].text.endswith("^C Interrupted")
    assert read["interrupted"].session.ending is None  # the autonomous run went on after Ctrl-C


def test_reading_in_steps_stores_what_one_read_does(tmp_path: Path) -> None:
    adapter = GptmeAdapter()
    folder = tmp_path / "logs" / "basic"
    shutil.copytree(LOGS / "basic", folder, symlinks=True)
    src = LOGS / "basic" / "conversation.jsonl"
    (unit,) = list(adapter.discover(tmp_path / "logs"))
    once = read_once(adapter, unit, now=LATER)
    stepped = replay_growing_file(adapter, src, folder / "conversation.jsonl", line_cuts(src.read_bytes(), 3), unit, settled=True)
    assert stepped.snapshot() == once.snapshot()


def test_broken_lines_are_counted(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    shutil.copytree(LOGS / "basic", root / "basic", symlinks=True)
    log = root / "basic" / "conversation.jsonl"
    lines = log.read_text().splitlines()
    lines.insert(10, '{"role": "assistant", "content": "torn')
    lines.append('{"role": "user"')
    log.write_text("\n".join(lines))  # and the last one has no newline
    s = _read(root)["basic"].session
    assert s.bad_lines == 2 and s.truncated and s.accounting.lines == 31 and s.accounting.balanced()
    assert s.usage.input_tokens == 62070


def test_roots_and_resume(tmp_path: Path) -> None:
    adapter = GptmeAdapter()
    home = tmp_path / "h"
    assert adapter.default_roots({}, home)[0] == home / ".local" / "share" / "gptme" / "logs"
    assert adapter.default_roots({"XDG_DATA_HOME": str(tmp_path / "x")}, home) == [tmp_path / "x" / "gptme" / "logs"]
    assert adapter.default_roots({"GPTME_LOGS_HOME": str(tmp_path / "l")}, home) == [tmp_path / "l"]
    s = _read(LOGS)["basic"].session
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["gptme", "--resume", "--name=basic"] and cmd.cwd == s.cwd
