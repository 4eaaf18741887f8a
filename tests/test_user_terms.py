"""Errors in the words of whoever asked (issue 23, item 15): the CLI names its options, MCP its
arguments, the API its parameters — never the service's method names or the JSON-RPC layer
(``invalid params: sessions.list: parameter 'agent': …``). In-process and through a daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.cli import main
from agtaild.mcp import tools
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL, DaemonProc

INTERNAL = ("sessions.list", "search:", "stats:", "invalid params", "parameter '")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    d = DaemonProc(tmp_path_factory.mktemp("terms"), {"claude-code": CLAUDE_REAL, "codex": CODEX_REAL})
    try:
        yield d.start()
    finally:
        d.cleanup()


def _cli(d: DaemonProc, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AGTAIL_DATA_DIR"}
    argv = ["--data-dir", str(d.data_dir), "--only-roots", "--root", f"claude-code={CLAUDE_REAL}",
            "--root", f"codex={CODEX_REAL}", *args]
    code = "import sys; from agtaild.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=60)


CASES = [
    (("list", "--agent", "nosuch"), "agtail: unknown agent 'nosuch' (known: claude-code, codex, "),
    (("stats", "--agent", "nosuch"), "agtail: unknown agent 'nosuch' (known: claude-code, codex, "),
    (("search", "hello", "--kind", "bogus"), "agtail: --kind: 'bogus' is not one of text, thinking, "),
    (("list", "--since", "soonish"), "agtail: --since: 'soonish' is not a date (2026-01-31, 20260131)"),
    (("list", "--agent", "Not An Agent"), "agtail: unknown agent 'Not An Agent' (known: claude-code, "),
]


@pytest.mark.parametrize(("argv", "said"), CASES)
def test_in_process(argv: tuple[str, ...], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--data-dir", str(tmp_path / "d"), "--no-daemon", "--only-roots",
                 "--root", f"claude-code={CLAUDE_REAL}", "--root", f"codex={CODEX_REAL}", *argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(said), err
    assert not any(word in err for word in INTERNAL), err


@pytest.mark.slow
def test_through_a_daemon(daemon: DaemonProc) -> None:
    for argv, said in CASES:
        proc = _cli(daemon, *argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert proc.stderr.startswith(said), (argv, proc.stderr)
        assert not any(word in proc.stderr for word in INTERNAL), (argv, proc.stderr)
    # The JSON-RPC answer keeps its machine-readable parts beside the plain message.
    client = daemon.unix()
    try:
        from agtail_client import ApiError

        with pytest.raises(ApiError) as caught:
            client.call("sessions.list", {"agent": "nosuch"})
    finally:
        client.close()
    assert caught.value.message.startswith("unknown agent 'nosuch' (known: ")
    assert caught.value.data["path"] == ["params", "agent"]


def test_mcp_says_argument(tmp_path: Path) -> None:
    from agtaild.config import load_config
    from agtaild.query.service import Service

    config = load_config(data_dir=str(tmp_path / "d"), root_options=[f"codex={CODEX_REAL}"], only_roots=True)
    svc = Service(config)
    try:
        by_name = {t.name: t for t in tools.TOOLS}
        for name, args, said in (
            ("list_sessions", {"agent": "nosuch"}, "unknown agent 'nosuch' (known: "),
            ("search_sessions", {"query": "x", "since": "soonish"}, "argument 'since': 'soonish' is not a date"),
            ("search_sessions", {"query": "(", "mode": "regex"}, "argument 'query' is not a regular expression"),
        ):
            tool = by_name[name]
            with pytest.raises(Exception) as caught:
                tool.run(svc.call, tools.check_arguments(tool, args), None)
            text = tools.error_text(caught.value)
            assert text.startswith(said), text
            assert not any(word in text for word in INTERNAL), text
    finally:
        svc.close()


def test_json_stays_exact_for_scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--data-dir", str(tmp_path / "d"), "--no-daemon", "--only-roots", "--root", f"codex={CODEX_REAL}",
                 "--json", "list", "--agent", "codex"])
    assert code == 0 and json.loads(capsys.readouterr().out)["sessions"]
