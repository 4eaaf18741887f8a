#!/usr/bin/env python3
"""Daemon benchmarks: what a user of a running agtaild feels.

1. load: 50 concurrent clients hammer list / search / show / stats while agtaild indexes a
   synthetic 200 MB corpus from scratch: errors (must be 0) and latency percentiles.
2. append: 100 appends to a watched session, one at a time: time until the new line is
   delivered on the `follow` SSE stream and until /api/v1/search finds it (target p95 < 500 ms).
3. idle: CPU of the daemon (and any worker processes it left) over 60 s of doing nothing
   (target < 1% of one core).

Usage (from the repo root):
    .venv/bin/python bench/bench_daemon.py --work /tmp/agtd-bench [--mb 200] [--only load,append,idle]
The corpus comes from bench/gen_corpus.py and is reused when already generated.
Prints one JSON document; bench/RESULTS.md records the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agtail_client import ApiError, Client  # noqa: E402
from tests.daemon_proc import DaemonProc, SseCollector, append, claude_user_line, wait_until  # noqa: E402

GEN = REPO / "bench" / "gen_corpus.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary_ms(values: list[float]) -> dict[str, Any]:
    ms = [v * 1000 for v in values]
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 1),
        "p95_ms": round(pct(ms, 95), 1),
        "p99_ms": round(pct(ms, 99), 1),
        "max_ms": round(max(ms), 1) if ms else None,
        "mean_ms": round(statistics.fmean(ms), 1) if ms else None,
    }


def corpus(work: Path, mb: float) -> tuple[Path, list[str]]:
    out = work / f"corpus-{mb:g}mb"
    meta = out / "gen.json"
    if not meta.exists():
        shutil.rmtree(out, ignore_errors=True)
        res = subprocess.run([sys.executable, str(GEN), str(out), "--mb", str(mb)], capture_output=True, text=True, check=True)
        meta.write_text(res.stdout)
    info = json.loads(meta.read_text())
    return out, list(info["needles"])


def start_daemon(work: Path, src: Path, name: str) -> DaemonProc:
    base = work / name
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    roots = {"claude-code": base / "claude", "codex": base / "codex"}
    shutil.copytree(src / "claude" / "projects", roots["claude-code"])
    shutil.copytree(src / "codex" / "sessions", roots["codex"])
    return DaemonProc(base, roots)


# -- 1. load while indexing ----------------------------------------------------------------
def bench_load(work: Path, src: Path, needles: list[str], clients: int) -> dict[str, Any]:
    d = start_daemon(work, src, "load")
    d.start(wait_indexed=False)
    latencies: dict[str, list[float]] = {"list": [], "search": [], "show": [], "stats": []}
    errors: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()
    token = d.token

    def worker(i: int) -> None:
        rng = random.Random(i)
        client = Client(socket_path=str(d.socket)) if i % 2 else Client(url=d.url, token=token)
        known: list[dict[str, Any]] = []
        while not stop.is_set():
            op = ("list", "search", "show", "stats")[rng.randrange(4)]
            started = time.perf_counter()
            try:
                if op == "list":
                    known = client.get("/sessions", {"limit": 50})["sessions"] or known
                elif op == "search":
                    client.get("/search", {"q": rng.choice([*needles, "daemon", "traceback", "テスト"]), "limit": 20})
                elif op == "show":
                    if known:
                        s = rng.choice(known)
                        client.get(f"/sessions/{s['agent']}/{s['id']}")
                        client.get(f"/sessions/{s['agent']}/{s['id']}/events", {"limit": 200})
                    else:
                        client.get("/agents")
                else:
                    client.get("/stats", {"by": rng.choice(["day", "model", "agent", "project"])})
            except (ApiError, OSError) as err:
                with lock:
                    errors.append(f"{op}: {err}")
                continue
            with lock:
                latencies[op].append(time.perf_counter() - started)
        client.close()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    try:
        wait_until(lambda: (d.unix().health()["index"] or {}).get("updates", 0) >= 1, 1800, "the initial index", interval=0.5)
        index_seconds = time.monotonic() - started
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    report = d.unix().health()["index"]["last_report"]
    d.cleanup()
    every = [v for vs in latencies.values() for v in vs]
    return {
        "clients": clients,
        "index_seconds": round(index_seconds, 1),
        "index_report": report,
        "requests": len(every),
        "errors": len(errors),
        "error_samples": errors[:5],
        "all": summary_ms(every),
        **{op: summary_ms(vs) for op, vs in latencies.items()},
    }


# -- 2. append → visible -------------------------------------------------------------------
def bench_append(work: Path, src: Path, appends: int) -> dict[str, Any]:
    d = start_daemon(work, src, "append")
    d.start(timeout=1800)
    wait_until(lambda: d.unix().health()["index"]["state"] == "idle", 600, "an idle writer")
    sessions = d.unix().call("sessions.list", {"agent": "claude-code", "limit": 20})["sessions"]
    session = next(s for s in sessions if s["path"].endswith(".jsonl") and not s.get("parent"))
    path = Path(session["path"])
    follow = SseCollector(d.tcp(), f"/sessions/claude-code/{session['id']}/follow")
    rest = d.tcp()
    to_stream: list[float] = []
    to_search: list[float] = []
    service_update: list[float] = []  # update_index's own time for the append (from /health)
    unix = d.unix()
    try:
        for i in range(appends):
            word = f"bench{i:03d}x{uuid.uuid4().hex[:6]}"
            line, _ = claude_user_line(session["id"], f"benchmark append {word}", cwd=session.get("cwd") or "/tmp")
            started = time.perf_counter()
            append(path, line)
            follow.wait_for(lambda e, w=word: e.event == "event" and w in (e.data.get("text") or ""), 30, word)
            to_stream.append(time.perf_counter() - started)
            while not rest.get("/search", {"q": word})["hits"]:
                if time.perf_counter() - started > 30:
                    raise TimeoutError(word)
                time.sleep(0.005)
            to_search.append(time.perf_counter() - started)
            report = unix.health()["index"]["last_report"] or {}
            service_update.append(float(report.get("seconds") or 0))
            time.sleep(0.05)
    finally:
        follow.close()
        d.cleanup()
    return {
        "appends": appends,
        "to_follow": summary_ms(to_stream),
        "to_search": summary_ms(to_search),
        "service_update_index": summary_ms(service_update),
    }


# -- 3. idle CPU ---------------------------------------------------------------------------
def process_tree_ticks(pid: int) -> int:
    """utime + stime of ``pid`` and all its live descendants, in clock ticks."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
    tree, frontier = {pid}, [pid]
    while frontier:
        cur = frontier.pop()
        for child, parent in parents.items():
            if parent == cur and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(ticks.get(p, 0) for p in tree)


def bench_idle(work: Path, src: Path, seconds: float) -> dict[str, Any]:
    d = start_daemon(work, src, "idle")
    d.start(wait_indexed=False)
    try:
        assert d.proc is not None
        start_ticks = process_tree_ticks(d.proc.pid)  # the same counter while it works, as a control
        wait_until(lambda: (d.unix().health()["index"] or {}).get("updates", 0) >= 1, 1800, "the first scan", interval=0.5)
        index_cpu = (process_tree_ticks(d.proc.pid) - start_ticks) / CLK_TCK
        wait_until(lambda: d.unix().health()["index"]["state"] == "idle", 600, "an idle writer")
        time.sleep(10)  # let the last settle re-reads (files written < 5 s ago) happen
        assert d.proc is not None
        pid = d.proc.pid
        before, t0 = process_tree_ticks(pid), time.monotonic()
        time.sleep(seconds)
        after, t1 = process_tree_ticks(pid), time.monotonic()
        watch = d.unix().health()["watch"]["mode"]
    finally:
        d.cleanup()
    cpu = (after - before) / CLK_TCK
    return {
        "seconds": round(t1 - t0, 1),
        "cpu_seconds": round(cpu, 3),
        "percent_of_one_core": round(100 * cpu / (t1 - t0), 3),
        "watch": watch,
        "control_cpu_seconds_while_indexing": round(index_cpu, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/agtd-bench", help="scratch directory (corpus and daemons)")
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--appends", type=int, default=100)
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--only", default="load,append,idle")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    src, needles = corpus(work, args.mb)
    out: dict[str, Any] = {"corpus_mb": args.mb, "cores": os.cpu_count()}
    only = set(args.only.split(","))
    if "load" in only:
        out["load"] = bench_load(work, src, needles, args.clients)
        print(json.dumps({"load": out["load"]}), file=sys.stderr)
    if "append" in only:
        out["append"] = bench_append(work, src, args.appends)
        print(json.dumps({"append": out["append"]}), file=sys.stderr)
    if "idle" in only:
        out["idle"] = bench_idle(work, src, args.idle)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
