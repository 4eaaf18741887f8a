"""Gemini CLI adapter: facts checked by eye on the real 0.61.0 recordings, the synthetic JSONL
log and the legacy JSON document in tests/corpus/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.gemini.adapter import GeminiAdapter
from agtaild.model import Event
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

REAL = "real/gemini-0.61.0/tmp"
REAL_CHATS = "real/gemini-0.61.0/tmp/demo-app/chats"
BASIC = f"{REAL_CHATS}/session-2026-11-30T00-28-3ebd1d67.jsonl"
RESUMED = f"{REAL_CHATS}/session-2026-11-30T00-28-04fb9a5f.jsonl"
PARENT = f"{REAL_CHATS}/session-2026-11-30T00-28-7c5ed68e.jsonl"
CHILD = f"{REAL_CHATS}/7c5ed68e-0f43-4e3d-b95a-048b0aef1d45/92dbb866-1d60-40fe-a125-8bdb3b3b4a4e.jsonl"
SYNTH = "gemini/synthetic-agtail/.gemini/tmp/agtail-demo/chats/session-2026-05-02T09-14-3f2a9c1d.jsonl"
LEGACY = "gemini/entireio-cli/.gemini/tmp/deadbeef/chats/session-2026-03-18T21-05-attr-ses.json"
DEMO_APP = "/tmp/rt/gemini/home/src/demo-app"
LATER = 4_000_000_000.0  # "now" long after every sample was written


@pytest.fixture
def adapter() -> GeminiAdapter:
    return GeminiAdapter()


def units_by_path(adapter: GeminiAdapter, root: Path) -> dict[str, Unit]:
    return {u.path: u for u in adapter.discover(root)}


def read(adapter: GeminiAdapter, corpus: Path, rel: str, root: str = REAL):
    unit = units_by_path(adapter, corpus / root)[str(corpus / rel)]
    return adapter.read(unit, None, now=LATER)


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def test_discovers_main_sessions_subagents_and_legacy_documents(adapter: GeminiAdapter, corpus: Path) -> None:
    real = units_by_path(adapter, corpus / REAL)
    assert sorted(real) == sorted(str(corpus / p) for p in (BASIC, RESUMED, PARENT, CHILD))
    assert real[str(corpus / CHILD)].hints == {"parent": "7c5ed68e-0f43-4e3d-b95a-048b0aef1d45"}
    assert str(corpus / "real/gemini-0.61.0/tmp/demo-app/.project_root") in real[str(corpus / BASIC)].files
    legacy = list(adapter.discover(corpus / "gemini/entireio-cli/.gemini/tmp"))
    assert [u.path for u in legacy] == [str(corpus / LEGACY)]
    # logs.json and the checkpoint files beside chats/ are not sessions
    synth = list(adapter.discover(corpus / "gemini/synthetic-agtail/.gemini/tmp"))
    assert [u.path for u in synth] == [str(corpus / SYNTH)]
    # --root may also name ~/.gemini itself
    assert len(list(adapter.discover(corpus / "real/gemini-0.61.0"))) == 4


def test_basic_session_summary_tools_and_usage(adapter: GeminiAdapter, corpus: Path) -> None:
    res = read(adapter, corpus, BASIC)
    s = res.session
    assert s.id == "3ebd1d67-ed0a-4818-bb4f-51583e832c65"
    assert s.title == "Create hello.py, run it, add a Japanese greeting. [[S:gemini/basic]]"
    assert s.first_prompt == s.title
    assert s.cwd == DEMO_APP and s.project == "demo-app"
    assert s.models == ["gemini-3.8-flash"]
    assert (s.started, s.ended) == ("2026-11-30T00:28:50.220Z", "2026-11-30T00:28:50.891Z")
    assert s.ending is None and not s.truncated and s.bad_lines == 0
    assert s.accounting.balanced() and s.accounting.lines == 41
    # the injected <session_context> is context, not the person's prompt
    assert res.events[0].kind == "system" and res.events[0].subtype == "context"
    assert res.events[0].text is not None and res.events[0].text.startswith("<session_context>")
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]
    assert prompts == ["Create hello.py, run it, add a Japanese greeting. [[S:gemini/basic]]"]
    # each tool call carries its own result; the duplicated functionResponse user lines add nothing
    assert "tool_result" not in kinds(res.events)
    tools = [e for e in res.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == [
        "run_shell_command",
        "write_file",
        "read_file",
        "replace",
        "run_shell_command",
        "read_file",
        "run_shell_command",
    ]
    assert tools[4].input == {"command": "python3 hello.py", "description": "Run the script"}
    assert "Hello, world! こんにちは、worldさん" in tools[4].result
    assert tools[5].is_error is True
    assert tools[5].result == f"File not found: {DEMO_APP}/does-not-exist.txt"
    assert tools[6].is_error is False and "Exit Code: 3" in tools[6].result
    assert [e.text for e in res.events if e.kind == "thinking"] == [
        "**Inspecting the project** List the files first.",
        "**Editing** Switch to an f-string with a Japanese greeting.",
    ]
    # 8 gemini responses, each: input 1234 (800 of them cached), output 56, thoughts 12
    assert len(res.usage) == 8
    assert (s.usage.input_tokens, s.usage.cache_read_tokens) == (8 * 434, 8 * 800)
    assert (s.usage.output_tokens, s.usage.reasoning_tokens) == (8 * 68, 8 * 12)
    assert s.usage.total_tokens == 8 * (434 + 68 + 800)
    assert [e.seq for e in res.events] == list(range(len(res.events)))


def test_resume_rewrite_keeps_the_earlier_turns(adapter: GeminiAdapter, corpus: Path) -> None:
    """Two `--resume`s: each appends a header, a $set.messages reset and a rebuilt history
    whose timestamps are the resume time and which has no tokens, thoughts or tool calls."""
    res = read(adapter, corpus, RESUMED)
    s = res.session
    assert s.id == "04fb9a5f-0d54-439b-8e71-b38fadda5034"
    assert s.extra["resumes"] == 2
    prompts = [e.text for e in res.events if e.kind == "text" and e.role == "user"]
    assert prompts == [
        "README を書いてください。 [[S:gemini/mt1]]",
        "English and Japanese please. [[S:gemini/mt2]]",
        "Double-check it. [[S:gemini/mt3]]",
    ]
    first_reply = next(
        e for e in res.events if e.uuid == "b654bf61-730b-4d8b-8c5b-e2ac758ecea9" and e.kind == "text"
    )
    assert first_reply.ts == "2026-11-30T00:28:54.658Z"  # not the resume time
    assert first_reply.usage is not None and first_reply.usage.cache_read_tokens == 800
    assert any(e.kind == "thinking" and e.text == "**Clarifying**" for e in res.events)
    resume_times = {"2026-11-30T00:28:56.464Z", "2026-11-30T00:28:56.471Z", "2026-11-30T00:28:58.388Z"}
    assert not [e for e in res.events if e.ts in resume_times and e.kind != "system"]
    assert not [e for e in res.events if e.uuid and e.uuid.endswith("_response")]
    writes = [e for e in res.events if e.tool == "write_file"]
    assert len(writes) == 1 and "Successfully created" in writes[0].result
    assert len(res.usage) == 5 and s.messages == 8
    assert len([e for e in res.events if e.subtype == "context"]) == 1
    assert s.accounting.balanced() and s.accounting.lines == 32


def test_subagent_is_a_child_of_its_parent(adapter: GeminiAdapter, corpus: Path) -> None:
    child = read(adapter, corpus, CHILD).session
    parent = read(adapter, corpus, PARENT)
    assert child.id == "92dbb866-1d60-40fe-a125-8bdb3b3b4a4e"
    assert child.parent is not None
    assert child.parent.id == parent.session.id == "7c5ed68e-0f43-4e3d-b95a-048b0aef1d45"
    assert child.parent.tool_use_id == "invoke_agent__invoke_agent_1795998532514_0"
    spawn = next(e for e in parent.events if e.tool == "invoke_agent")
    assert spawn.tool_use_id == child.parent.tool_use_id
    assert spawn.extra["subagent_id"] == child.id
    assert "hello.py has 6 lines." in spawn.result
    assert (
        child.title
        == "Count the lines of hello.py in the project directory and report the number. [[S:gemini/sub-inner]]"
    )
    assert child.extra["kind"] == "subagent" and child.cwd == DEMO_APP
    assert child.ending is None  # it ended with complete_task
    assert adapter.resume(child) is None and not child.resumable
    cmd = adapter.resume(parent.session)
    assert cmd is not None and cmd.argv == ["gemini", f"--resume={parent.session.id}"] and cmd.cwd == DEMO_APP


def test_synthetic_log_patches_and_reappended_messages(adapter: GeminiAdapter, corpus: Path) -> None:
    res = read(adapter, corpus, SYNTH, root="gemini/synthetic-agtail/.gemini/tmp")
    s = res.session
    assert s.title == "Fix parseDuration millisecond conversion"  # from the last $set.summary
    assert s.ended == "2026-05-02T09:15:31.903Z"  # a $set.lastUpdated
    assert s.cwd == "/home/dev/src/agtail-demo"
    assert s.models == ["gemini-2.5-pro", "gemini-2.5-flash"]
    # f3d2c1b0 is written with tokens:null, then re-appended with tokens: one event, one record
    answer = [e for e in res.events if e.uuid == "f3d2c1b0-a9e8-4d7c-8b6a-5f4e3d2c1b0a"]
    assert kinds(answer) == ["text"] and answer[0].usage is not None
    rec = next(r for r in res.usage if r.key == "f3d2c1b0-a9e8-4d7c-8b6a-5f4e3d2c1b0a")
    assert (rec.usage.input_tokens, rec.usage.cache_read_tokens, rec.usage.output_tokens) == (674, 9216, 61)
    assert rec.model == "gemini-2.5-pro"
    info = next(e for e in res.events if e.kind == "system")
    assert info.subtype == "info" and info.text == "Refreshed memory. Loaded 1 GEMINI.md file."
    assert s.accounting.merged == 1 and s.accounting.balanced()


def test_legacy_json_document(adapter: GeminiAdapter, corpus: Path) -> None:
    res = read(adapter, corpus, LEGACY, root="gemini/entireio-cli/.gemini/tmp")
    s = res.session
    assert s.id == "attr-session-1" and s.cwd is None  # placeholder project dir, no registry
    assert s.title == "Run the tests and read src/a.go"
    assert s.accounting.lines == 8 and s.accounting.metadata == 1 and s.accounting.balanced()
    glob = next(e for e in res.events if e.tool == "glob")
    assert glob.input == {"pattern": "**/*.go", "path": "src"}
    assert glob.result == 'Found 1 file(s) matching "**/*.go":\nsrc/a.go'
    assert glob.source == {"row": 5}
    # tool tokens count as input, thoughts as (reasoning inside) output
    first = next(r for r in res.usage if r.key == "msg-gemini-1")
    assert (first.usage.input_tokens, first.usage.output_tokens, first.usage.reasoning_tokens) == (
        500,
        100,
        60,
    )
    assert len(res.usage) == 3 and s.usage.input_tokens == 2650
    assert res.state is None and res.reset


def test_migrated_legacy_document_is_read_once(adapter: GeminiAdapter, corpus: Path, tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(corpus / LEGACY, chats / "session-x-attr.json")
    shutil.copy(corpus / SYNTH, chats / "session-x-attr.jsonl")
    assert [Path(u.path).name for u in adapter.discover(tmp_path / "tmp")] == ["session-x-attr.jsonl"]


@pytest.mark.parametrize("rel", [BASIC, RESUMED, PARENT, CHILD, SYNTH])
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: GeminiAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel
    dst = tmp_path / rel
    unit = Unit(agent="gemini", path=str(dst), files=[str(dst)], root=str(tmp_path))
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    once = read_once(adapter, unit, now=os.stat(dst).st_mtime + 100)
    assert grown.snapshot() == once.snapshot()
    assert (once.session["parent"] is not None) == (rel == CHILD)


def test_line_by_line_reads_continue_without_rereading(
    adapter: GeminiAdapter, corpus: Path, tmp_path: Path
) -> None:
    """Re-appended messages (tool calls arrive later) are upserts of the same seqs."""
    dst = tmp_path / "s.jsonl"
    unit = Unit(agent="gemini", path=str(dst), files=[str(dst)], root=str(tmp_path))
    state, resets = None, 0
    with open(dst, "wb") as fh:
        for line in (corpus / BASIC).read_bytes().splitlines(keepends=True):
            fh.write(line)
            fh.flush()
            res = adapter.read(unit, state, now=os.stat(dst).st_mtime + 1)
            state, resets = res.state, resets + res.reset
    assert resets == 1


def test_rewind_marks_instead_of_deleting(adapter: GeminiAdapter, corpus: Path, tmp_path: Path) -> None:
    dst = tmp_path / "tmp" / "p" / "chats" / "session-2026-05-02T09-14-3f2a9c1d.jsonl"
    dst.parent.mkdir(parents=True)
    shutil.copy(corpus / SYNTH, dst)
    unit = next(iter(adapter.discover(tmp_path / "tmp")))
    first = adapter.read(unit, None, now=LATER)
    with open(dst, "ab") as fh:
        fh.write(b'{"$rewindTo":"8c7b6a59-4837-4261-9a0b-1c2d3e4f5a6b"}\n')
    again = adapter.read(unit, first.state, now=LATER)
    assert again.reset  # the patch reaches into an earlier read: read from the start
    rewound = [e.text or e.tool for e in again.events if e.extra.get("rewound")]
    assert rewound == [
        "Run the whole test suite once more.",
        "run_shell_command",
        "All 31 tests in 4 files pass.",
    ]
    assert len(again.events) == len(first.events)
    assert again.session.extra["rewinds"] == 1 and again.session.accounting.balanced()


def test_bad_and_torn_lines_are_counted(adapter: GeminiAdapter, corpus: Path, tmp_path: Path) -> None:
    lines = (corpus / BASIC).read_bytes().splitlines(keepends=True)
    dst = tmp_path / "s.jsonl"
    dst.write_bytes(b"".join([*lines[:5], b"{not json\n", *lines[5:], b'{"id":"torn","ty']))
    unit = Unit(agent="gemini", path=str(dst), files=[str(dst)], root=str(tmp_path))
    s = adapter.read(unit, None, now=LATER).session
    assert s.bad_lines == 2 and s.bad_line_numbers == [6, 43] and s.truncated
    assert s.accounting.lines == 43 and s.accounting.balanced()
    # still being written: the torn tail is left for the next read
    live = adapter.read(unit, None, now=os.stat(dst).st_mtime + 0.5).session
    assert live.bad_lines == 1 and not live.truncated


@pytest.mark.parametrize(
    ("cut_after", "ending"),
    [
        (3, "interrupted"),  # the prompt was never answered
        (34, "interrupted"),  # SIGINT: ends after a functionResponse line
        (35, "interrupted"),  # killed during a tool: an empty reply, its calls never written
        (41, None),
    ],
)
def test_interrupted_ending(
    adapter: GeminiAdapter, corpus: Path, tmp_path: Path, cut_after: int, ending: str | None
) -> None:
    lines = (corpus / BASIC).read_bytes().splitlines(keepends=True)
    dst = tmp_path / "s.jsonl"
    dst.write_bytes(b"".join(lines[:cut_after]))
    unit = Unit(agent="gemini", path=str(dst), files=[str(dst)], root=str(tmp_path))
    assert adapter.read(unit, None, now=LATER).session.ending == ending
    assert adapter.read(unit, None, now=os.stat(dst).st_mtime + 0.5).session.ending is None


def test_project_dir_resolved_without_project_root(
    adapter: GeminiAdapter, corpus: Path, tmp_path: Path
) -> None:
    """projects.json maps the slug; pre-0.29 dirs are named by sha256(project root)."""
    home = tmp_path / ".gemini"
    shutil.copytree(corpus / "real/gemini-0.61.0", home)
    (home / "tmp/demo-app/.project_root").chmod(0o600)
    (home / "tmp/demo-app/.project_root").unlink()
    by_slug = [adapter.read(u, None, now=LATER).session.cwd for u in adapter.discover(home / "tmp")]
    assert by_slug == [DEMO_APP] * 4
    digest = "4a7a35ab28843ef35ae009f1d79503345d58567f126fa1192f1f8e0f50194959"
    (home / "tmp/demo-app").rename(home / "tmp" / digest)
    by_hash = [adapter.read(u, None, now=LATER).session for u in adapter.discover(home / "tmp")]
    assert [s.cwd for s in by_hash] == [DEMO_APP] * 4 and by_hash[0].project == "demo-app"


def test_default_roots_follow_gemini_cli_home(adapter: GeminiAdapter, tmp_path: Path) -> None:
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".gemini" / "tmp"]
    assert adapter.default_roots({"GEMINI_CLI_HOME": "/x/y"}, tmp_path) == [Path("/x/y/.gemini/tmp")]
    assert list(adapter.discover(tmp_path / "missing")) == []
