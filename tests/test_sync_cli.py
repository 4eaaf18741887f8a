"""The commands: export, sync push/pull/status/verify, collections, resume --print, doctor —
JSON on stdout, exit codes per CONTRACT (3 for refusals)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agtaild import cli
from tests.synctools import make_machine

MINE = ["agtaild.cli.resume", "agtaild.cli.sync", "agtaild.cli.doctor"]


@pytest.fixture(autouse=True)
def only_my_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests exercise these commands; they need not wait for the others to exist."""
    monkeypatch.setattr("agtaild.cli.commands.COMMAND_MODULES", MINE)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def globals_for(config: Any) -> list[str]:
    roots = [f"--root={r.agent}={r.path}" for r in config.roots if r.kind == "native"]
    return ["--data-dir", config.data_dir, "--only-roots", "--no-daemon", *roots]


def test_push_pull_status_verify_collections_resume(tmp_path: Path, corpus: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    b = make_machine(tmp_path / "b", corpus, claude=False)
    share = tmp_path / "share"
    share.mkdir()
    code, rep, _ = run(capsys, *globals_for(a), "sync", "push", str(share), "--collection", "laptop", "--json")
    assert code == 0 and rep["files"] > 0 and {"files", "bytes", "skipped"} <= set(rep)
    code, rep_b, _ = run(capsys, "sync", "pull", str(share), "--collection", "laptop", "--json", *globals_for(b))
    assert code == 0 and rep_b["files"] == rep["files"] and rep_b["bytes"] == rep["bytes"]

    code, cols, _ = run(capsys, *globals_for(b), "--json", "collections")
    assert code == 0 and [c["name"] for c in cols["collections"]] == ["laptop"]
    assert cols["collections"][0]["sessions"] >= 7 and cols["collections"][0]["last_sync"]

    code, st, _ = run(capsys, *globals_for(a), "--json", "sync", "status", str(share), "--collection", "laptop")
    assert code == 0 and st["push"]["pending"] == [] and st["collections"] == ["laptop"]
    code, ver, _ = run(capsys, *globals_for(b), "--json", "sync", "verify")
    assert code == 0 and ver["clean"] is True

    from agtaild.query.service import Service

    svc = Service(cli.Context(cli.build_parser().parse_args([*globals_for(b), "doctor"])).config, workers=1)
    try:
        svc.update_index()
        one = svc.call("sessions.list", {"imported": True, "limit": 1})["sessions"][0]
    finally:
        svc.close()
    code, _, err = run(capsys, *globals_for(b), "resume", f"{one['agent']}:{one['id']}", "--print")
    assert code == 3 and "imported from collection 'laptop'" in err


def test_resume_print_of_a_native_session(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    from agtaild.query.service import Service

    svc = Service(a, workers=1)
    try:
        svc.update_index()
        one = next(s for s in svc.call("sessions.list", {"limit": 50})["sessions"] if s["parent"] is None)
    finally:
        svc.close()
    code, doc, _ = run(capsys, *globals_for(a), "--json", "resume", f"claude-code:{one['id']}", "--print")
    assert code == 0
    assert doc == {"agent": "claude-code", "id": one["id"], "cwd": one["cwd"],
                   "cwd_exists": os.path.isdir(one["cwd"]), "argv": ["claude", f"--resume={one['id']}"]}


def test_hostile_pull_exits_3_and_writes_nothing(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = make_machine(tmp_path / "b", corpus, claude=False)
    evil = tmp_path / "share" / "evil" / "claude-code" / "p"
    evil.mkdir(parents=True)
    (evil / "ok.jsonl").write_text('{"a":1}\n')
    os.symlink("/etc/passwd", evil / "passwd.jsonl")
    code, _, err = run(capsys, *globals_for(b), "sync", "pull", str(tmp_path / "share"), "--collection", "evil")
    assert code == 3 and "symlink" in err and "nothing was written" in err
    assert not list((Path(b.import_dir) / "evil").rglob("*.jsonl"))


def test_bad_collection_name_is_a_usage_error(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    code, _, err = run(capsys, *globals_for(a), "sync", "push", str(tmp_path), "--collection", "../up")
    assert code == 2 and "collection name" in err


def test_export_and_doctor_commands(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    from agtaild.query.service import Service

    svc = Service(a, workers=1)
    try:
        svc.update_index()
        one = svc.call("sessions.list", {"limit": 1})["sessions"][0]
    finally:
        svc.close()
    code, rep, _ = run(capsys, *globals_for(a), "--json", "export", f"claude-code:{one['id']}", "--to", str(tmp_path / "out"))
    assert code == 0 and rep["files"] >= 1 and (tmp_path / "out" / "manifest.json").is_file()
    code, doc, _ = run(capsys, *globals_for(a), "--json", "doctor")
    assert code == 0 and doc["archive"]["files"] >= 1  # the index mirrored what it read
