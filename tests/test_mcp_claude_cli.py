"""The real Claude Code CLI calls agtail's MCP tools by their real names and finds its own
earlier session.

Claude Code (the program, from npm) runs twice in `-p` mode with a throw-away HOME, talking to
the scripted stand-in model of bench/recording/ on 127.0.0.1 (as the corpus recordings were
made) and with `agtail mcp` as its MCP server (`--mcp-config`, stdio). The first run leaves a
session whose prompt holds a codeword; in the second, the model's script calls
``mcp__agtail__sessions_here``, ``mcp__agtail__search_sessions`` (the codeword) and
``mcp__agtail__add_label`` on its own session. What agtail answered is read back from the
requests Claude Code sent the model (each tool result is in the next request), and the label
from the store.

The CLI is large and comes from npm, so the test installs nothing: it runs the `claude` found
in $AGTAIL_HANDOFF_CLIS/claude-code (bench/recording/install_handoff_targets.sh) or on PATH,
and skips, naming the command that installs it, where there is none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.recording.stub_scripts import CODEWORD
from tests.test_handoff_targets import INSTALL, REPO, find_cli, stub

__all__ = ["stub"]


def claude(work: Path, home: Path, base: str, data: Path, prompt: str) -> dict[str, Any]:
    program = find_cli("claude-code", "claude")
    assert program is not None
    projects = home / ".claude" / "projects"
    server = {
        "command": sys.executable,
        "args": ["-c", "import sys; from agtaild.cli import main; sys.exit(main())", "mcp", "--data-dir", str(data),
                 "--only-roots", "--root", f"claude-code={projects}"],
        "env": {"PYTHONPATH": str(REPO), "HOME": str(home)},
    }  # fmt: skip
    config = work.parent / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"agtail": server}}))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": "sk-ant-stub",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }
    tools = "mcp__agtail__sessions_here mcp__agtail__search_sessions mcp__agtail__add_label"
    proc = subprocess.run(
        [program, "-p", prompt, "--output-format", "json", "--mcp-config", str(config), "--strict-mcp-config",
         "--allowedTools", tools, "--model", "claude-sonnet-4-5"],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return dict(json.loads(proc.stdout))


def tool_results(log: Path) -> dict[str, str]:
    """Each agtail tool's answer, by tool name, from the requests Claude Code sent the model."""
    names: dict[str, str] = {}
    out: dict[str, str] = {}
    for line in log.read_text().splitlines():
        body = json.loads(line).get("body") or {}
        for message in body.get("messages") or []:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result" and block.get("tool_use_id") in names:
                    text = block.get("content")
                    if isinstance(text, list):
                        text = "".join(x.get("text", "") for x in text if isinstance(x, dict))
                    out[names[block["tool_use_id"]]] = str(text)
    return out


def test_claude_code_finds_its_earlier_session_through_agtails_mcp_tools(stub: str, tmp_path: Path) -> None:
    if find_cli("claude-code", "claude") is None:
        pytest.skip(f"claude (Claude Code) is not installed: {INSTALL}")
    home, work, data = tmp_path / "home", tmp_path / "work", tmp_path / "agtail-data"
    home.mkdir()
    work.mkdir()
    first = claude(work, home, stub, data, f"[[S:claude/text]] Remember the codeword {CODEWORD}.")
    second = claude(
        work, home, stub, data, "[[S:claude/mcpfind]] Find the session where I gave you a codeword."
    )
    earlier, now = first["session_id"], second["session_id"]
    assert earlier != now
    said = tool_results(tmp_path / "requests.jsonl")
    assert set(said) == {
        "mcp__agtail__sessions_here",
        "mcp__agtail__search_sessions",
        "mcp__agtail__add_label",
    }, said
    assert f"claude-code:{earlier}" in said["mcp__agtail__sessions_here"]
    found = said["mcp__agtail__search_sessions"]
    assert found.startswith("1 match for") and f"- claude-code:{earlier} seq " in found, found
    labelled = said["mcp__agtail__add_label"]
    # Claude Code gives its MCP servers CLAUDE_CODE_SESSION_ID: the server knew whose it was.
    assert labelled.startswith(f"claude-code:{now} (found by the environment (CLAUDE_CODE_SESSION_ID))"), (
        labelled
    )
    assert "label found done" in labelled
    from agtaild.userstate.store import UserState

    st = UserState(data)
    try:
        assert st.of([("", "claude-code", now)])[("", "claude-code", now)]["labels"] == {"found": "earlier"}
        assert st.history(("", "claude-code", now))[0]["who"] == "agent"
    finally:
        st.close()
