"""agtail's Claude Code token totals equal ccusage's on the same files (bench/ccusage_claude.py).

ccusage@20.0.24 is installed by .ci/run into .ci/node; without it these tests skip.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.claude_code_helpers import assistant_line, usage_dict
from tests.conftest import REPO

#: Project dirs of claude-code-log written by a peer's Python test generator, not by Claude:
#: ccusage skips their usage lines for formatting reasons (``"usage": {`` with a space, and
#: timestamps with microseconds), which agtail counts. Real Claude files have neither.
PEER_GENERATED = ("-synthetic-claude-code-log-test-data", "-synthetic-claude-code-log-workflow_basic")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ccusage_claude", REPO / "bench" / "ccusage_claude.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def ccusage(bench: ModuleType) -> str:
    found = bench.find_ccusage()
    if found is None:
        pytest.skip(f"ccusage is not installed (expected at {bench.DEFAULT_CCUSAGE}; .ci/run installs it)")
    return str(found)


@pytest.mark.parametrize(
    "source",
    ["real/claude-2.1.197", "claude-code/spotter", "claude-code/claude-code-viewer", "claude-code/agent-history"],
)
def test_totals_equal_ccusage(corpus: Path, bench: ModuleType, ccusage: str, source: str) -> None:
    result = bench.compare(corpus / source, ccusage)
    assert result["agtail"]["input_tokens"] > 0
    assert {k: result["agtail"][k] for k in bench.FIELDS} == result["ccusage"]


def test_totals_equal_ccusage_claude_code_log(corpus: Path, tmp_path: Path, bench: ModuleType, ccusage: str) -> None:
    """70 real files from 1.0.24 to 2.1.114: split responses, sidechains, flat and nested subagents."""
    projects = tmp_path / "projects"
    for project in (corpus / "claude-code/claude-code-log/projects").iterdir():
        if project.name not in PEER_GENERATED:
            shutil.copytree(project, projects / project.name)
    result = bench.compare(tmp_path, ccusage)
    assert result["agtail"]["records"] == 702  # API responses, each counted once
    assert {k: result["agtail"][k] for k in bench.FIELDS} == result["ccusage"]


def test_script_reports_equal_totals(corpus: Path, bench: ModuleType, ccusage: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([str(corpus / "real/claude-2.1.197"), "--ccusage", ccusage]) == 0
    assert '"equal": true' in capsys.readouterr().out


def test_dedup_rules_agree_with_ccusage(tmp_path: Path, bench: ModuleType, ccusage: str) -> None:
    """The edge cases of tests/test_claude_code_usage.py, written as Claude writes JSON."""
    breakdown = {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 12}
    bad_version = assistant_line("k", "m9", "r9", usage_dict(5, 5))
    bad_version["version"] = "dev"
    lines = [
        assistant_line("a", "m1", "r1", usage_dict(10, 1, 100, 5)),
        assistant_line("b", "m1", "r1", usage_dict(10, 50, 100, 5)),
        assistant_line("c", "m1", "r1", usage_dict(10, 1, 100, 5)),
        assistant_line("d", "m2", None, usage_dict(3, 4)),
        assistant_line("e", "m2", None, usage_dict(3, 4)),
        assistant_line("f", "m3", "r3", usage_dict(7, 7), sidechain=True),
        assistant_line("g", "m3", "r3-main", usage_dict(7, 2)),
        assistant_line("h", "m1", "r1-replay", usage_dict(99, 99), sidechain=True),
        assistant_line("i", None, None, usage_dict(1, 1)),
        assistant_line("j", None, None, usage_dict(1, 1)),
        assistant_line("l", "m5", "r5", usage_dict(1, 2, 3, 999, cache_creation=breakdown)),
        bad_version,
    ]
    path = tmp_path / "projects" / "-w" / "rules.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    result = bench.compare(tmp_path, ccusage)
    assert result["agtail"]["cache_write_tokens"] == 5 + 42
    assert {k: result["agtail"][k] for k in bench.FIELDS} == result["ccusage"]
