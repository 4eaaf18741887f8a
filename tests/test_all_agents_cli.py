"""Every registered agent, end to end through the CLI on its own corpus samples:
`agtail list --agent X` lists its sessions and `agtail search` finds words from them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import all_adapters
from agtaild.cli import main
from tests.conftest import CORPUS

AGENTS = [a.id for a in all_adapters() if a.sample_roots]
#: Agents whose sessions hold no conversation text agtail can read (Windsurf's trajectories are
#: encrypted): the word searched for comes from the system event that says so.
NO_TEXT = {"windsurf": "system"}


def run(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    code = main(args)
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.fixture(scope="module")
def cli_args(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    data = tmp_path_factory.mktemp("data")
    args = ["--json", "--no-daemon", "--data-dir", str(data), "--only-roots"]
    for adapter in all_adapters():
        for rel in adapter.sample_roots:
            args += ["--root", f"{adapter.id}={CORPUS / rel}"]
    return args


def test_every_built_in_agent_has_samples() -> None:
    assert {"claude-code", "codex", "gemini", "opencode", "pi", "oh-my-pi", "grok", "kiro"} <= set(AGENTS)


def test_index_reads_every_agent_without_bad_surprises(cli_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    report = run(capsys, [*cli_args, "index"])
    assert report["sessions"] > 100 and report["events"] > 1000


@pytest.mark.parametrize("agent", AGENTS)
def test_list_and_search_work_for(agent: str, cli_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    listed = run(capsys, [*cli_args, "list", "--agent", agent, "--limit", "200"])["sessions"]
    assert listed, f"no {agent} sessions listed"
    assert {s["agent"] for s in listed} == {agent}
    for s in listed:
        acct = s["accounting"]
        assert acct["events"] + acct["merged"] + acct["metadata"] + acct["skipped"] + acct["bad"] == acct["lines"]

    # A distinctive word from one of this agent's own messages must be found, in that session.
    word, session_id = _a_word_from(listed, agent, cli_args, capsys)
    hits = run(capsys, [*cli_args, "search", word, "--agent", agent, "--limit", "50"])["hits"]
    assert hits, f"searching {agent} for {word!r} found nothing"
    assert {h["session"]["agent"] for h in hits} == {agent}
    assert session_id in {h["session"]["id"] for h in hits}
    assert any(word.lower() in (h["snippet"] or "").lower() for h in hits)


def _a_word_from(
    sessions: list[dict[str, Any]], agent: str, cli_args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    for s in sessions:
        shown = run(capsys, [*cli_args, "show", f"{agent}:{s['id']}"])
        if shown["session"].get("collection"):
            continue
        for event in shown["events"]:
            if event["kind"] != NO_TEXT.get(agent, "text") or not event.get("text"):
                continue
            words = [w for w in re.findall(r"[A-Za-z]{7,}", event["text"]) if not w.isupper()]
            if words:
                return max(words, key=len), s["id"]
    pytest.fail(f"no {agent} session has a text event with a word to search for")


def test_show_of_a_missing_session_exits_4(cli_args: list[str]) -> None:
    assert main([*cli_args, "show", "claude-code:ffffffff-not-there"]) == 4


def test_corpus_is_where_the_tests_expect_it() -> None:
    assert (Path(CORPUS) / "PROVENANCE.md").is_file()


def test_adapters_c_agents_have_samples() -> None:
    """Cursor, Copilot CLI, Copilot Chat (VS Code), Droid, Kimi and Amp (branch adapters-c)."""
    assert {"cursor", "copilot-cli", "copilot-vscode", "droid", "kimi", "amp"} <= set(AGENTS)
