"""Plugin attribution from the local plugin cache (fixtures: tests/fixtures/claude, see README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.base import ReadResult
from agtaild.adapters.claude.adapter import PLUGINS_DIR_ENV, ClaudeCodeAdapter
from agtaild.adapters.claude.plugins import literal_lines, load_plugin_index
from tests.claude_code_helpers import read_path

FIXTURES = Path(__file__).parent / "fixtures" / "claude"
PROJECT = "-home-dev-acme-app"
REVIEW_GATE = "review-gate@acme-tools"
NOTES = "notes-helper@notes-market"


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture ~/.claude (plugins/ next to projects/)."""
    monkeypatch.delenv(PLUGINS_DIR_ENV, raising=False)
    return Path(shutil.copytree(FIXTURES, tmp_path / "dot-claude"))


def _session(claude_dir: Path, name: str, adapter: ClaudeCodeAdapter | None = None) -> ReadResult:
    root = claude_dir / "projects"
    return read_path(root, root / PROJECT / f"{name}.jsonl", adapter)


def test_index_reads_hooks_and_templates(claude_dir: Path) -> None:
    index = load_plugin_index(claude_dir / "plugins")
    assert index is not None
    assert index.plugins == [REVIEW_GATE, NOTES]
    gate_root = claude_dir / "plugins/cache/acme-tools/review-gate/1.2.0"
    assert index.plugin_for_command("${CLAUDE_PLUGIN_ROOT}/hooks/check-bash.sh") == REVIEW_GATE
    assert index.plugin_for_command(f"{gate_root}/hooks/check-bash.sh") == REVIEW_GATE
    assert index.plugin_for_command('node "${CLAUDE_PLUGIN_ROOT}/scripts/stop-review.mjs"') == REVIEW_GATE
    assert index.plugin_for_command("python3 ${CLAUDE_PLUGIN_ROOT}/src/summarize.py") == NOTES
    assert index.plugin_for_command("echo done") is None
    assert load_plugin_index(claude_dir / "no-such-dir") is None


def test_hook_commands_resolve_to_plugins(claude_dir: Path) -> None:
    result = _session(claude_dir, "5b1f0c2e-7d4a-4c3b-9e8f-2a6d1c0b9e71")
    hooks = [(e.hook.event, e.hook.tool, e.hook.command, e.hook.plugin) for e in result.events if e.hook]
    assert hooks == [
        ("PreToolUse", "Bash", "${CLAUDE_PLUGIN_ROOT}/hooks/check-bash.sh", REVIEW_GATE),
        # A near miss (an extra argument) is not the plugin's command.
        ("PreToolUse", "Bash", "${CLAUDE_PLUGIN_ROOT}/hooks/check-bash.sh --strict", None),
        ("PostToolUse", "Bash", "echo done", None),  # the user's own settings hook
        ("Stop", None, 'node "${CLAUDE_PLUGIN_ROOT}/scripts/stop-review.mjs"', REVIEW_GATE),
    ]
    # An interactive session is nobody's plugin session.
    assert result.session.plugin is None


def test_expanded_hook_command_resolves(claude_dir: Path) -> None:
    """Some builds record the command with ${CLAUDE_PLUGIN_ROOT} already expanded."""
    path = claude_dir / "projects" / PROJECT / "5b1f0c2e-7d4a-4c3b-9e8f-2a6d1c0b9e71.jsonl"
    gate_root = claude_dir / "plugins/cache/acme-tools/review-gate/1.2.0"
    path.write_text(path.read_text().replace("${CLAUDE_PLUGIN_ROOT}", str(gate_root).replace("\\", "\\\\")))
    hooks = [e.hook for e in _session(claude_dir, path.stem).events if e.hook]
    assert hooks[0].command == f"{gate_root}/hooks/check-bash.sh"
    assert [h.plugin for h in hooks] == [REVIEW_GATE, None, None, REVIEW_GATE]


def test_sdk_sessions_started_by_a_plugin(claude_dir: Path) -> None:
    adapter = ClaudeCodeAdapter()
    exact = _session(claude_dir, "0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e61", adapter).session
    assert (exact.origin, exact.programmatic, exact.plugin) == ("sdk-ts", True, REVIEW_GATE)
    notes = _session(claude_dir, "3f4a5b6c-7d8e-4f9a-0b1c-2d3e4f5a6b74", adapter).session
    assert (notes.origin, notes.plugin) == ("sdk-py", NOTES)
    # First line "...for correctness bugs and style." is close to the template, but not it.
    near = _session(claude_dir, "1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e52", adapter).session
    assert near.programmatic and near.plugin is None
    # The exact template line typed by a person in the CLI is not a plugin session.
    typed = _session(claude_dir, "2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a63", adapter).session
    assert typed.first_prompt.startswith("Review the uncommitted changes in this repository for correctness bugs.\n")
    assert (typed.programmatic, typed.plugin) == (False, None)


def test_no_plugin_cache_no_attribution(claude_dir: Path) -> None:
    shutil.rmtree(claude_dir / "plugins")
    assert _session(claude_dir, "0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e61").session.plugin is None


def test_env_override_and_imported_roots(tmp_path: Path, claude_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The sessions elsewhere (a projects root without plugins/ beside it), the cache named by env.
    elsewhere = tmp_path / "elsewhere" / "projects"
    shutil.copytree(claude_dir / "projects", elsewhere)
    monkeypatch.setenv(PLUGINS_DIR_ENV, str(claude_dir / "plugins"))
    name = "0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e61.jsonl"
    assert read_path(elsewhere, elsewhere / PROJECT / name).session.plugin == REVIEW_GATE
    # The same session under an imported collection came from another machine: no attribution.
    imported = tmp_path / "data" / "imported" / "laptop" / "claude-code"
    shutil.copytree(claude_dir / "projects", imported)
    session = read_path(imported, imported / PROJECT / name).session
    assert session.plugin is None
    hooks = [e.hook for e in read_path(imported, imported / PROJECT / "5b1f0c2e-7d4a-4c3b-9e8f-2a6d1c0b9e71.jsonl").events if e.hook]
    assert [h.plugin for h in hooks] == [None, None, None, None]


def test_cache_loaded_once_per_root(claude_dir: Path) -> None:
    adapter = ClaudeCodeAdapter()
    root = str(claude_dir / "projects")
    first = adapter.plugins_for(root)
    assert first is not None and adapter.plugins_for(root) is first


def test_literal_lines_of_sources() -> None:
    source = "\n".join([
        'const a = "Say hello to the reviewer please\\nsecond line";',
        "const t = `Review the diff carefully now.",
        "Second line of the template ${x}`;",
        "// 'Not a literal: this is a comment'",
        "PROMPT = '''Summarize the notes for the log.",
        "keep it short'''",
        'x = f"Count {n} items in the queue"  # trailing comment with "quotes"',
    ])  # fmt: skip
    assert list(literal_lines(source)) == [
        "Say hello to the reviewer please",
        "Review the diff carefully now.",
        "Second line of the template ${x}",
        "Summarize the notes for the log.",
        "keep it short",
        "Count {n} items in the queue",
    ]


def test_ambiguous_lines_attribute_nothing(tmp_path: Path) -> None:
    for market in ("one", "two"):
        plugin = tmp_path / "plugins" / "cache" / market / "twin" / "1.0.0"
        (plugin / "hooks").mkdir(parents=True)
        (plugin / "hooks" / "hooks.json").write_text(json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]}}
        ))  # fmt: skip
        (plugin / "prompt.md").write_text("Write the release notes for this version.\n")
    index = load_plugin_index(tmp_path / "plugins")
    assert index is not None
    assert index.plugin_for_command("${CLAUDE_PLUGIN_ROOT}/stop.sh") is None
    assert index.plugin_for_command(f"{tmp_path}/plugins/cache/one/twin/1.0.0/stop.sh") == "twin@one"
    assert index.plugin_for_prompt("Write the release notes for this version.") is None
