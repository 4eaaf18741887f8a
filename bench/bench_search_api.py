#!/usr/bin/env python3
"""The search-over-the-API figure of bench/run_bench.py (``api_figure``) alone, against an
index that already exists: start an agtaild on it, time each query over HTTP (best of 7, as
run_bench.py does) and also the daemon's own CPU time per request (user + sys from
/proc/PID/stat over the same requests), which the load of a shared machine disturbs less
than wall time.

Usage: bench/bench_search_api.py --data DATA_DIR --corpus CORPUS [--rounds 7] [--cpu-rounds 30] [--json]

DATA_DIR is the data directory an `agtail --no-daemon --data-dir DATA_DIR --only-roots
--root claude-code=CORPUS/claude/projects --root codex=CORPUS/codex/sessions index` built
(the daemon writes its state file there, so use a copy of anything shared). CORPUS is a
bench/gen_corpus.py corpus (its rare words are needle000000zq, needle000097zq, …).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PHRASES = (
    "refactor the parser",
    "token usage cost",
    "import store collection",
    "cache read write",
    "json rpc daemon",
    "assert expected actual",
    "hook subagent tool",
)
#: bench/gen_corpus.py plants one rare word in every 97th session, named after its number.
NEEDLES = tuple(f"needle{n * 97:06d}zq" for n in range(5))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(data: Path, corpus: Path, rounds: int, cpu_rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "clients" / "python"))
    from agtail_client import Client
    from tests.daemon_proc import DaemonProc

    base = Path(tempfile.mkdtemp(prefix="agtail-bench-search-"))
    (base / "data").symlink_to(data.resolve())
    roots = {"claude-code": corpus / "claude" / "projects", "codex": corpus / "codex" / "sessions"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGTAIL_", "CLAUDE_", "CODEX_"))}
    env.pop("HOME", None)
    d = DaemonProc(base, roots, env={**env, "TZ": "UTC"})
    d.start(timeout=300)
    assert d.proc is not None
    pid = d.proc.pid
    try:
        client = Client(url=d.url, token=d.token)

        def best(path: str, params: dict[str, Any]) -> dict[str, float]:
            client.get(path, params)
            walls = []
            for _ in range(rounds):
                t = time.perf_counter()
                client.get(path, params)
                walls.append(time.perf_counter() - t)
            cpu0 = cpu_seconds(pid)  # /proc counts in clock ticks (10 ms): many requests
            for _ in range(cpu_rounds):
                client.get(path, params)
            cpu = (cpu_seconds(pid) - cpu0) / cpu_rounds
            return {"ms": round(min(walls) * 1000, 2), "cpu_ms": round(cpu * 1000, 2)}

        out: dict[str, Any] = {
            "load": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
            "phrase": {q: best("/search", {"q": q}) for q in PHRASES},
            "rare": {q: best("/search", {"q": q}) for q in NEEDLES},
            "common": {q: best("/search", {"q": q}) for q in ("session", "parser")},
            "cjk": {q: best("/search", {"q": q}) for q in ("テスト", "索引")},
            "prefix": {q: best("/search", {"q": q, "mode": "prefix"}) for q in ("trig", "sess")},
            "stats_day": best("/stats", {"by": "day"}),
            "stats_session": best("/stats", {"by": "session"}),
        }
        out["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        client.close()
    finally:
        d.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=7, help="requests timed for the best wall time")
    ap.add_argument("--cpu-rounds", type=int, default=30, help="requests the daemon CPU is averaged over")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = ap.parse_args()
    out = measure(args.data, args.corpus, args.rounds, args.cpu_rounds)
    if args.json:
        print(json.dumps(out))
        return
    print(f"load average {out['load']} -> {out['load_after']}")
    for group in ("phrase", "rare", "common", "cjk", "prefix"):
        for q, fig in out[group].items():
            print(f"{group:8s} {q:26s} {fig['ms']:7.2f} ms  (daemon CPU {fig['cpu_ms']:6.2f} ms)")
    for name in ("stats_day", "stats_session"):
        fig = out[name]
        print(f"{name:35s} {fig['ms']:7.2f} ms  (daemon CPU {fig['cpu_ms']:6.2f} ms)")


if __name__ == "__main__":
    main()
