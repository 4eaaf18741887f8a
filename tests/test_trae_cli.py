"""TRAE CLI on a derived sample (tests/corpus/trae-cli/derived): the Codex CLI 0.171.0 rollouts,
unchanged, in TRAE CLI's folders (peer readers describe TRAE CLI writing Codex's format)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.codex import CodexAdapter
from agtaild.adapters.trae_cli import TraeCliAdapter
from agtaild.cli import main
from tests.conftest import CORPUS

SESSIONS = CORPUS / "trae-cli" / "derived" / ".trae" / "cli" / "sessions"
CODEX = CORPUS / "real" / "codex-0.171.0" / "sessions"


def _read(adapter, root: Path) -> dict:
    return {r.session.id: r for r in (adapter.read(u, None, now=4e9) for u in adapter.discover(root))}


def test_rollouts_read_under_their_own_agent() -> None:
    trae, codex = _read(TraeCliAdapter(), SESSIONS), _read(CodexAdapter(), CODEX)
    assert sorted(trae) == sorted(codex) and len(trae) == 5
    for sid, r in trae.items():
        c = codex[sid]
        assert r.session.agent == "trae-cli" and not r.session.resumable
        assert [(e.kind, e.tool, e.text) for e in r.events] == [(e.kind, e.tool, e.text) for e in c.events]
        assert r.session.usage == c.session.usage and [u.key for u in r.usage] == [u.key for u in c.usage]
        assert TraeCliAdapter().resume(r.session) is None
    child = next(r.session for r in trae.values() if r.session.parent is not None)
    assert child.parent.agent == "trae-cli" and child.parent.id in trae


def test_roots_and_cli(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    adapter = TraeCliAdapter()
    assert adapter.default_roots({}, tmp_path) == [tmp_path / ".trae/cli/sessions"]
    (tmp_path / ".trae/sessions").mkdir(parents=True)
    assert adapter.default_roots({}, tmp_path)[1] == tmp_path / ".trae/sessions"
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"trae-cli={SESSIONS}",
    ]
    assert main([*base, "list", "--json"]) == 0
    assert {row["agent"] for row in json.loads(capsys.readouterr().out)["sessions"]} == {"trae-cli"}
    assert main([*base, "search", "hello", "--json"]) == 0
    assert {h["session"]["agent"] for h in json.loads(capsys.readouterr().out)["hits"]} == {"trae-cli"}
    assert main([*base, "show", "trae-cli:01a229d7-c676-78a1-a3ee-2b022b275b04", "--json"]) == 0
    assert any(e["kind"] == "tool_use" for e in json.loads(capsys.readouterr().out)["events"])
    shutil.copytree(SESSIONS, isolated_home / ".trae" / "cli" / "sessions")
    assert (
        main(["--no-daemon", "--data-dir", str(tmp_path / "d2"), "list", "--agent", "trae-cli", "--json"])
        == 0
    )
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 5
