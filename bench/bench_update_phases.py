"""Where an update of 100 changed files spends its CPU (issue #32): appends to 100 Claude Code
session files of an indexed corpus, then one ``Service.update_index()``, with the CPU of its
phases (all threads of this process: ``time.process_time`` around each).

    bench/bench_update_phases.py WORK [--lines 1 10 50] [--rounds 2] [--no-archive] [--repo DIR]

``WORK`` holds ``c/`` (a copy of a corpus: ``bench/gen_corpus.py``) and ``data/`` (its data
dir, indexed already, its secrets pass drained: see ``bench_append.py many``, which builds both
from scratch each time; here they are kept, so that two trees can be timed on the same index one
after the other — move the folder between runs, never copy it: the index keys files by path and
inode). ``--repo``: the tree to import agtaild from (default: this one).

Phases: ``discovery`` (the walk of the roots and a ``stat`` of every file), ``apply`` (the
writer's rows for each read unit), ``commit`` (the commits, full-text flushes included),
``secrets`` (the inline secrets pass), ``updater`` (the whole update before the secrets pass:
discovery, the fingerprint comparison, reading, storing, commits, and with the archive on the
mirror's thread and its flush). The fixed part and the part per MB are a least-squares line
through (appended MB, CPU) and (appended MB, wall) of every update. The load average is printed
with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through ``points``."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - slope * mx, slope


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("work", type=Path)
    parser.add_argument("--lines", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-archive", action="store_true")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(args.repo), str(here)]
    os.environ["TZ"] = "UTC"
    if args.no_archive:
        os.environ["AGTAIL_ARCHIVE"] = "0"
    from bench_append import append, prompt
    from run_bench import last_uuid

    sys.path.insert(0, str(args.repo))  # bench_append put this tree first: agtaild from --repo
    from agtaild.config import load_config
    from agtaild.index import discovery, update, upkeep, writer
    from agtaild.query.service import Service

    spent: dict[str, float] = {}

    def timed(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return inner(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - t

        setattr(owner, name, wrapper)

    timed(discovery.Discovery, "candidates", "discovery")
    timed(writer.Writer, "apply", "apply")
    timed(writer.Writer, "commit", "commit")
    timed(upkeep, "scan_secrets_inline", "secrets")
    timed(update.Updater, "run", "updater")

    work = args.work.resolve()
    roots = [
        f"claude-code={work / 'c' / 'claude' / 'projects'}",
        f"codex={work / 'c' / 'codex' / 'sessions'}",
    ]
    svc = Service(load_config(data_dir=str(work / "data"), root_options=roots, only_roots=True))
    runs: list[dict[str, Any]] = []
    try:
        svc.update_index()
        svc.scan_secrets()  # what an earlier update left to the pass is not this update's cost
        files = sorted((work / "c" / "claude" / "projects").glob("*/*.jsonl"))[:100]
        tag = f"{os.getpid() % 10**8:08d}"
        for rnd in range(args.rounds):
            for n in args.lines:
                added = 0
                for i, path in enumerate(files):
                    parent, chunk = last_uuid(path), ""
                    for j in range(n):
                        uid = f"{tag}-{rnd:04d}-4{n % 1000:03d}-a{i:03d}-{j:012d}"
                        chunk += prompt(
                            uid, parent, path.stem, f"appended line {j} of {n}, file {i}, round {rnd}"
                        )
                        parent = uid
                    append(path, chunk)
                    added += len(chunk.encode())
                spent.clear()
                cpu, wall = time.process_time(), time.perf_counter()
                report = svc.update_index()
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                assert report["read"] == len(files), report["read"]
                row = {"lines": n, "mb": round(added / 2**20, 3), "wall_ms": round(wall * 1000, 1),
                       "cpu_ms": round(cpu * 1000, 1), **{k: round(v * 1000, 1) for k, v in spent.items()},
                       "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}  # fmt: skip
                runs.append(row)
                print(json.dumps(row), flush=True)
    finally:
        svc.close()
    for key in ("cpu_ms", "wall_ms"):
        fixed, per_mb = fit([(r["mb"], r[key]) for r in runs])
        print(json.dumps({"figure": key, "fixed_ms": round(fixed, 1), "per_mb_ms": round(per_mb, 1)}))


if __name__ == "__main__":
    main()
