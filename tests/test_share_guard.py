"""What sharing must never let out, and the input it must refuse.

A session with a planted key (a GitHub token and an Anthropic key, in the prompt, a command,
a tool's output, the answer and an edit) is exported in every format, through the CLI, the
API and the MCP tool, and briefed: the keys never appear, their masks do. Then the bad input
of a handoff: an id prefix that names two sessions, an imported copy (no launch, printing
allowed), a directory that is gone.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.config import Config, RootSpec
from agtaild.mcp.handlers import run_tool
from agtaild.query.service import Service
from agtaild.share import brief
from agtaild.share.export import FORMATS, export
from agtaild.share.gather import open_session
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

REPO = Path(__file__).resolve().parent.parent
CLAUDE = REPO / "tests/corpus/real/claude-2.1.197/projects"
TASKS = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"
#: Made-up keys in the shapes the scanner knows (agtaild/secrets): never real ones.
GITHUB = "ghp_Zq8vN3kLm2Pw7Rt5Yx1Bc4Df6Gh9Jk0Ls2Aq"
ANTHROPIC = "sk-ant-api03-" + "Q" * 20 + "aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bD5fH7jK9mP1rT3vX5zB7dF9hK1mQ3sV5xZ7bD9fH1k-AAAA"
KEYS = (GITHUB, ANTHROPIC, GITHUB[4:-4], ANTHROPIC[14:-6])


def _toy_session(root: Path, cwd: Path, sid: str) -> None:
    ts = "2026-01-01T10:00:0{}Z".format
    write_session(root / f"{sid}.jsonl", [
        toy_line(t="meta", id=sid, cwd=str(cwd)),
        toy_line(t="msg", role="user", text=f"Deploy with GITHUB_TOKEN={GITHUB} please", ts=ts(1)),
        toy_line(t="tool", id="c1", name="Bash", input={"command": f"curl -H 'x-api-key: {ANTHROPIC}' https://api.example"}, ts=ts(2)),
        toy_line(t="result", id="c1", output=f"echoed {ANTHROPIC} back", ts=ts(3)),
        toy_line(t="tool", id="c2", name="Write", input={"file_path": f"{cwd}/.env", "content": f"TOKEN={GITHUB}\n"}, ts=ts(4)),
        toy_line(t="result", id="c2", output="written", ts=ts(5)),
        toy_line(t="msg", role="assistant", text=f"Done; the token {GITHUB} is in .env", ts=ts(6)),
    ])  # fmt: skip


def _claude_session(projects: Path, cwd: Path) -> None:
    """A Claude Code session whose Edit writes the key into a file (a diff holds it)."""
    base = {"sessionId": "1eaf0000-0000-4000-8000-000000000001", "cwd": str(cwd), "version": "2.1.197", "isSidechain": False}
    line = lambda **doc: json.dumps({**doc, **base})  # noqa: E731
    lines = [
        line(type="user", uuid="u1", parentUuid=None, timestamp="2026-11-30T10:00:00.000Z",
             message={"role": "user", "content": "Put the token in config.py"}),
        line(type="assistant", uuid="a1", parentUuid="u1", timestamp="2026-11-30T10:00:01.000Z",
             message={"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1, "output_tokens": 1},
                      "content": [{"type": "tool_use", "id": "toolu_1", "name": "Edit",
                                   "input": {"file_path": f"{cwd}/config.py", "old_string": "TOKEN = None", "new_string": f"TOKEN = '{GITHUB}'"}}]}),
        line(type="user", uuid="u2", parentUuid="a1", timestamp="2026-11-30T10:00:02.000Z",
             message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "The file was updated."}]}),
        line(type="assistant", uuid="a2", parentUuid="u2", timestamp="2026-11-30T10:00:03.000Z",
             message={"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1, "output_tokens": 1},
                      "content": [{"type": "text", "text": "Done."}]}),
    ]  # fmt: skip
    folder = projects / "-leaky"
    folder.mkdir(parents=True)
    (folder / f"{base['sessionId']}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def planted(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    _toy_session(tmp_path / "root", tmp_path, "leaky")
    _claude_session(tmp_path / "claude", tmp_path)
    svc = Service(Config(data_dir=str(tmp_path / "data"), archive=False,
                         roots=[RootSpec("toy", str(tmp_path / "root")), RootSpec("claude-code", str(tmp_path / "claude"))]))
    svc.update_index()
    yield svc
    svc.close()


def reading_call(svc: Service) -> Any:
    from agtaild.share.gather import reading

    return reading(svc)


def assert_masked(text: str) -> None:
    assert "«secret:github-pat" in text and "«secret:anthropic" in text, text[:2000]
    for key in KEYS:
        assert key not in text


def test_every_format_and_the_brief_mask_a_planted_key(planted: Service) -> None:
    # The service masks its answers; an in-process caller may ask it not to. The writers mask
    # by themselves as well: fed the revealed events, what they write is masked all the same.
    def revealed(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return planted.call(method, params, reveal=True)

    raw = json.dumps(revealed("events.list", {"agent": "toy", "id": "leaky", "limit": 100}))
    assert GITHUB in raw and ANTHROPIC in raw
    for call in (planted.call, revealed, reading_call(planted)):
        for fmt in FORMATS:
            out = io.StringIO()
            report = export(call, "toy", "leaky", fmt, out)
            assert report["secrets_masked"] is True
            assert_masked(out.getvalue())
        for redact_paths in (False, True):
            out = io.StringIO()
            export(call, "toy", "leaky", "md", out, redact_paths=redact_paths, depth=0)
            assert_masked(out.getvalue())
        assert_masked(brief.build(open_session(call, "toy", "leaky"), target="Codex CLI"))
        assert_masked(brief.build(open_session(call, "toy", "leaky"), max_tokens=200))
        # an edit's diff holds the key (the brief's "last change to each file", the documents' diffs)
        assert GITHUB in json.dumps(revealed("events.list", {"agent": "claude-code", "id": "1eaf0000", "limit": 10}))
        texts = [brief.build(open_session(call, "claude-code", "1eaf0000"))]
        for fmt in FORMATS:
            out = io.StringIO()
            export(call, "claude-code", "1eaf0000", fmt, out)
            texts.append(out.getvalue())
        for text in texts:
            assert "«secret:github-pat" in text and GITHUB[4:-4] not in text
        assert "```diff" in texts[0] and "+TOKEN = '«secret:github-pat" in texts[0]
    text, is_error = run_tool(planted.call, "handoff_brief", {"id": "toy:leaky", "to": "codex"}, None)
    assert not is_error
    assert_masked(text)


async def test_the_api_download_is_masked(planted: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(planted, methods=METHODS, security=Security("t" * 32)))
    for fmt in FORMATS:
        resp = await client.get(f"/api/v1/sessions/toy/leaky/export?format={fmt}", headers={"Authorization": "Bearer " + "t" * 32})
        assert resp.status == 200
        assert_masked(await resp.text())


def _cli(data: Path, *roots: str) -> list[str]:
    args = ["--no-daemon", "--data-dir", str(data), "--only-roots"]
    for root in roots:
        args += ["--root", root]
    return args


def test_an_ambiguous_prefix_names_its_candidates(tmp_path: Path, toy_registry: ToyAdapter, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    for sid in ("abc111", "abc222"):
        _toy_session(tmp_path / "root", tmp_path, sid)
    argv = _cli(tmp_path / "data", f"toy={tmp_path / 'root'}")
    assert main([*argv, "handoff", "toy:abc", "--print"]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and "abc111" in err and "abc222" in err
    assert main([*argv, "export", "toy:abc", "--format", "md"]) == 2
    assert main([*argv, "handoff", "toy:abc1", "--print"]) == 0
    assert capsys.readouterr().out.startswith("# Handoff")


def test_an_imported_session_is_briefed_but_not_launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    src = CLAUDE / "-tmp-rt-claude-home-src-demo-app" / f"{TASKS}.jsonl"
    dest = data / "imported" / "laptop" / "claude-code" / "-tmp-rt-claude-home-src-demo-app"
    dest.mkdir(parents=True)
    shutil.copy2(src, dest / src.name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    codex = bin_dir / "codex"
    codex.write_text("#!/bin/sh\ntouch \"$0.ran\"\n")
    codex.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    work = tmp_path / "work"
    work.mkdir()
    empty = tmp_path / "no-live-sessions"
    empty.mkdir()
    argv = _cli(data, f"claude-code={empty}")
    assert main([*argv, "handoff", f"claude-code:{TASKS[:8]}", "--to", "codex", "--launch", "--cwd", str(work)]) == 3
    err = capsys.readouterr().err
    assert "imported from collection 'laptop'" in err and "--print" in err
    assert not (bin_dir / "codex.ran").exists()
    assert main([*argv, "handoff", f"claude-code:{TASKS[:8]}", "--to", "codex", "--print"]) == 0
    assert "- [x] Add tests" in capsys.readouterr().out


def test_the_header_carries_the_users_labels_and_star(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _cli(tmp_path / "data", f"claude-code={CLAUDE}")
    assert main([*argv, "label", "claude-code:cd61be5e", "bug-report", "team=web"]) == 0
    assert main([*argv, "star", "claude-code:cd61be5e"]) == 0
    capsys.readouterr()
    assert main([*argv, "export", "claude-code:cd61be5e", "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "| Labels | bug-report, team=web |" in text and "| Starred | yes |" in text
    assert main([*argv, "export", "claude-code:cd61be5e", "--format", "html"]) == 0
    assert "<tr><td>Labels</td><td>bug-report, team=web</td></tr>" in capsys.readouterr().out
