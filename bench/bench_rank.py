#!/usr/bin/env python3
"""Ranked search's cost per request, in-process (``Service.call``, no HTTP), against an
existing index: CPU time (best and median of ``--repeat`` after one warm-up) and wall time
(median) of each query, the load average before and after. Run it from each of two checkouts
against the same index, alternating, to compare them (``--rounds`` repeats the whole set).

    bench/bench_rank.py --data DATA_DIR [--repeat 21] [--rounds 1] [QUERY ...]

The default queries are bench/bench_calls.py's common words and CJK words. On an index of
more than bounded_rank.RANK_SPAN events they take the bounded way (agtaild/index/bounded_rank.py).
The index is opened as the daemon opens it (migrations run: point it at a copy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QUERIES = ("session", "parser", "テスト", "索引")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("queries", nargs="*", default=list(QUERIES))
    args = ap.parse_args()
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service

    # The roots name the agents (a request naming one checks it); nothing is read from them.
    roots = [RootSpec(agent, str(args.data / "no-such-root")) for agent in ("claude-code", "codex")]
    svc = Service(Config(data_dir=str(args.data), roots=roots, archive=False))
    out: dict[str, object] = {"code": str(REPO), "load": _load()}
    cpus: dict[str, list[float]] = {q: [] for q in args.queries}
    walls: dict[str, list[float]] = {q: [] for q in args.queries}
    try:
        for q in args.queries:
            svc.call("search", {"q": q})  # warm-up: pages in cache, statements prepared
        for _ in range(args.rounds):
            for q in args.queries:
                for _ in range(args.repeat):
                    w, c = time.perf_counter(), time.process_time()
                    svc.call("search", {"q": q})
                    walls[q].append(time.perf_counter() - w)
                    cpus[q].append(time.process_time() - c)
    finally:
        svc.close()
    for q in args.queries:
        out[q] = {
            "cpu_best_ms": round(min(cpus[q]) * 1e3, 2),
            "cpu_median_ms": round(statistics.median(cpus[q]) * 1e3, 2),
            "wall_median_ms": round(statistics.median(walls[q]) * 1e3, 2),
        }
    out["load_after"] = _load()
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
