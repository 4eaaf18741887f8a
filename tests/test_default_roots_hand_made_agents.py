"""A user who has only one of these agents runs `agtail list` with no `--root` and sees its
sessions: each agent's hand-made samples copied to where the agent keeps them under a fresh HOME
(Linux places; the macOS ones are checked by each agent's own roots test)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.cli import main

CORPUS = Path(__file__).parent / "corpus"
#: agent → (sample folder, its place under HOME, the sessions it holds, a word one of them says)
PLACES = {
    "iflow": ("iflow/handmade/projects", ".iflow/projects", 2, "range.js"),
    "qoder": ("qoder/handmade/projects", ".qoder/projects", 2, "range.js"),
    "claude-desktop": ("claude-desktop/handmade/Claude", ".config/Claude", 2, "launches"),
    "antigravity": ("antigravity/handmade", ".gemini", 2, "watcher"),
}


@pytest.mark.parametrize("agent", sorted(PLACES))
def test_list_finds_the_agent_at_its_default_place(
    agent: str, isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample, place, count, word = PLACES[agent]
    shutil.copytree(CORPUS / sample, isolated_home / place, symlinks=True)
    data = ["--no-daemon", "--data-dir", str(tmp_path / "data")]
    assert main([*data, "list", "--agent", agent, "--json", "--limit", "50"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert len(listed) == count and {row["agent"] for row in listed} == {agent}
    assert main([*data, "search", word, "--agent", agent, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["agent"] for h in hits} == {agent}
