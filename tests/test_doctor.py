"""`agtail doctor`: warns about agent settings that prune history, reports the archive."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.cli.doctor import run_doctor
from agtaild.config import load_config

CLAUDE = "real/claude-2.1.197/projects"


def claude_home(tmp_path: Path, corpus: Path, settings: dict | None) -> object:
    cfg = tmp_path / "claude"
    shutil.copytree(corpus / CLAUDE, cfg / "projects")
    if settings is not None:
        (cfg / "settings.json").write_text(json.dumps(settings))
    return load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={cfg / 'projects'}"], only_roots=True)


def by_name(doc: dict, name: str) -> list[dict]:
    return [c for c in doc["checks"] if c["name"] == name]


def test_default_claude_cleanup_warns(tmp_path: Path, corpus: Path) -> None:
    doc = run_doctor(claude_home(tmp_path, corpus, None), env={"HOME": str(tmp_path)})
    [check] = by_name(doc, "claude-code retention")
    assert check["status"] == "warn" and "30 days" in check["message"] and "archive keeps them" in check["message"]
    assert doc["ok"] is True and doc["archive"]["enabled"] is True


def test_short_cleanup_warns_long_is_ok(tmp_path: Path, corpus: Path) -> None:
    doc = run_doctor(claude_home(tmp_path / "a", corpus, {"cleanupPeriodDays": 7}), env={"HOME": str(tmp_path)})
    assert "7 days" in by_name(doc, "claude-code retention")[0]["message"]
    doc = run_doctor(claude_home(tmp_path / "b", corpus, {"cleanupPeriodDays": 99999}), env={"HOME": str(tmp_path)})
    assert by_name(doc, "claude-code retention")[0]["status"] == "ok"


def test_archive_off_is_a_warning_and_says_history_is_lost(tmp_path: Path, corpus: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGTAIL_ARCHIVE", "0")
    doc = run_doctor(claude_home(tmp_path, corpus, None), env={"HOME": str(tmp_path)})
    assert by_name(doc, "archive")[0]["status"] == "warn"
    assert "archive is OFF" in by_name(doc, "claude-code retention")[0]["message"]


def test_gemini_retention_and_archive_size(tmp_path: Path, corpus: Path) -> None:
    config = claude_home(tmp_path, corpus, {"cleanupPeriodDays": 99999})
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(
        json.dumps({"general": {"sessionRetention": {"enabled": True, "maxAge": "30d"}}}))
    arch = Path(config.archive_dir) / "claude-code" / "p"
    arch.mkdir(parents=True)
    (arch / "x.jsonl").write_bytes(b"0123456789")
    doc = run_doctor(config, env={"HOME": str(tmp_path)})
    assert "30d" in by_name(doc, "gemini retention")[0]["message"]
    assert (doc["archive"]["files"], doc["archive"]["bytes"]) == (1, 10)
