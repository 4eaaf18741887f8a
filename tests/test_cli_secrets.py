"""`agtail secrets`, `list --has-secret`, `search --has-secret`: what the index found, masked,
from the command line; allow / unallow by fingerprint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def claude_line(sid: str, n: int, text: str) -> str:
    return json.dumps({"type": "user", "sessionId": sid, "uuid": f"{sid}-{n}", "timestamp": f"2026-01-0{n + 1}T10:00:00Z",
                       "cwd": "/w", "message": {"role": "user", "content": text}})  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> Path:
    d = tmp_path / "projects" / "-w"
    d.mkdir(parents=True)
    (d / "leaky.jsonl").write_text(claude_line("leaky", 0, f"deploy with the token {GITHUB} please") + "\n")
    (d / "clean.jsonl").write_text(claude_line("clean", 1, "deploy with nothing secret") + "\n")
    return tmp_path / "projects"


def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, root: Path, *args: str, json_out: bool = True) -> tuple[int, Any, str]:
    argv = ["--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"claude-code={root}", "--no-daemon",
            *(["--json"] if json_out else []), *args]  # fmt: skip
    code = main(argv)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if json_out and out.strip() else out), err


def test_secrets_lists_masked_and_allow_hides(capsys: pytest.CaptureFixture[str], tmp_path: Path, root: Path) -> None:
    code, doc, err = cli(capsys, tmp_path, root, "secrets")
    assert code == 0, err
    assert [s["rule"] for s in doc["secrets"]] == ["github-pat"] and GITHUB not in json.dumps(doc)
    fp = doc["secrets"][0]["fingerprint"]
    code, text, err = cli(capsys, tmp_path, root, "secrets", json_out=False)
    assert code == 0 and "«secret:github-pat …q7R8»" in text and fp in text and GITHUB not in text
    assert cli(capsys, tmp_path, root, "list", "--has-secret")[1]["sessions"][0]["id"] == "leaky"
    assert {h["session"]["id"] for h in cli(capsys, tmp_path, root, "search", "deploy", "--has-secret")[1]["hits"]} == {"leaky"}
    assert cli(capsys, tmp_path, root, "secrets", "allow", fp, "--reason", "revoked")[1]["changed"] is True
    assert cli(capsys, tmp_path, root, "secrets")[1]["secrets"] == []
    assert cli(capsys, tmp_path, root, "list", "--has-secret")[1]["sessions"] == []
    assert cli(capsys, tmp_path, root, "secrets", "--allowlisted")[1]["secrets"][0]["allowlisted"] is True
    assert cli(capsys, tmp_path, root, "secrets", "unallow", fp)[1]["changed"] is True
    code, _, err = cli(capsys, tmp_path, root, "secrets", "allow")
    assert code != 0 and "FINGERPRINT" in err
