"""agtail's Claude Code token totals equal ccusage's on the same files (bench/ccusage_claude.py).

ccusage@20.0.24 is installed by .ci/run into .ci/node; without it these tests skip.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

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
