"""CodeBuddy Code on its real recording (tests/corpus/real/codebuddy-2.163.0, 2.163.0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.codebuddy import CodeBuddyAdapter
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

PROJECTS = Path(__file__).parent / "corpus" / "real" / "codebuddy-2.163.0" / "projects"
SLUG = PROJECTS / "tmp-agents2-rec-codebuddy-2.163.0-home-src-demo-app"
BASIC, APIERROR, SUBAGENT = (
    "01a233f8-aed1-72a0-83a8-800eccf3a709", "01a233f9-94cd-7f55-9264-93d537e27eba", "01a233f9-e6e8-7132-8771-3ff25b7bd125"
)  # fmt: skip
CHILD = "agent-77c40c7b-a2dc-4cfb-a38c-3a8df9983955"
LATER = 4_000_000_000.0


def _read(root: Path) -> dict:
    adapter = CodeBuddyAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_session_line_and_request_of_the_recording() -> None:
    read = _read(PROJECTS)
    files = sorted(SLUG.rglob("*.jsonl"))
    assert len(read) == len(files) == 6
    for path in files:
        result = read[path.stem]
        lines = _lines(path)
        acct = result.session.accounting
        assert acct.lines == len(lines) and acct.balanced() and acct.bad == 0, (path.name, acct)
        requests = {}
        for rec in lines:
            pd = rec.get("providerData") or {}
            if "usage" in pd:
                requests.setdefault(pd["messageId"], pd["usage"])
        assert result.session.usage.input_tokens == sum(u["inputTokens"] for u in requests.values()), path.name
        assert result.session.usage.output_tokens == sum(u["outputTokens"] for u in requests.values()), path.name
        assert len(result.usage) == len(requests), path.name
    assert read[BASIC].session.usage.input_tokens == 57892


def test_basic_session_tools_results_and_the_continue() -> None:
    r = _read(PROJECTS)[BASIC]
    s = r.session
    assert s.title and s.title.startswith("[[S:codebuddy/basic]]") and s.models == ["stub-model"]
    assert s.cwd and s.cwd.endswith("/home/src/demo-app")
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [(t.tool, t.is_error) for t in tools] == [
        ("Bash", False), ("Write", False), ("Edit", False), ("Bash", True), ("Bash", False)
    ]  # fmt: skip
    assert tools[3].extra["exit_code"] == 1 and tools[2].input == {"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}
    assert tools[1].extra["edit"]["files"][0]["op"] == "create"
    assert [e.text for e in r.events if e.kind == "thinking"] == ["The user wants a tour: list files first."]
    prompts = [e.text for e in r.events if e.kind == "text" and e.role == "user"]
    assert len(prompts) == 2 and prompts[1].startswith("[[S:codebuddy/continue]]")  # --continue appended here


def test_subagent_endings_and_resume() -> None:
    read = _read(PROJECTS)
    child = read[CHILD].session
    assert child.parent is not None and child.parent.id == SUBAGENT
    spawn = next(e for e in read[SUBAGENT].events if e.tool == "Agent")
    assert child.parent.tool_use_id == spawn.tool_use_id == "call_95e63f41e87849309733"
    assert spawn.extra["subagent"] == CHILD
    assert read[APIERROR].session.ending == "error"
    assert read["01a233fa-52eb-76dd-ba93-edc27108b525"].session.ending == "interrupted"  # SIGINT
    assert read["01a233fa-b55b-74a4-b3c2-033f80089ffa"].session.ending == "interrupted"  # SIGKILL in a call
    assert read[BASIC].session.ending is None
    adapter = CodeBuddyAdapter()
    cmd = adapter.resume(read[BASIC].session)
    assert cmd is not None and cmd.argv == ["codebuddy", f"--resume={BASIC}"]
    assert adapter.resume(child) is None
    unit = next(u for u in adapter.discover(PROJECTS) if CHILD in u.path)
    assert str(SLUG / f"{SUBAGENT}.jsonl") in unit.files and adapter.native_files(unit) == [unit.path]


def test_a_waiting_session_is_not_interrupted_while_fresh(tmp_path: Path) -> None:
    adapter = CodeBuddyAdapter()
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    shutil.copy(SLUG / "01a233fa-b55b-74a4-b3c2-033f80089ffa.jsonl", folder)
    (unit,) = list(adapter.discover(tmp_path / "projects"))
    mtime = (folder / "01a233fa-b55b-74a4-b3c2-033f80089ffa.jsonl").stat().st_mtime
    assert adapter.read(unit, None, now=mtime + 10).session.ending is None
    assert adapter.read(unit, None, now=mtime + 500).session.ending == "interrupted"


def test_steps_and_broken_lines(tmp_path: Path) -> None:
    adapter = CodeBuddyAdapter()
    src = SLUG / f"{BASIC}.jsonl"
    dst = tmp_path / "projects" / "p" / src.name
    dst.parent.mkdir(parents=True)
    dst.write_bytes(src.read_bytes())
    (unit,) = list(adapter.discover(tmp_path / "projects"))
    once = read_once(adapter, unit, now=LATER)
    stepped = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes(), 2), unit, settled=True)
    assert stepped.snapshot() == once.snapshot()
    lines = src.read_text().splitlines()
    dst.write_text("\n".join([*lines[:5], '{"type": "message", "role":', *lines[5:]]) + "\n")
    s = adapter.read(unit, None, now=LATER).session
    assert s.bad_lines == 1 and s.accounting.lines == 26 and s.usage.input_tokens == 57892


def test_roots() -> None:
    adapter = CodeBuddyAdapter()
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.codebuddy/projects")]
    assert adapter.default_roots({"CODEBUDDY_CONFIG_DIR": "/c"}, Path("/h")) == [Path("/c/projects")]
