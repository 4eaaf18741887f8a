"""A session id without its agent (issue 23, item 14): `show cd61be5e` finds the one session of
any agent whose id starts so; an id prefix that several agents' sessions share is a usage error
listing them as AGENT:ID. Everywhere an id is taken: show, tail, resume, export, search
--session, JSON-RPC, MCP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.params import METHOD_TABLE
from agtaild.cli import main
from agtaild.config import load_config
from agtaild.mcp import tools
from agtaild.query.service import Service
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL

CLAUDE_ID = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
#: A Claude session whose id starts like the Codex sessions of the corpus (all 01a229d7-…).
TWIN = "01a229d7-0000-4000-8000-000000000000"


@pytest.fixture
def roots(tmp_path: Path) -> list[str]:
    projects = tmp_path / "claude" / "projects"
    shutil.copytree(CLAUDE_REAL, projects)
    demo = projects / "-tmp-rt-claude-home-src-demo-app"
    shutil.copy(demo / f"{CLAUDE_ID}.jsonl", demo / f"{TWIN}.jsonl")
    return ["--data-dir", str(tmp_path / "data"), "--no-daemon", "--only-roots",
            "--root", f"claude-code={projects}", "--root", f"codex={CODEX_REAL}"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_tail_resume_export_and_search_take_a_bare_prefix(
    roots: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *roots, "show", "cd61be5e")
    assert code == 0, err
    assert out.startswith(f"claude-code:{CLAUDE_ID}  ")
    code, out, err = run(capsys, *roots, "--json", "tail", "cd61be5e", "-n", "2")
    assert code == 0, err
    assert json.loads(out)["session"]["id"] == CLAUDE_ID
    code, out, err = run(capsys, *roots, "--json", "resume", "cd61be5e", "--print")
    assert code == 0, err
    assert json.loads(out)["argv"] == ["claude", f"--resume={CLAUDE_ID}"]
    code, out, err = run(capsys, *roots, "--json", "export", "cd61be5e", "--to", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / "manifest.json").is_file()
    code, out, err = run(capsys, *roots, "--json", "search", "hello", "--session", "cd61be5e")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits and {h["session"]["id"] for h in hits} == {CLAUDE_ID}
    # The old form is unchanged, and a codex prefix finds codex's session alone.
    code, out, err = run(capsys, *roots, "show", f"claude-code:{CLAUDE_ID[:8]}")
    assert code == 0 and out.startswith(f"claude-code:{CLAUDE_ID}  ")
    code, out, err = run(capsys, *roots, "show", "01a229d7-c94c")
    assert code == 0 and out.startswith("codex:01a229d7-c94c-"), err


def test_export_on_a_fresh_index(roots: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The first command on a new data dir brings the index up to date first, as list does.
    code, _, err = run(capsys, *roots, "--json", "export", "cd61be5e", "--to", str(tmp_path / "out"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert CLAUDE_ID in json.dumps(manifest)


def test_a_prefix_several_agents_share_is_ambiguous(roots: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *roots, "show", "01a229d7")
    assert code == 2 and out == ""
    assert "ambiguous" in err and f"claude-code:{TWIN}" in err and "codex:01a229d7-c676-" in err
    code, out, err = run(capsys, *roots, "show", "ffffffff")
    assert code == 4 and "no session 'ffffffff'" in err
    # With the agent named, the same prefix means that agent's one session.
    code, out, err = run(capsys, *roots, "show", "claude-code:01a229d7")
    assert code == 0 and out.startswith(f"claude-code:{TWIN}  "), err


def test_json_rpc_and_mcp(roots: list[str], tmp_path: Path) -> None:
    # The parameter table takes an id without an agent for every method that names a session.
    for method in ("sessions.get", "events.list", "resume.command"):
        assert METHOD_TABLE[method].parse_json({"id": "cd61be5e"}) == {"id": "cd61be5e"}
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[roots[5], roots[7]], only_roots=True)
    svc = Service(config)
    try:
        svc.update_index()
        assert svc.call("sessions.get", {"id": "cd61be5e"})["session"]["agent"] == "claude-code"
        assert svc.call("resume.command", {"id": "cd61be5e"})["id"] == CLAUDE_ID
        with pytest.raises(Exception, match="ambiguous") as caught:
            svc.call("events.list", {"id": "01a229d7"})
        data: Any = getattr(caught.value, "data", None)
        assert f"claude-code:{TWIN}" in data["candidates"]
        tool = tools.BY_NAME["read_session"]
        text = tool.run(svc.call, tools.check_arguments(tool, {"id": "cd61be5e", "limit": 1}), None)
        assert text.startswith(f"Session claude-code:{CLAUDE_ID}\n")
    finally:
        svc.close()
