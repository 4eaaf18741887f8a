"""Gemini CLI, Kiro CLI and OpenCode's JSON tree list their folders through the shared scanner
(agtaild.adapters.kit.scan): a symlink loop and a folder that cannot be listed are errors in the
update's report, and the sessions stored from there are kept, as for the other agents."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import load_config
from agtaild.query.service import Service

#: agent, its sample root (tests/corpus), and the folder below it that holds session files
CASES = [
    ("gemini", "real/gemini-0.61.0/tmp", "demo-app/chats"),
    ("kiro", "kiro/synthetic-agtail/.kiro/sessions", "cli"),
    (
        "opencode",
        "opencode/synthetic-agtail-json/.local/share/opencode",  # the data dir: storage/ in it
        "storage/session/c0b3f1d2a8e94f6b1e2d3c4b5a69788776655443",
    ),
]
#: the file name a loop takes in each agent's folder (a name its discovery looks at)
LOOP_NAMES = {"gemini": "session-loop.jsonl", "kiro": "loop.jsonl", "opencode": "ses_loop.json"}


def _machine(agent: str, sample: str, tmp_path: Path, corpus: Path) -> tuple[Service, Path]:
    root = tmp_path / "root"
    shutil.copytree(corpus / sample, root)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"{agent}={root}"], only_roots=True)
    return Service(config, workers=1), root


def _ids(svc: Service) -> list[str]:
    return sorted(s["id"] for s in svc.call("sessions.list", {"limit": 1000})["sessions"])


@pytest.mark.parametrize(("agent", "sample", "folder"), CASES, ids=[c[0] for c in CASES])
def test_a_symlink_loop_is_reported_and_loses_nothing(
    agent: str, sample: str, folder: str, tmp_path: Path, corpus: Path
) -> None:
    svc, root = _machine(agent, sample, tmp_path, corpus)
    try:
        assert svc.update_index()["errors"] == []
        before = _ids(svc)
        assert before
        a, b = root / folder / LOOP_NAMES[agent], root / folder / ("x" + LOOP_NAMES[agent])
        a.symlink_to(b)
        b.symlink_to(a)
        report = svc.update_index()
        assert _ids(svc) == before
        assert not [c for c in report["changed"] if c["action"] == "removed"]
        loops = [e for e in report["errors"] if e["path"] in (str(a), str(b))]
        assert loops and all("Too many levels of symbolic links" in e["error"] for e in loops), report[
            "errors"
        ]
    finally:
        svc.close()


@pytest.mark.parametrize(("agent", "sample", "folder"), CASES, ids=[c[0] for c in CASES])
def test_an_unreadable_folder_is_reported_and_its_sessions_kept(
    agent: str, sample: str, folder: str, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chmod 000 on the folder that holds the sessions. Root reads it all the same: then the
    EACCES it would give anyone else is injected into its listing (as the scanner's other
    tests do in agtaild's tests/test_hostile_files.py)."""
    svc, root = _machine(agent, sample, tmp_path, corpus)
    locked = root / folder
    try:
        svc.update_index()
        before = _ids(svc)
        assert before
        locked.chmod(0)
        if os.access(locked, os.R_OK):  # running as root
            real_scandir = os.scandir

            def scandir(path: Any = ".") -> Any:
                if os.fspath(path) == str(locked):
                    raise PermissionError(errno.EACCES, "Permission denied", str(locked))
                return real_scandir(path)

            monkeypatch.setattr(os, "scandir", scandir)
        report = svc.update_index()
        assert _ids(svc) == before
        assert not [c for c in report["changed"] if c["action"] == "removed"]
        assert any(
            e["path"] == str(locked) and "Permission denied" in e["error"] for e in report["errors"]
        ), report["errors"]
    finally:
        locked.chmod(0o755)
        svc.close()


def test_kiro_v3_folders_a_loop_among_them_reported(tmp_path: Path, corpus: Path) -> None:
    """The v3 session folders (``<hash>/sess_<uuid>/``) beside ``cli/``: a group that is a
    symlink loop is reported, the sessions beside it found."""
    from agtaild.adapters import get_adapter
    from agtaild.adapters.kit import scan

    root = tmp_path / "sessions"
    shutil.copytree(corpus / "kiro/synthetic-agtail/.kiro/sessions", root)
    sess = root / "abc123" / "sess_6a7b8c9d-0000-4000-8000-000000000001"
    sess.mkdir(parents=True)
    (sess / "messages.jsonl").write_text('{"role":"user","content":"hi"}\n')
    (root / "g1").symlink_to(root / "g2")
    (root / "g2").symlink_to(root / "g1")
    with scan.collecting() as problems:
        units = list(get_adapter("kiro").discover(root))
    assert sorted(u.hints["store"] for u in units) == ["v2", "v3"]
    assert {p.path for p in problems} == {str(root / "g1"), str(root / "g2")}
