"""Claude Code's 5-hour blocks, computed from the index, equal ``ccusage blocks`` on the corpora.

ccusage@20.0.24 is installed by .ci/run into .ci/node (or named by $AGTAIL_CCUSAGE); without it
these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, RootSpec
from agtaild.index.live import CLAUDE, agent_entries, live_usage
from agtaild.index.windows import billing_blocks
from agtaild.query.service import Service
from tests.test_claude_code_ccusage import PEER_GENERATED, _bench


@pytest.fixture(scope="module")
def ccusage() -> str:
    found = _bench().find_ccusage()
    if found is None:
        pytest.skip("ccusage is not installed (.ci/run installs it; or set AGTAIL_CCUSAGE)")
    return str(found)


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ours(config_dir: Path, tmp: Path) -> list[dict[str, Any]]:
    config = Config(
        data_dir=str(tmp / "data"), roots=[RootSpec(CLAUDE, str(config_dir / "projects"))], archive=False
    )
    service = Service(config)
    try:
        service.update_index()
        entries = agent_entries(service._reader(), service.pricing(), CLAUDE, None)
    finally:
        service.close()
    return [
        {"start": iso(b.start), "end": iso(b.end), "last": iso(b.last), "entries": len(b.entries),
         "total": b.tokens(), "io": b.io_tokens()}
        for b in billing_blocks(entries)
    ]  # fmt: skip


def live_blocks(config_dir: Path, tmp: Path, moments: list[float]) -> list[dict[str, Any] | None]:
    """The block ``usage.live`` shows as open at each moment (None: none), from the live path:
    a lookback from the moment, not the whole history."""
    config = Config(
        data_dir=str(tmp / "live-data"), roots=[RootSpec(CLAUDE, str(config_dir / "projects"))], archive=False
    )
    service = Service(config)
    out: list[dict[str, Any] | None] = []
    try:
        service.update_index()
        for now in moments:
            doc = live_usage(service._reader(), service.pricing(), now=now, sessions=False)
            block = next((w for w in doc["windows"] if w["kind"] == "block"), None)
            out.append(None if block is None else {
                "start": iso(parse(block["start"])), "end": iso(parse(block["end"])), "last": iso(parse(block["last"])),
                "entries": block["usage"]["responses"], "total": block["usage"]["total_tokens"], "io": block["io_tokens"],
            })  # fmt: skip
    finally:
        service.close()
    return out


def parse(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def theirs(config_dir: Path, ccusage: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="ccusage-home-") as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "TZ": "UTC",
            "CLAUDE_CONFIG_DIR": str(config_dir),
        }
        proc = subprocess.run(
            [ccusage, "blocks", "--json", "--offline"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    out = []
    for b in json.loads(proc.stdout)["blocks"]:
        if b.get("isGap"):
            continue
        counts = b["tokenCounts"]
        out.append({
            "start": b["startTime"], "end": b["endTime"], "last": b["actualEndTime"], "entries": b["entries"],
            "total": b["totalTokens"], "io": counts["inputTokens"] + counts["outputTokens"],
        })  # fmt: skip
    return out


@pytest.mark.parametrize(
    "source",
    [
        "real/claude-2.1.197",
        "claude-code/spotter",
        "claude-code/claude-code-viewer",
        "claude-code/agent-history",
    ],
)
def test_blocks_equal_ccusage(corpus: Path, tmp_path: Path, ccusage: str, source: str) -> None:
    expected = theirs(corpus / source, ccusage)
    assert expected  # the corpus has usage
    assert ours(corpus / source, tmp_path) == expected


def test_blocks_equal_ccusage_over_months_of_real_files(corpus: Path, tmp_path: Path, ccusage: str) -> None:
    """claude-code-log's real files (1.0.24 to 2.1.114): 25 blocks over ten months, with gaps."""
    config_dir = tmp_path / "claude"
    for project in (corpus / "claude-code/claude-code-log/projects").iterdir():
        if project.name not in PEER_GENERATED:
            shutil.copytree(project, config_dir / "projects" / project.name)
    expected = theirs(config_dir, ccusage)
    assert len(expected) > 10
    assert ours(config_dir, tmp_path) == expected


@pytest.mark.parametrize("source", ["real/claude-2.1.197", "claude-code/claude-code-log"])
def test_the_live_block_at_any_moment_is_ccusage_s(
    corpus: Path, tmp_path: Path, ccusage: str, source: str
) -> None:
    """A minute after each block's last response (while it is open) `usage.live` shows that
    block, as ccusage computed it from the whole history; an hour after a block's end, none
    of them (unless the next one has opened)."""
    config_dir = tmp_path / "claude"
    for project in (corpus / source / "projects").iterdir():
        if project.name not in PEER_GENERATED:
            shutil.copytree(project, config_dir / "projects" / project.name)
    expected = theirs(config_dir, ccusage)
    assert expected
    moments, wanted = [], []
    for i, block in enumerate(expected):
        last, end = parse(block["last"]), parse(block["end"])
        if last + 60 < end:
            moments.append(last + 60)
            wanted.append(block)
        after = end + 3600
        following = expected[i + 1] if i + 1 < len(expected) else None
        if following is None or parse(following["start"]) > after:
            moments.append(after)
            wanted.append(None)
    assert len(moments) > len(expected) // 2
    assert live_blocks(config_dir, tmp_path, moments) == wanted
