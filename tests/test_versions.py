"""The version a session shows is the one its agent's files record: Cline CLI 3.x's manifest,
the Cline CLI 2.x host (not the extension core it embeds), and `agtail doctor` names what each
format records instead of "?" (docs/adapters.md, per agent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.adapters import get_adapter
from tests.conftest import CORPUS

REAL = CORPUS / "real"


def sessions_of(agent: str, root: Path) -> list:
    adapter = get_adapter(agent)
    return [adapter.read(u, None, now=2e9).session for u in adapter.discover(root)]


def test_cline_3_sessions_have_the_manifests_version() -> None:
    sessions = sessions_of("cline", REAL / "cline-3.0.65")
    assert len(sessions) >= 4 and any(s.parent for s in sessions)  # subagents too
    assert {s.version for s in sessions} == {"3.0.65"}


def test_cline_2_cli_sessions_have_the_hosts_version_not_the_embedded_core() -> None:
    sessions = sessions_of("cline", REAL / "cline-2.18.0")
    assert sessions and {s.version for s in sessions} == {"2.18.0"}
    assert {s.extra.get("core_version") for s in sessions} == {"3.82.0"}
    assert {s.extra.get("host") for s in sessions} == {"Cline CLI - Node.js"}


def test_an_editor_hosted_task_has_the_extensions_version(tmp_path: Path) -> None:
    src = REAL / "cline-2.18.0"
    import shutil

    root = tmp_path / "cline"
    shutil.copytree(src, root)
    for meta in root.glob("tasks/*/task_metadata.json"):
        doc = json.loads(meta.read_text())
        doc["environment_history"][-1].update(host_name="Visual Studio Code", host_version="1.96.2", cline_version="3.17.5")
        meta.write_text(json.dumps(doc))
    sessions = sessions_of("cline", root)
    assert {s.version for s in sessions} == {"3.17.5"}
    assert {s.extra.get("host_version") for s in sessions} == {"1.96.2"}


def test_doctor_names_each_formats_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agtaild.cli import main

    roots = {"gemini": "gemini-0.61.0", "droid": "droid-0.225.2", "kimi": "kimi-1.51.0",
             "openhands": "openhands-1.16.0", "continue": "continue-1.5.47", "cline": "cline-3.0.65"}
    common = ["--data-dir", str(tmp_path / "data"), "--only-roots"]
    for agent, folder in roots.items():
        common += ["--root", f"{agent}={REAL / folder}"]
    assert main([*common, "index"]) == 0
    capsys.readouterr()
    main([*common, "--json", "doctor"])
    doc = json.loads(capsys.readouterr().out)
    formats = {a["agent"]: a["formats"] for a in doc["agents"]}
    assert {v["format"] for v in formats["droid"]} == {"format 2"}
    assert {v["format"] for v in formats["kimi"]} >= {"wire protocol 1.10"}
    assert {v["version"] for v in formats["cline"]} == {"3.0.65"}
    main([*common, "doctor"])
    text = capsys.readouterr()
    lines = {c.split(":")[0] for c in (text.out + text.err).splitlines() if c.strip()}
    messages = [m for a in roots for m in (text.out + text.err).splitlines() if f"agent {a}" in m]
    assert len(messages) == len(roots), lines
    assert not any("?:" in m for m in messages), messages
    for agent in ("gemini", "openhands", "continue"):
        assert any(f"agent {agent}" in m and "version not recorded: " in m for m in messages), messages
