#!/usr/bin/env python3
"""Cross-check agtail's Codex token totals against ccusage on the same rollouts.

For each Codex home given (a folder holding ``sessions/`` and maybe ``archived_sessions/``,
like ``~/.codex``), runs ``ccusage codex session --json --offline`` with ``CODEX_HOME`` set to
it, ``TZ=UTC`` and a temporary HOME (so nothing else on this machine is counted), and sums the
UsageRecords of every session the Codex adapter discovers there (archived ones included, as
ccusage reads them too). Prints one JSON object per home, with a per-session breakdown when
something differs, and exits 1 when any count differs.

``total_tokens`` is compared separately: agtail computes it (input + output + cache read +
cache write, the contract's definition) while ccusage passes on the total each Codex row
claims. They agree whenever a row's own total equals input + output, which real Codex
rollouts satisfy; a hand-made row that also adds reasoning on top shows up here.

Usage: python bench/ccusage_codex.py CODEX_HOME... [--ccusage PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agtaild.adapters.codex.adapter import CodexAdapter

REPO = Path(__file__).resolve().parent.parent
#: Where CI installs ccusage (.ci/run); ``--ccusage`` or $AGTAIL_CCUSAGE override it.
DEFAULT_CCUSAGE = REPO / ".ci" / "node" / "node_modules" / ".bin" / "ccusage"
#: agtail's Usage field → ccusage's JSON name for the same count.
COUNTS = {
    "input_tokens": "inputTokens",
    "cache_read_tokens": "cacheReadTokens",
    "cache_write_tokens": "cacheCreationTokens",
    "output_tokens": "outputTokens",
    "reasoning_tokens": "reasoningOutputTokens",
}
FIELDS = (*COUNTS, "total_tokens")
SETTLED = 4_000_000_000.0  # read every rollout as finished


def find_ccusage(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("AGTAIL_CCUSAGE"), str(DEFAULT_CCUSAGE)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("ccusage")


def agtail_report(codex_home: Path) -> dict[str, Any]:
    """Our totals and per-session totals (keyed by rollout file stem, as ccusage names them)."""
    adapter = CodexAdapter()
    totals = dict.fromkeys(FIELDS, 0)
    sessions: dict[str, dict[str, int]] = {}
    records = 0
    for unit in adapter.discover(codex_home / "sessions"):
        result = adapter.read(unit, None, now=SETTLED)
        if not result.usage:
            continue
        mine = sessions.setdefault(Path(unit.path).name.split(".")[0], dict.fromkeys(FIELDS, 0))
        for record in result.usage:
            records += 1
            for name in FIELDS:
                value = getattr(record.usage, name)
                totals[name] += value
                mine[name] += value
    return {"totals": totals, "sessions": sessions, "records": records}


def ccusage_report(codex_home: Path, ccusage: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ccusage-home-") as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "TZ": "UTC", "CODEX_HOME": str(codex_home)}
        proc = subprocess.run(
            [ccusage, "codex", "session", "--json", "--offline"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"ccusage failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    report: Any = json.loads(proc.stdout)

    def counts(row: dict[str, Any]) -> dict[str, int]:
        out = {name: int(row.get(theirs) or 0) for name, theirs in COUNTS.items()}
        out["total_tokens"] = int(row.get("totalTokens") or 0)
        return out

    sessions = {str(s.get("sessionFile")): counts(s) for s in report.get("sessions") or []}
    return {"totals": counts(report.get("totals") or {}), "sessions": sessions}


def compare(codex_home: Path, ccusage: str) -> dict[str, Any]:
    ours = agtail_report(codex_home)
    theirs = ccusage_report(codex_home, ccusage)
    counts_equal = all(ours["totals"][n] == theirs["totals"][n] for n in COUNTS)
    result: dict[str, Any] = {
        "home": str(codex_home),
        "agtail": ours["totals"],
        "ccusage": theirs["totals"],
        "records": ours["records"],
        "counts_equal": counts_equal,
        "total_equal": ours["totals"]["total_tokens"] == theirs["totals"]["total_tokens"],
    }
    differing = sorted(
        name
        for name in set(ours["sessions"]) | set(theirs["sessions"])
        if ours["sessions"].get(name) != theirs["sessions"].get(name)
    )
    if differing:
        result["sessions"] = {
            name: {"agtail": ours["sessions"].get(name), "ccusage": theirs["sessions"].get(name)} for name in differing
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("homes", nargs="+", type=Path, help="Codex homes (each holds sessions/)")
    parser.add_argument("--ccusage", help=f"the ccusage executable (default: {DEFAULT_CCUSAGE})")
    args = parser.parse_args(argv)
    ccusage = find_ccusage(args.ccusage)
    if ccusage is None:
        print("ccusage not found: install it with .ci/run, or pass --ccusage PATH", file=sys.stderr)
        return 2
    status = 0
    for home in args.homes:
        result = compare(home.expanduser().resolve(), ccusage)
        print(json.dumps(result))
        status |= 0 if result["counts_equal"] else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
