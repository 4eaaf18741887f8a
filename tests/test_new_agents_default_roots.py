"""A user who has only one of the issue-29 agents installed runs `agtail list` with no `--root`
and sees its sessions: each recording copied to where its agent keeps it under a fresh HOME."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.cli import main

REAL = Path(__file__).parent / "corpus" / "real"
#: agent → (recording, its place under HOME, the sessions it holds)
PLACES = {
    "openclaw": ("openclaw-2026.9.6", ".openclaw", 5),
    "gptme": ("gptme-0.35.1", ".local/share/gptme", 7),
    "hermes": ("hermes-0.19.0", ".hermes", 7),
    "open-interpreter": ("open-interpreter-0.4.3", ".config/open-interpreter", 3),
    "codebuddy": ("codebuddy-2.163.0", ".codebuddy", 6),
}


@pytest.mark.parametrize("agent", sorted(PLACES))
def test_list_finds_the_agent_at_its_default_place(
    agent: str, isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording, place, count = PLACES[agent]
    shutil.copytree(REAL / recording, isolated_home / place, symlinks=True)
    assert main(["--no-daemon", "--data-dir", str(tmp_path / "data"), "list", "--agent", agent, "--json", "--limit", "50"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert len(listed) == count and {row["agent"] for row in listed} == {agent}
    assert main(["--no-daemon", "--data-dir", str(tmp_path / "data"), "search", "gamma", "--agent", agent, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["agent"] for h in hits} == {agent}


CORPUS = Path(__file__).parent / "corpus"
#: agents with only hand-made samples: agent → (sample under tests/corpus, its place under HOME,
#: the sessions it holds, a word its sessions hold)
HANDMADE = {
    "forge": ("forge/synthetic-agtail", ".forge", 4, "pytest"),
    "amazon-q": ("amazon-q/synthetic-agtail", ".local/share/amazon-q", 3, "pytest"),
    "warp": ("warp/synthetic-agtail/warp-terminal", ".local/state/warp-terminal", 4, "test_total"),
    "plandex": ("plandex/synthetic-agtail", "plandex-server", 2, "health"),
    "auggie": ("auggie/synthetic-agtail/.augment", ".augment", 4, "gamma"),
    "cortex-code": ("cortex-code/synthetic-agtail/.snowflake", ".snowflake", 2, "gamma"),
    "deepseek-tui": ("deepseek-tui/synthetic-agtail/.deepseek", ".deepseek", 3, "gamma"),
}


@pytest.mark.parametrize("agent", sorted(HANDMADE))
def test_list_finds_a_handmade_sample_at_its_default_place(
    agent: str, isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample, place, count, word = HANDMADE[agent]
    (isolated_home / place).parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CORPUS / sample, isolated_home / place, symlinks=True)
    data = ["--no-daemon", "--data-dir", str(tmp_path / "data")]
    assert main([*data, "list", "--agent", agent, "--json", "--limit", "50"]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert len(listed) == count and {row["agent"] for row in listed} == {agent}
    assert main([*data, "search", word, "--agent", agent, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and {h["session"]["agent"] for h in hits} == {agent}
