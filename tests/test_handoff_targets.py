"""`agtail handoff --launch` starts the real target CLI: the target's own transcript begins
with the brief, in the directory it was given.

A real Claude Code recording (the sample corpus) is handed to Codex CLI, Gemini CLI and
OpenCode, each the real program, run on a pseudo-terminal (they are interactive) with a
throw-away HOME and talking to the scripted stand-in model of bench/recording/ on 127.0.0.1,
as the corpus recordings were made. agtail then reads the target's store like any other and
finds a session in that directory whose first prompt is the brief.

The CLIs are large and come from npm, so the test installs nothing: it runs each target found
in $AGTAIL_HANDOFF_CLIS (a folder that bench/recording/install_handoff_targets.sh fills) or on
PATH, and skips, naming the command that installs it, where one is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from agtaild.share.brief import build
from agtaild.share.gather import open_session
from tests.pty_run import AGTAIL, Pty, plain

REPO = Path(__file__).resolve().parent.parent
CLAUDE = REPO / "tests/corpus/real/claude-2.1.197/projects"
#: The recording that kept a task list; its scenario tag makes the stub answer with plain text.
TASKS = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"
STUB = REPO / "bench/recording/stubmodel.py"
INSTALL = "bash bench/recording/install_handoff_targets.sh DIR, then AGTAIL_HANDOFF_CLIS=DIR"


def find_cli(agent: str, program: str) -> str | None:
    base = os.environ.get("AGTAIL_HANDOFF_CLIS")
    if base:
        path = Path(base) / agent / "node_modules" / ".bin" / program
        if os.access(path, os.X_OK):
            return str(path)
    return shutil.which(program)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def stub(tmp_path: Path) -> str:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(STUB), "--port", str(port), "--log", str(tmp_path / "requests.jsonl")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("the stub model did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def configure(agent: str, home: Path, work: Path, base: str) -> tuple[dict[str, str], Path]:
    """The target's settings in a fresh HOME, pointed at the stub: (its environment, the root
    of its transcripts as agtail reads them)."""
    if agent == "codex":
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "stub-model"\nmodel_provider = "stub"\ncheck_for_update_on_startup = false\n\n'
            f'[model_providers.stub]\nname = "stub"\nbase_url = "{base}/v1"\nwire_api = "responses"\nenv_key = "STUB_API_KEY"\n\n'
            f'[projects."{work}"]\ntrust_level = "trusted"\n'
        )  # fmt: skip
        return {"STUB_API_KEY": "dummy"}, home / ".codex" / "sessions"
    if agent == "gemini":
        (home / ".gemini").mkdir(parents=True)
        (home / ".gemini" / "settings.json").write_text(
            '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false},'
            ' "general": {"disableAutoUpdate": true, "disableUpdateNag": true}, "model": {"name": "gemini-2.5-flash"}}'
        )  # fmt: skip
        return {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": base, "GEMINI_CLI_TRUST_WORKSPACE": "true"}, home / ".gemini" / "tmp"
    if agent == "opencode":
        (home / ".config" / "opencode").mkdir(parents=True)
        (home / ".config" / "opencode" / "opencode.json").write_text(
            '{"provider": {"stub": {"npm": "@ai-sdk/openai-compatible", "name": "Stub",'
            f' "options": {{"baseURL": "{base}/v1", "apiKey": "dummy"}}, "models": {{"stub-model": {{"name": "Stub model"}}}}}}}},'
            ' "model": "stub/stub-model", "small_model": "stub/stub-model", "autoupdate": false, "share": "disabled"}'
        )  # fmt: skip
        return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"}, home / ".local" / "share" / "opencode"
    raise AssertionError(agent)


def stop_leftovers(home: Path) -> list[int]:
    """Kill what the target left running from its own copy under the throw-away HOME (Codex
    starts an app-server daemon of its own, outside the terminal's process group); by pid."""
    killed = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            program = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].decode("utf-8", "replace")
        except OSError:
            continue
        if program.startswith(str(home) + "/"):
            try:
                os.kill(int(entry.name), signal.SIGTERM)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    return killed


def first_prompts(agent: str, root: Path, data: Path) -> list[tuple[str | None, str]]:
    """(cwd, first user text) of each session agtail finds in the target's store."""
    svc = Service(Config(data_dir=str(data), roots=[RootSpec(agent, str(root))], archive=False))
    try:
        svc.update_index()
        found = []
        for s in svc.call("sessions.list", {"limit": 20})["sessions"]:
            events = svc.call("events.list", {"agent": s["agent"], "id": s["id"], "limit": 50})["events"]
            users = [e["text"] for e in events if e["kind"] == "text" and e["role"] == "user" and e.get("text")]
            if users:
                found.append((s.get("cwd"), users[0]))
        return found
    finally:
        svc.close()


@pytest.mark.parametrize(("agent", "program"), [("codex", "codex"), ("gemini", "gemini"), ("opencode", "opencode")])
def test_the_target_cli_starts_with_the_brief_in_the_directory(agent: str, program: str, stub: str, tmp_path: Path) -> None:
    cli = find_cli(agent, program)
    if cli is None:
        pytest.skip(f"{program} ({get_adapter(agent).name}) is not installed: {INSTALL}")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    extra, root = configure(agent, home, work, stub)
    env = {
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": f"{Path(cli).parent}{os.pathsep}/usr/bin{os.pathsep}/bin", "NO_COLOR": "1", "DO_NOT_TRACK": "1", **extra,
    }  # fmt: skip
    argv = [*AGTAIL, "--no-daemon", "--data-dir", str(tmp_path / "agtail"), "--only-roots", "--root", f"claude-code={CLAUDE}",
            "handoff", f"claude-code:{TASKS[:8]}", "--to", agent, "--launch", "--cwd", str(work)]  # fmt: skip
    term = Pty(argv, 120, 40, env)
    found: list[tuple[str | None, str]] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and term.proc.poll() is None:
            term.read(1.0)
            if root.exists() and any(b"# Handoff" in p.read_bytes() for p in root.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000):
                time.sleep(2)  # let it finish the turn it began
                found = first_prompts(agent, root, tmp_path / "index")
                if found:
                    break
    finally:
        screen = plain(term.read(0.2))[-2000:]
        if term.proc.poll() is None:
            os.killpg(term.proc.pid, signal.SIGTERM)
            try:
                term.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(term.proc.pid, signal.SIGKILL)
                term.proc.wait(10)
        os.close(term.master)
        stop_leftovers(home)
    assert found, f"{program} wrote no session with the brief; its screen:\n{screen}"
    svc = Service(Config(data_dir=str(tmp_path / "claude-index"), roots=[RootSpec("claude-code", str(CLAUDE))], archive=False))
    try:
        svc.update_index()
        brief = build(open_session(svc.call, "claude-code", TASKS), target=get_adapter(agent).name)
    finally:
        svc.close()
    assert [(cwd, text.strip()) for cwd, text in found] == [(str(work), brief.strip())]
