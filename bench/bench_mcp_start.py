#!/usr/bin/env python3
"""How soon `agtail mcp` answers ``initialize``, as an agent starting it meets it: a fresh
process, the request written at once, the clock stopped at its answer (tests/mcp_probe.py).

Three cases, alternated run by run so that load hits each alike: in-process on a new data dir
(the roots resolved and a first index started behind the handshake), through a running agtaild,
and the floor every Python program pays, ``python -c pass``. Beside them, what importing the
SDK's stdio server costs (the old path paid it before reading stdin). The figure to hold:
≤ 300 ms on this machine; the machine may be shared, so the load average is printed too.

Usage: bench/bench_mcp_start.py [--runs 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "clients" / "python")]

from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL, DaemonProc  # noqa: E402
from tests.mcp_probe import agtail_argv, env_for, handshake  # noqa: E402


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return time.monotonic() - started


def summary(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    return {"median_ms": round(statistics.median(ms), 1), "min_ms": round(ms[0], 1), "max_ms": round(ms[-1], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="agtail-mcp-bench-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        env = env_for(home)
        env.pop("AGTAIL_DATA_DIR", None)
        env["XDG_DATA_HOME"] = str(base / "xdg")
        roots = ["--only-roots", "--root", f"claude-code={CLAUDE_REAL}", "--root", f"codex={CODEX_REAL}"]
        daemon = DaemonProc(base / "daemon", {"claude-code": CLAUDE_REAL, "codex": CODEX_REAL})
        (base / "daemon").mkdir()
        load_before = os.getloadavg()
        daemon.start()
        try:
            times: dict[str, list[float]] = {"in_process": [], "daemon": [], "python_pass": []}
            for run in range(args.runs):
                fresh = agtail_argv("--data-dir", str(base / f"fresh-{run}"), *roots, "mcp")
                done = handshake(fresh, env)
                assert done["initialize"] and "result" in done["initialize"], done["stderr"][-2000:]
                times["in_process"].append(done["seconds"])
                through = agtail_argv("--data-dir", str(daemon.data_dir), *roots, "mcp")
                done = handshake(through, env)
                assert done["initialize"] and "result" in done["initialize"], done["stderr"][-2000:]
                times["daemon"].append(done["seconds"])
                times["python_pass"].append(wall([sys.executable, "-c", "pass"], env))
            sdk = [wall([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], env)
                   for _ in range(max(3, args.runs // 3))]
        finally:
            daemon.cleanup()
        doc = {
            "runs": args.runs,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
            **{name: summary(values) for name, values in times.items()},
            "sdk_import": summary(sdk),
        }
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{args.runs} runs; load {doc['load_before']} → {doc['load_after']}; {doc['cpus']} CPUs")
        for name in ("in_process", "daemon", "python_pass", "sdk_import"):
            s = doc[name]
            print(f"{name:12} median {s['median_ms']:7.1f} ms  (min {s['min_ms']:.1f}, max {s['max_ms']:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
