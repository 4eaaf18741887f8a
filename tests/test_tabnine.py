"""Tabnine CLI on a derived sample (tests/corpus/tabnine/derived): the Gemini CLI 0.61.0 recording
with Tabnine's record type and folders, the chat recording a peer read in Tabnine CLI 0.25.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.gemini import GeminiAdapter
from agtaild.adapters.tabnine import TabnineAdapter
from agtaild.cli import main
from tests.conftest import CORPUS

TMP = CORPUS / "tabnine" / "derived" / ".tabnine" / "agent" / "tmp"
GEMINI_TMP = CORPUS / "real" / "gemini-0.61.0" / "tmp"


def _read(adapter, root: Path) -> dict:
    return {r.session.id: r for r in (adapter.read(u, None, now=4e9) for u in adapter.discover(root))}


def test_tabnine_records_read_as_the_gemini_recording_they_came_from() -> None:
    tabnine, gemini = _read(TabnineAdapter(), TMP), _read(GeminiAdapter(), GEMINI_TMP)
    assert sorted(tabnine) == sorted(gemini) and len(tabnine) == 4
    for sid, r in tabnine.items():
        g = gemini[sid]
        assert r.session.agent == "tabnine" and r.session.cwd == "/tmp/rt/tabnine/home/src/demo-app"
        assert [(e.kind, e.tool, e.text) for e in r.events if e.kind != "system"] == [
            (e.kind, e.tool, e.text) for e in g.events if e.kind != "system"
        ]
        assert r.session.usage == g.session.usage and r.session.accounting == g.session.accounting
        assert TabnineAdapter().resume(r.session) is None
    child = next(r.session for r in tabnine.values() if r.session.parent is not None)
    assert child.parent.agent == "tabnine" and child.parent.id == "7c5ed68e-0f43-4e3d-b95a-048b0aef1d45"
    assert any(e.role == "assistant" and e.kind == "text" for r in tabnine.values() for e in r.events)


def test_roots_and_cli(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert TabnineAdapter().default_roots({}, Path("/h")) == [Path("/h/.tabnine/agent/tmp")]
    base = ["--no-daemon", "--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"tabnine={TMP}"]
    assert main([*base, "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 4
    assert main([*base, "search", "README", "--json"]) == 0
    assert {h["session"]["agent"] for h in json.loads(capsys.readouterr().out)["hits"]} == {"tabnine"}
    assert main([*base, "show", "tabnine:3ebd1d67-ed0a-4818-bb4f-51583e832c65", "--json"]) == 0
    assert any(e["kind"] == "tool_use" for e in json.loads(capsys.readouterr().out)["events"])
    shutil.copytree(TMP, isolated_home / ".tabnine" / "agent" / "tmp")
    assert (
        main(["--no-daemon", "--data-dir", str(tmp_path / "d2"), "list", "--agent", "tabnine", "--json"]) == 0
    )
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 4
