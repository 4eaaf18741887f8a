#!/usr/bin/env python3
"""Cross-check agtail's Claude Code token totals against ccusage on the same files.

For each Claude config dir given (a folder holding ``projects/``, like ``~/.claude``), runs
``ccusage daily --json --offline`` with ``CLAUDE_CONFIG_DIR`` set to it, ``TZ=UTC`` and a
temporary HOME (so nothing else on this machine is counted), and sums agtail's UsageRecords
for every session the Claude adapter discovers there, de-duplicated by ``UsageRecord.key``
across files the way the index does (the largest total wins). Prints one JSON object per dir
and exits 1 when any token total differs.

Usage: python bench/ccusage_claude.py CONFIG_DIR... [--ccusage PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.model import UsageRecord

REPO = Path(__file__).resolve().parent.parent
#: Where CI installs ccusage (.ci/run); ``--ccusage`` or $AGTAIL_CCUSAGE override it.
DEFAULT_CCUSAGE = REPO / ".ci" / "node" / "node_modules" / ".bin" / "ccusage"
FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
#: ccusage's JSON names for the same four counts.
CCUSAGE_FIELDS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_tokens": "cacheReadTokens",
    "cache_write_tokens": "cacheCreationTokens",
}


def find_ccusage(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("AGTAIL_CCUSAGE"), str(DEFAULT_CCUSAGE)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("ccusage")


def agtail_totals(config_dir: Path) -> dict[str, int]:
    """Our totals: every unit's usage records, one per key across all files."""
    adapter = ClaudeCodeAdapter()
    best: dict[str, UsageRecord] = {}
    settled = time.time() + 3600.0  # read every file as finished
    for unit in adapter.discover(config_dir / "projects"):
        for record in adapter.read(unit, None, now=settled).usage:
            kept = best.get(record.key)
            if kept is None or record.usage.total_tokens > kept.usage.total_tokens:
                best[record.key] = record
    totals = dict.fromkeys(FIELDS, 0)
    for record in best.values():
        for name in FIELDS:
            totals[name] += getattr(record.usage, name)
    totals["records"] = len(best)
    return totals


def ccusage_totals(config_dir: Path, ccusage: str) -> dict[str, int]:
    with tempfile.TemporaryDirectory(prefix="ccusage-home-") as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "TZ": "UTC",
            "CLAUDE_CONFIG_DIR": str(config_dir),
        }
        proc = subprocess.run(
            [ccusage, "daily", "--json", "--offline"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"ccusage failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    report: Any = json.loads(proc.stdout)
    totals = report.get("totals") or {}
    return {name: int(totals.get(ccusage_name) or 0) for name, ccusage_name in CCUSAGE_FIELDS.items()}


def compare(config_dir: Path, ccusage: str) -> dict[str, Any]:
    ours = agtail_totals(config_dir)
    theirs = ccusage_totals(config_dir, ccusage)
    equal = all(ours[name] == theirs[name] for name in FIELDS)
    return {"dir": str(config_dir), "agtail": ours, "ccusage": theirs, "equal": equal}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="Claude config dirs (each holds projects/)")
    parser.add_argument("--ccusage", help=f"the ccusage executable (default: {DEFAULT_CCUSAGE})")
    args = parser.parse_args(argv)
    ccusage = find_ccusage(args.ccusage)
    if ccusage is None:
        print("ccusage not found: install it with .ci/run, or pass --ccusage PATH", file=sys.stderr)
        return 2
    status = 0
    for config_dir in args.dirs:
        result = compare(config_dir.expanduser().resolve(), ccusage)
        print(json.dumps(result))
        status |= 0 if result["equal"] else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
