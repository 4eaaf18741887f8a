"""Sync against a real second `agtaild` process: push into its import store (which its index
then reads), resume of the imported session refused over JSON-RPC, pull of its native sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agtail_client import ApiError
from agtaild.sync.remote import pull, push
from tests.daemon_proc import DaemonProc, copy_codex, wait_until
from tests.synctools import make_machine, tree


@pytest.fixture
def daemon_b(tmp_path: Path) -> Any:
    base = tmp_path / "b"
    base.mkdir()
    proc = DaemonProc(base, {"codex": copy_codex(base / "codex")})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
        proc.cleanup()


def test_push_to_and_pull_from_a_real_daemon(daemon_b: DaemonProc, tmp_path: Path, corpus: Path) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    token = daemon_b.token
    rep = push(a, daemon_b.url, "laptop", token=token)
    assert rep["errors"] == [] and rep["files"] > 0
    client = daemon_b.tcp()
    try:
        def imported() -> list[dict[str, Any]]:
            return list(client.call("sessions.list", {"imported": True, "collection": "laptop", "limit": 100})["sessions"])

        found = wait_until(imported, 60, "the pushed sessions to be indexed by the daemon")
        assert all(s["agent"] == "claude-code" and s["imported"] and not s["resumable"] for s in found)
        with pytest.raises(ApiError) as err:
            client.call("resume.command", {"agent": found[0]["agent"], "id": found[0]["id"]})
        assert err.value.code == "refused" and "imported" in str(err.value)
        native = client.call("sessions.list", {"imported": False, "limit": 100})["sessions"]
        ok = client.call("resume.command", {"agent": native[0]["agent"], "id": native[0]["id"]})
        assert ok["argv"][:2] == ["codex", "resume"]
    finally:
        client.close()
    back = pull(a, daemon_b.url, "desk", token=token)
    assert back["errors"] == []
    assert tree(Path(a.import_dir) / "desk" / "codex") == tree(tmp_path / "b" / "codex")


def test_cli_pull_while_the_daemon_runs_gets_indexed(daemon_b: DaemonProc, tmp_path: Path, corpus: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agtaild import cli

    monkeypatch.setattr("agtaild.cli.commands.COMMAND_MODULES", ["agtaild.cli.sync"])
    a = make_machine(tmp_path / "a", corpus, claude=True)
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    code = cli.main(["--data-dir", str(daemon_b.data_dir), "--only-roots", "sync", "pull", str(share),
                     "--collection", "laptop"])
    assert code == 0
    client = daemon_b.tcp()
    try:
        found = wait_until(
            lambda: client.call("sessions.list", {"collection": "laptop", "limit": 100})["sessions"],
            60, "the pulled collection to be indexed by the running daemon")
        assert all(s["imported"] for s in found)
    finally:
        client.close()


def test_cli_import_of_a_chat_export_while_the_daemon_runs_gets_indexed(
    daemon_b: DaemonProc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agtaild import cli
    from tests.chat_exports import sample_zip

    monkeypatch.setattr("agtaild.cli.commands.COMMAND_MODULES", ["agtaild.cli.chat_import"])
    export = sample_zip("claude-ai", tmp_path)
    code = cli.main(["--data-dir", str(daemon_b.data_dir), "--only-roots", "import", "claude-ai", str(export)])
    assert code == 0
    client = daemon_b.tcp()
    try:
        found = wait_until(
            lambda: client.call("sessions.list", {"collection": "claude-ai", "limit": 100})["sessions"],
            60, "the imported export to be indexed by the running daemon")  # fmt: skip
        assert len(found) == 2 and all(s["agent"] == "claude-ai" and s["imported"] for s in found)
        with pytest.raises(ApiError) as err:
            client.call("resume.command", {"agent": "claude-ai", "id": found[0]["id"]})
        assert err.value.code == "refused" and "data export" in str(err.value)
    finally:
        client.close()
