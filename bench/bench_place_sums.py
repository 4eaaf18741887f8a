#!/usr/bin/env python3
"""Stats and projects with each filter, from the sums per place and per session (schema m020)
and by recount from the base tables (``recount=True``, the queries they replace): is the answer
the same, and the CPU of each (median of ``--repeat``).

    bench/bench_place_sums.py INDEX.sqlite3 [--repeat 5]

The index must be migrated already (open it once with this tree, on a copy); it is opened
read-only here. "Hidden" hides the 7 most recently active sessions (the latest activity of
their places: the path that recomputes it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def cpu_ms(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.process_time()
        out = call()
        times.append(time.process_time() - start)
    return round(statistics.median(times) * 1e3, 2), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from agtaild.index.params import parse_bound
    from agtaild.index.projects import projects
    from agtaild.index.schema import connect
    from agtaild.index.stats import stats
    from agtaild.pricing import load_pricing

    db = connect(args.index, readonly=True)
    pricing = load_pricing(None, {})
    agent = db.execute("SELECT agent FROM sessions GROUP BY agent ORDER BY count(*) DESC").fetchone()[0]
    project = db.execute("SELECT project FROM sessions WHERE project IS NOT NULL LIMIT 1").fetchone()[0]
    hidden = [
        tuple(r)
        for r in db.execute(
            "SELECT coalesce(collection, ''), agent, sid FROM sessions ORDER BY activity DESC LIMIT 7"
        )
    ]
    last_day = db.execute("SELECT max(day) FROM usage_daily").fetchone()[0]
    cases: list[tuple[str, Callable[..., Any], dict[str, Any]]] = []
    for picked, tag in (((None, None), ""), ((None, hidden), "hidden 7")):
        for by in ("project", "agent", "model", "session", "day"):
            for flt in ({}, {"agent": agent}, {"project": project}, {"imported": False}):
                cases.append((f"stats by {by} {flt} {tag}", stats, dict(flt, by=by, picked=picked,
                              limit=20 if by == "session" else None)))  # fmt: skip
        for flt in ({}, {"agent": agent}, {"imported": False}):
            cases.append((f"projects {flt} {tag}", projects, dict(flt, picked=picked)))
    if last_day:
        month = parse_bound(last_day[:8] + "01")
        cases.append(("stats by project, the last month", stats, {"by": "project", "since": month}))
        cases.append(("stats by day, the last month", stats, {"by": "day", "since": month}))
    out: dict[str, Any] = {"load": " ".join(Path("/proc/loadavg").read_text().split()[:3])}
    for name, call, kw in cases:
        fast_ms, fast = cpu_ms(lambda call=call, kw=kw: call(db, pricing, **kw), args.repeat)
        slow_ms, slow = cpu_ms(lambda call=call, kw=kw: call(db, pricing, recount=True, **kw), args.repeat)
        out[name] = {
            "same": json.dumps(fast) == json.dumps(slow),
            "sums_cpu_ms": fast_ms,
            "recount_cpu_ms": slow_ms,
        }
        print(f"{name:60s} {out[name]}", flush=True)
    out["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(json.dumps({"load": out["load"], "load_after": out["load_after"]}))


if __name__ == "__main__":
    main()
