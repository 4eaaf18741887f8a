"""`agtail doctor` names the agents it finds but cannot read (Trae's IDE), and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.cli import main


def _checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, str]]:
    main(["--no-daemon", "--data-dir", str(tmp_path / "data"), "doctor", "--json"])
    return {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}


def test_trae_ide_is_named_with_the_reason_only_when_installed(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "agent trae" not in _checks(tmp_path, capsys)
    (isolated_home / ".config" / "Trae CN" / "User").mkdir(parents=True)
    check = _checks(tmp_path, capsys)["agent trae"]
    assert (
        check["status"] == "info" and str(isolated_home / ".config" / "Trae CN" / "User") in check["message"]
    )
    assert "not on disk in a readable form" in check["message"] and "trae-cli" in check["message"]
