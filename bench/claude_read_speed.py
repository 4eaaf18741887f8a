#!/usr/bin/env python3
"""How fast the Claude Code adapter reads a corpus: every unit below a projects root, from scratch.

Make a corpus with ``python bench/gen_corpus.py /tmp/bench --mb 50`` and run
``python bench/claude_read_speed.py /tmp/bench/claude/projects``. Prints wall and CPU seconds
(best of ``--repeat``) and MB/s, next to the cost of only splitting and JSON-decoding the same
bytes, which no JSONL adapter can go below.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import msgspec

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="a Claude projects folder")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    adapter = ClaudeCodeAdapter()
    units = list(adapter.discover(args.root))
    size = sum(os.path.getsize(u.path) for u in units)
    settled = time.time() + 3600.0
    best_wall = best_cpu = float("inf")
    events = lines = 0
    for _ in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        events = lines = 0
        for unit in units:
            result = adapter.read(unit, None, now=settled)
            events += len(result.events)
            lines += result.session.accounting.lines
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    decode_cpu = float("inf")
    for _ in range(args.repeat):
        cpu = time.process_time()
        for unit in units:
            for line in Path(unit.path).read_bytes().split(b"\n"):
                if line:
                    msgspec.json.decode(line)
        decode_cpu = min(decode_cpu, time.process_time() - cpu)
    mb = size / 1e6
    print(json.dumps({
        "units": len(units), "mb": round(mb, 1), "lines": lines, "events": events,
        "wall_s": round(best_wall, 3), "cpu_s": round(best_cpu, 3),
        "mb_per_s_wall": round(mb / best_wall, 1), "mb_per_s_cpu": round(mb / best_cpu, 1),
        "decode_only_cpu_s": round(decode_cpu, 3), "load_avg": os.getloadavg()[0],
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
