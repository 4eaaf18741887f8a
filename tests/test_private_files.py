"""Everything agtail creates is the user's alone: files 0600, folders 0700 (issue 22, item 2).

0.2 created ``sync/hashes.sqlite3`` and ``archive/.zstore/catalog.sqlite3`` (and their -wal and
-shm) 0644 beside transcripts that hold secrets: it relied on the login umask. Now the daemon,
the CLI, the archive's finisher and its mirror process set the umask themselves
(agtaild.dirs.private_umask), and ``agtail doctor`` names what an older version (or a copy)
left open, with the command that closes it. Every test here runs with the loose umask 022.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.cli.doctor import run_doctor
from agtaild.cli.doctor_modes import loose_entries
from agtaild.config import load_config
from agtaild.query.service import Service
from agtaild.store.archive import finish as archive_finish
from agtaild.store.archive import mirror_proc as archive_proc
from agtaild.store.archive.blobs import STORE_DIR
from agtaild.store.archive.pins import pins_root
from tests.daemon_proc import CLAUDE_REAL, REPO, DaemonProc, copy_claude, wait_until


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def pins_of(data_dir: Path) -> Path:
    return pins_root(data_dir / "archive" / STORE_DIR)


def everything(data_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*"))


def test_the_cli_creates_every_file_0600_and_every_folder_0700(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    native = copy_claude(tmp_path / "claude")
    data = tmp_path / "data"
    args = ["--data-dir", str(data), "--only-roots", "--root", f"claude-code={native}", "--no-daemon", "--json"]
    assert main([*args, "index"]) == 0
    made = everything(data)
    assert {"index.sqlite3", "sync/hashes.sqlite3", "archive/.zstore/catalog.sqlite3"} <= set(made), made
    assert loose_entries(data, pins_of(data)) == []
    assert os.umask(0o022) == 0o022  # the caller's own umask is as it was
    capsys.readouterr()


def test_the_daemon_creates_every_file_0600_and_every_folder_0700(tmp_path: Path) -> None:
    d = DaemonProc(tmp_path, {"claude-code": copy_claude(tmp_path / "claude")})
    try:
        d.start()
        wait_until(lambda: (d.data_dir / "index.sqlite3-wal").exists(), 10, "the index's WAL")
        made = everything(d.data_dir)
        assert {"index.sqlite3-wal", "index.sqlite3-shm", "token", "agtaild.json", "agtaild.lock"} <= set(made), made
        assert loose_entries(d.data_dir, pins_of(d.data_dir)) == []
    finally:
        d.cleanup()


def test_the_finisher_makes_its_files_private_whoever_started_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finisher is a process of its own; a library user's Service (this test, umask 022)
    may start it. What it stores is 0600 anyway."""
    native = tmp_path / "claude"
    shutil.copytree(CLAUDE_REAL, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)  # a big update: it pins
    monkeypatch.setattr(archive_finish, "spawn", lambda root: None)
    svc = Service(config, workers=1)
    try:
        assert svc.update_index()["errors"] == []
    finally:
        svc.close()
    store = Path(config.archive_dir) / STORE_DIR
    assert not list(store.rglob("*.zst")), "the update stored blobs itself: nothing is left to the finisher"
    before = {p for p in store.rglob("*") if p.is_dir()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")])}
    proc = subprocess.run([sys.executable, "-m", "agtaild.store.archive.finish", str(store)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    blobs = list(store.rglob("*.zst"))
    assert blobs
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in blobs} == {"0o600"}
    made = {p for p in store.rglob("*") if p.is_dir()} - before
    assert made and {oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {"0o700"}


def test_the_mirror_process_makes_its_files_private_whoever_started_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Files that cannot be pinned (here: none can) are stored by the mirror process of a big
    update, a process of its own, during the update of a library user (umask 022)."""
    native = tmp_path / "claude"
    shutil.copytree(CLAUDE_REAL, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    monkeypatch.setattr(archive_finish, "spawn", lambda root: None)

    def no_link(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    svc = Service(config, workers=1)
    with caplog.at_level(logging.WARNING):
        try:
            assert svc.update_index()["errors"] == []
        finally:
            svc.close()
    assert "mirror process" not in caplog.text  # it ran: nothing was mirrored in this process
    store = Path(config.archive_dir) / STORE_DIR
    blobs = list(store.rglob("*.zst"))
    assert blobs
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in blobs} == {"0o600"}


def _doctor(config: Any) -> dict[str, str]:
    [check] = [c for c in run_doctor(config, env={"HOME": str(Path.home())})["checks"] if c["name"] == "permissions"]
    return check


def test_doctor_names_what_others_can_read_and_how_to_close_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = load_config(data_dir=str(data), root_options=[f"claude-code={tmp_path / 'none'}"], only_roots=True)
    (data / "sync").mkdir(parents=True)
    for folder in (data, data / "sync"):
        os.chmod(folder, 0o700)
    assert _doctor(config)["status"] == "ok"
    (data / "sync" / "hashes.sqlite3").write_bytes(b"x")  # 0644, as 0.2 left it
    os.chmod(data / "sync", 0o755)
    # A pin: a hard link to an agent's own file, whose mode is the agent's business.
    agent_file = tmp_path / "agent.jsonl"
    agent_file.write_text("{}\n")
    pin_set = pins_of(data) / "1-1"
    pin_set.mkdir(parents=True, mode=0o700)
    for folder in (data / "archive", data / "archive" / STORE_DIR, pins_of(data)):
        os.chmod(folder, 0o700)
    os.link(agent_file, pin_set / "0")
    (data / "elsewhere").symlink_to("/etc")  # not followed, not judged
    check = _doctor(config)
    assert check["status"] == "warn"
    message = check["message"]
    assert "1 file and 1 folder" in message and f"{data / 'sync' / 'hashes.sqlite3'} (644)" in message
    assert f"{data / 'sync'} (755)" in message and "agent.jsonl" not in message and "/0 (" not in message
    fix = message.split("To fix: ", 1)[1]
    subprocess.run(["sh", "-c", fix], check=True)
    assert _doctor(config)["status"] == "ok"
    assert stat.S_IMODE(agent_file.stat().st_mode) == 0o644  # the agent's file was left alone
    assert stat.S_IMODE(os.lstat(data / "elsewhere").st_mode) == 0o777 and stat.S_IMODE(os.stat("/etc").st_mode) == 0o755
    doc = json.loads(json.dumps(run_doctor(config, env={"HOME": str(Path.home())})))
    assert doc["ok"] is True  # a warning, not a failure
