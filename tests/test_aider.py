"""Aider adapter: the real 0.86.2 history (7 runs), the synthetic 0.86.1 one (costs), hand-written
error/interrupt/kill endings as Part R of FORMATS-longtail describes them, incremental reads
cut at every line, and the index finding a repository's history through another agent's cwd."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.aider.adapter import AiderAdapter, file_digest, run_ids
from agtaild.adapters.aider.markdown import tokens_usage
from agtaild.adapters.base import Unit
from agtaild.cli import main
from tests.replay_helpers import Store, line_cuts, replay_growing_file

REAL = "real/aider-0.86.2"
REAL_FILE = f"{REAL}/demo-app/.aider.chat.history.md"
SYNTH = "aider/synthetic-agtail"
SYNTH_FILE = f"{SYNTH}/src/agtail-demo/.aider.chat.history.md"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> AiderAdapter:
    return AiderAdapter()


def runs(adapter: AiderAdapter, root: Path):
    return [adapter.read(u, None, now=LATER) for u in adapter.discover(root)]


def test_one_session_per_run_with_stable_ids(adapter: AiderAdapter, corpus: Path) -> None:
    units = list(adapter.discover(corpus / REAL))
    digest = file_digest(str(corpus / REAL_FILE))
    stamps = ["160428", "160433", "160436", "160439", "160443", "160447", "160452"]
    assert [u.path for u in units] == [f"{corpus / REAL_FILE}#{digest}-20261130T{s}" for s in stamps]
    assert units[0].files == [str(corpus / REAL_FILE), str(corpus / REAL / "demo-app/.aider.input.history")]
    # a repository, the history file itself and a folder above both work as --root
    assert [u.path for u in adapter.discover(corpus / REAL / "demo-app")] == [u.path for u in units]
    assert [u.path for u in adapter.discover(corpus / REAL_FILE)] == [u.path for u in units]
    # the same second twice: the second run gets a suffix
    ids = [r for r, _, _ in run_ids("/x/h.md", b"# aider chat started at 2026-01-01 10:00:00\n\n#### a\n"
                                     b"\n# aider chat started at 2026-01-01 10:00:00\n")]  # fmt: skip
    assert ids[1] == ids[0] + "-2"


def test_basic_run_events_usage_and_times(adapter: AiderAdapter, corpus: Path) -> None:
    r = runs(adapter, corpus / REAL)[0]
    s = r.session
    assert s.title == "Create hello.py, run it, and show a failing command. [[S:aider/basic]]"
    assert s.cwd == str(corpus / REAL / "demo-app") and s.project == "demo-app"
    assert s.models == ["openai/mock-model"] and s.version == "0.86.2"
    assert s.programmatic is True  # run with --message
    assert s.started is not None and s.started.endswith(":04:28.000Z")
    assert [(e.kind, e.role) for e in r.events] == [
        ("system", "system"), ("text", "user"), ("thinking", "assistant"),
        ("text", "assistant"), ("system", "system"),
    ]  # fmt: skip
    prompt, thinking, reply, out = r.events[1], r.events[2], r.events[3], r.events[4]
    assert prompt.ts is not None and prompt.ts.endswith(":04:31.000Z")  # from .aider.input.history
    assert (
        thinking.text
        == "The user wants a greeting script. Create it with a SEARCH/REPLACE block, then run it."
    )
    assert ">>>>>>> REPLACE" in reply.text and reply.text.endswith("```")  # an edit block stays in the reply
    assert out.text.startswith("Tokens: 2.4k sent, 166 received.") and "Applied edit to hello.py" in out.text
    # the unprefixed second line of the echoed shell commands belongs to Aider's output
    assert "sys.exit(3)" in out.text
    assert reply.usage is not None and (reply.usage.input_tokens, reply.usage.output_tokens) == (2400, 166)
    acct = s.accounting
    assert acct.balanced() and acct.metadata == 1
    body = (corpus / REAL_FILE).read_text().split("# aider chat started at")[1]
    assert acct.lines == 1 + sum(1 for ln in body.splitlines()[1:] if ln.strip())


def test_usage_equals_the_tokens_lines_and_cost_the_session_figure(
    adapter: AiderAdapter, corpus: Path
) -> None:
    text = (corpus / REAL_FILE).read_text()
    tokens = [ln for ln in text.splitlines() if ln.startswith("> Tokens:")]
    all_runs = runs(adapter, corpus / REAL)
    assert sum(len(r.usage) for r in all_runs) == len(tokens) == 5
    assert sum(r.session.usage.output_tokens for r in all_runs) == 166 + 141 + 65 + 47 + 25
    assert sum(r.session.usage.input_tokens for r in all_runs) == 2400 + 2800 + 2500 + 3000 + 3100
    synth = runs(adapter, corpus / SYNTH)
    assert synth[0].session.extra["agent_cost_usd"] == 0.03  # "… $0.03 session." of its last Tokens line
    assert synth[1].session.extra["agent_cost_usd"] == 0.0073
    replies = [e for e in synth[0].events if e.usage is not None]
    assert [e.extra["agent_cost_usd"] for e in replies] == [0.01, 0.01]
    usage, message, session = tokens_usage(
        "Tokens: 12k sent, 3.5k cache hit, 1.2k cache write, 300 received."
    )
    assert usage is not None and (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        7300,
        3500,
        1200,
    )
    assert (message, session) == (None, None)


def test_slash_commands_and_multi_line_input(adapter: AiderAdapter, corpus: Path) -> None:
    first, second = runs(adapter, corpus / SYNTH)
    users = [e for e in first.events if e.kind == "text" and e.role == "user"]
    assert [u.subtype for u in users] == ["command", None, "command", None]
    assert users[1].text == "The ls table columns are misaligned.\nFix the width calculation."
    assert first.session.title == "The ls table columns are misaligned."
    assert (
        first.session.models == ["anthropic/claude-sonnet-4-20250514"] and first.session.programmatic is False
    )
    assert second.session.ending is None  # it ends with /exit: not an unanswered prompt


ENDINGS = """
# aider chat started at 2026-11-30 16:05:00

> Aider v0.86.2
> Model: openai/mock-model with diff edit format

#### Trigger an error. [[S:aider/err400]]
> litellm.BadRequestError: OpenAIException - mock: this request is invalid

# aider chat started at 2026-11-30 16:05:10

> Aider v0.86.2

#### Stream then stop. [[S:aider/int]]
> ^C again to exit

Partial streamed te

# aider chat started at 2026-11-30 16:05:20

> Aider v0.86.2

#### /run python3 -c 'import time; time.sleep(60)'
"""


def test_error_interrupted_and_killed_runs(adapter: AiderAdapter, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    # Aider ends its "####" and "> " lines with two spaces
    lines = [ln + "  " if ln.startswith(("#### ", "> ")) else ln for ln in ENDINGS.split("\n")]
    (repo / ".aider.chat.history.md").write_text("\n".join(lines))
    err, intr, killed = runs(adapter, repo)
    assert err.session.ending == "error"
    assert next(e for e in err.events if e.is_error).text.startswith("litellm.BadRequestError")
    assert intr.session.ending == "interrupted"
    assert intr.events[-1].text == "Partial streamed te"  # Aider keeps the partial reply
    assert killed.session.ending == "interrupted" and killed.events[-1].subtype == "command"
    assert adapter.resume(killed.session) is not None and adapter.resume(err.session) is None


def test_resume_only_the_latest_run_of_its_file(adapter: AiderAdapter, corpus: Path, tmp_path: Path) -> None:
    all_runs = runs(adapter, corpus / REAL)
    assert [adapter.resume(r.session) is not None for r in all_runs] == [False] * 6 + [True]
    cmd = adapter.resume(all_runs[-1].session)
    assert cmd is not None and cmd.argv == ["aider", "--restore-chat-history"]
    assert cmd.cwd == str(corpus / REAL / "demo-app")
    custom = tmp_path / "notes.md"
    shutil.copy(corpus / SYNTH_FILE, custom)
    last = runs(adapter, custom)[-1]
    cmd = adapter.resume(last.session)
    assert cmd is not None and cmd.argv == [
        "aider",
        "--restore-chat-history",
        "--chat-history-file",
        str(custom),
    ]


def test_mirrored_copy_keeps_the_run_ids(adapter: AiderAdapter, corpus: Path, tmp_path: Path) -> None:
    unit = next(adapter.discover(corpus / REAL))
    rel = adapter.relative_path(unit, unit.files[0])
    assert rel == f"{file_digest(str(corpus / REAL_FILE))}/.aider.chat.history.md"
    mirror = tmp_path / "archive" / "aider"
    (mirror / rel).parent.mkdir(parents=True)
    shutil.copy(corpus / REAL_FILE, mirror / rel)
    native = [u.path.rsplit("#", 1)[1] for u in adapter.discover(corpus / REAL)]
    copied = [u.path.rsplit("#", 1)[1] for u in adapter.discover(mirror)]
    assert copied == native
    # each run keeps its own relative key (so the archive hides exactly the runs still native)
    keys = [adapter.relative_path(u, u.path) for u in adapter.discover(mirror)]
    assert keys == [adapter.relative_path(u, u.path) for u in adapter.discover(corpus / REAL)]
    assert len(set(keys)) == 7
    copy = next(adapter.discover(mirror))
    assert adapter.read(copy, None, now=LATER).session.cwd is None  # not the digest folder


@pytest.mark.parametrize("rel", [REAL_FILE, SYNTH_FILE])
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: AiderAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel
    dst = tmp_path / "repo" / ".aider.chat.history.md"
    dst.parent.mkdir()
    shutil.copy(src.parent / ".aider.input.history", dst.parent / ".aider.input.history")
    ids = [rid for rid, _, _ in run_ids(str(dst), src.read_bytes())]
    for rid in ids:
        dst.unlink(missing_ok=True)
        unit = Unit(agent="aider", path=f"{dst}#{rid}", files=[str(dst)], root=str(dst.parent),
                    hints={"file": str(dst), "run": rid})  # fmt: skip
        grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
        later = os.stat(dst).st_mtime + 100
        grown.apply(adapter.read(unit, grown.state, now=later))
        once = Store()
        once.apply(adapter.read(unit, None, now=later))
        assert grown.snapshot() == once.snapshot(), rid
        assert once.session["accounting"]["lines"] > 0


def test_index_finds_a_repository_through_another_agents_cwd(corpus: Path, tmp_path: Path, capsys) -> None:
    repo = tmp_path / "src" / "demo-app"
    (repo / ".git").mkdir(parents=True)
    shutil.copy(corpus / REAL_FILE, repo / ".aider.chat.history.md")
    # a Qwen session whose cwd is a folder inside that repository
    chats = tmp_path / "qwen" / "projects" / "-x" / "chats"
    chats.mkdir(parents=True)
    src = corpus / "real/qwen-0.15.10/projects/-tmp-rt-qwen-home-src-demo-app/chats"
    text = (src / "71f3d6dc-4f49-4116-bbb0-74b6299299e8.jsonl").read_text()
    (chats / "71f3d6dc-4f49-4116-bbb0-74b6299299e8.jsonl").write_text(
        text.replace("/tmp/rt/qwen/home/src/demo-app", str(repo / "pkg"))
    )
    args = [
        "--json",
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--root",
        f"qwen={tmp_path / 'qwen'}",
    ]
    assert main([*args, "index"]) == 0
    capsys.readouterr()
    assert main([*args, "list", "--agent", "aider"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert len(listed) == 7 and {s["cwd"] for s in listed} == {str(repo)}
    # --only-roots reads the given roots only: no repository is looked for
    assert main([*args, "--only-roots", "list", "--agent", "aider"]) == 0
    capsys.readouterr()
    data2 = ["--json", "--no-daemon", "--data-dir", str(tmp_path / "data2"), "--only-roots"]
    assert main([*data2, "--root", f"qwen={tmp_path / 'qwen'}", "index"]) == 0
    capsys.readouterr()
    assert main([*data2, "--root", f"qwen={tmp_path / 'qwen'}", "list", "--agent", "aider"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == []
