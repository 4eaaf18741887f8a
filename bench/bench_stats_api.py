#!/usr/bin/env python3
"""Stats latency against an existing index: in-process (the service call a daemon makes per
request) and over HTTP to a running agtaild, by day, model, agent, project and session.

Usage: bench/bench_stats_api.py --data-dir DIR --root AGENT=PATH [--root …] [--repeat 7]
                                [--by day,model,…] [--no-http] [--json]

The data dir must hold an index of those roots (e.g. built with
``agtail --data-dir DIR --no-daemon --only-roots --root … index``); the daemon brings it up to
date on start (nothing changed: a rescan). It writes into the data dir, so point it at a copy
of a shared one. HTTP figures are taken once the daemon has been idle for 5 s (no ``progress``
in ``/health``). In-process figures give wall and CPU (user+sys of this process) time, median
and best; HTTP figures are wall time, best and median of ``--repeat`` after one warm-up, each
answer computed anew (``Cache-Control: no-cache``), then the same served from the answers the
daemon keeps while the index is unchanged ("answer kept"). The
machine may be shared: compare CPU figures, and report ``uptime``'s load with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BY = ("day", "model", "agent", "project", "session", "tool", "hour")


def cases(data: Path, only: tuple[str, ...] = BY) -> dict[str, dict[str, Any]]:
    """Each grouping over everything, and by day over the last 30 days of the history (what the
    viewer's stats page asks by default, counted back from the index's last day)."""
    import sqlite3
    from datetime import date, timedelta

    out: dict[str, dict[str, Any]] = {by: {"by": by} for by in only}
    db = sqlite3.connect(f"file:{data / 'index.sqlite3'}?mode=ro", uri=True)
    try:
        last = db.execute("SELECT max(day) FROM usage WHERE day != ''").fetchone()[0]
    finally:
        db.close()
    if last and "day" in only:
        since = date.fromisoformat(last) - timedelta(days=29)
        out["day_last30"] = {"by": "day", "since": since.isoformat()}
    return out


def _timed(call: Callable[[], Any], repeat: int) -> dict[str, float]:
    call()  # warm: a running daemon has served requests before
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        call()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return {
        "wall_best_ms": round(min(walls) * 1e3, 2),
        "wall_median_ms": round(statistics.median(walls) * 1e3, 2),
        "cpu_best_ms": round(min(cpus) * 1e3, 2),
        "cpu_median_ms": round(statistics.median(cpus) * 1e3, 2),
    }


def in_process(data: Path, roots: dict[str, Path], repeat: int, only: tuple[str, ...]) -> dict[str, Any]:
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service

    specs = [RootSpec(agent, str(path)) for agent, path in roots.items()]
    svc = Service(Config(data_dir=str(data), roots=specs, archive=False))
    try:
        out: dict[str, Any] = {}
        for name, params in cases(data, only).items():
            doc = svc.call("stats", params)
            out[name] = {"rows": len(doc["rows"]), **_timed(partial(svc.call, "stats", params), repeat)}
        return out
    finally:
        svc.close()


def fresh(client: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``GET /stats`` computed now: the daemon keeps stats answers while the index is unchanged
    (agtaild/api/answers.py), and repeating one request would time that instead."""
    from agtail_client.transport import API, document, query

    status, raw = client.request("GET", f"{API}/stats{query(params)}", headers={"Cache-Control": "no-cache"})
    return document(status, raw)


def over_http(data: Path, roots: dict[str, Path], repeat: int, only: tuple[str, ...]) -> dict[str, Any]:
    from agtail_client import Client
    from tests.daemon_proc import DaemonProc

    base = Path(tempfile.mkdtemp(prefix="agtail-bench-stats-"))
    (base / "data").symlink_to(data.resolve())
    d = DaemonProc(base, roots)
    d.start(timeout=600)
    try:
        client = Client(url=d.url, token=d.token)
        # Measure an idle daemon: its start-up rescan (and whatever follows it) competes with
        # the requests otherwise.
        deadline = time.monotonic() + 600
        idle_since = None
        while time.monotonic() < deadline:
            busy = client.get("/health").get("progress") is not None
            idle_since = None if busy else idle_since or time.monotonic()
            if idle_since is not None and time.monotonic() - idle_since >= 5:
                break
            time.sleep(0.5)
        out: dict[str, Any] = {}
        for name, params in cases(data, only).items():
            size = len(json.dumps(client.get("/stats", params)))
            timed = _timed(partial(fresh, client, params), repeat)
            kept = _timed(partial(client.get, "/stats", params), repeat)
            out[name] = {
                "bytes": size,
                "wall_best_ms": timed["wall_best_ms"],
                "wall_median_ms": timed["wall_median_ms"],
                "kept_wall_best_ms": kept["wall_best_ms"],
                "kept_wall_median_ms": kept["wall_median_ms"],
            }
        client.close()
        return out
    finally:
        d.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--root", action="append", default=[], metavar="AGENT=PATH", required=True)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-http", action="store_true", help="in-process figures only")
    ap.add_argument("--by", default=",".join(BY), help=f"groupings to measure (default {','.join(BY)})")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    if not (args.data_dir / "index.sqlite3").exists():
        ap.error(f"no index in {args.data_dir}")
    roots = {}
    for spec in args.root:
        agent, sep, path = spec.partition("=")
        if not sep:
            ap.error(f"--root wants AGENT=PATH, not {spec!r}")
        roots[agent] = Path(path)
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "clients" / "python"))
    import agtaild

    result: dict[str, Any] = {"code": str(Path(agtaild.__file__).parent), "load": os.getloadavg()[0]}
    only = tuple(b for b in args.by.split(",") if b)
    if set(only) - set(BY):
        ap.error(f"--by: one of {', '.join(BY)}")
    result["in_process"] = in_process(args.data_dir, roots, args.repeat, only)
    if not args.no_http:
        result["http"] = over_http(args.data_dir, roots, args.repeat, only)
    result["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(
        f"agtaild from {result['code']}; load average {result['load']:.2f} (after: {result['load_after']:.2f})"
    )
    for by, fig in result["in_process"].items():
        print(
            f"in-process  {by:<11} rows {fig['rows']:>6}  wall best {fig['wall_best_ms']:>8.2f} ms"
            f"  median {fig['wall_median_ms']:>8.2f} ms  cpu median {fig['cpu_median_ms']:>8.2f} ms"
        )
    for by, fig in result.get("http", {}).items():
        print(
            f"http        {by:<11} bytes {fig['bytes']:>8}  wall best {fig['wall_best_ms']:>8.2f} ms"
            f"  median {fig['wall_median_ms']:>8.2f} ms  (answer kept: best {fig['kept_wall_best_ms']:.2f} ms"
            f"  median {fig['kept_wall_median_ms']:.2f} ms)"
        )


if __name__ == "__main__":
    main()
