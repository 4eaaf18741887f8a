#!/usr/bin/env python3
"""`agtail` read commands through a running daemon, as whole processes, against a bare
``python -c pass``: the start-up figure of bench/RESULTS.md, measured as bars would be.

    bench/bench_cli_start.py [--corpus DIR] [--runs 15]

One daemon (temporary HOME and data dir, ``--only-roots``, the Claude Code and Codex folders of
``--corpus``: default the repository's tests/corpus) answers; then each run starts, in turn, a
bare interpreter and ``agtail list`` / ``search WORD`` / ``stats`` / ``show REF`` (the same
interpreter, alternated, so load drifts alike for all), twice over: once as installed (byte-code
beside the modules: `make start` and `make test` compile it) and once with none to read for
agtail's own modules (a copy of them without ``__pycache__`` first on the path, and
``PYTHONDONTWRITEBYTECODE=1``: each compiled anew by every command, as an editable install
runs where byte-code is never written; the standard library keeps its own). Medians of wall and CPU time
(user + system of the child), and their ratios to the bare start, as one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def wait_for_daemon(data_dir: Path, deadline: float) -> str:
    """A session reference once the daemon answers with an index that has sessions."""
    from agtail_client import Client

    while time.monotonic() < deadline:
        client = Client.discover(data_dir, timeout=5)
        if client is not None:
            try:
                health = client.health()
                sessions = client.call("sessions.list", {"limit": 1}).get("sessions") or []
            finally:
                client.close()
            if sessions and (health.get("index") or {}).get("state") == "idle":
                return f"{sessions[0]['agent']}:{sessions[0]['id']}"
        time.sleep(0.5)
    raise SystemExit("the daemon did not answer within 120 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "tests" / "corpus")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--word", default="fixture")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agtail-cli-start-"))
    home, run = work / "home", work / "run"
    home.mkdir()
    run.mkdir(mode=0o700)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(run),
        "AGTAIL_DATA_DIR": str(work / "data"),
        "AGTAIL_LISTEN": "none",
    }
    roots = []
    for agent in ("claude-code", "codex"):
        if (opts.corpus / agent).is_dir():
            roots += ["--root", f"{agent}={opts.corpus / agent}"]
    # The installed case reads byte-code: compile it now, as `make start` / `make test` do.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(REPO / "agtaild"),
                    str(REPO / "clients" / "python" / "agtail_client")], check=True, stdout=subprocess.DEVNULL)
    daemon = subprocess.Popen([str(BIN / "agtaild"), "--only-roots", *roots], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ref = wait_for_daemon(work / "data", time.monotonic() + 120)
        agtail = str(BIN / "agtail")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "list": [agtail, "list"],
            "search": [agtail, "search", opts.word],
            "stats": [agtail, "stats"],
            "show": [agtail, "show", ref],
        }
        # agtail's modules without their byte-code (the standard library keeps its own), first
        # on the path: what every command compiles when none was ever written.
        bare_src = work / "src"
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(REPO / "agtaild", bare_src / "agtaild", ignore=skip)
        shutil.copytree(REPO / "clients" / "python" / "agtail_client", bare_src / "agtail_client", ignore=skip)
        cases = {
            "byte-compiled": {**env, "PYTHONDONTWRITEBYTECODE": "1"},
            "no byte-code": {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(bare_src)},
        }
        loads = [os.getloadavg()[0]]
        out: dict[str, object] = {"corpus": str(opts.corpus), "runs": opts.runs}
        for case, case_env in cases.items():
            walls: dict[str, list[float]] = {k: [] for k in commands}
            cpus: dict[str, list[float]] = {k: [] for k in commands}
            for _ in range(opts.runs):
                for name, argv in commands.items():
                    wall, cpu = timed(argv, case_env)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            loads.append(os.getloadavg()[0])
            bare_wall = statistics.median(walls["python -c pass"])
            bare_cpu = statistics.median(cpus["python -c pass"])
            out[case] = {
                name: {
                    "wall_ms": round(statistics.median(walls[name]) * 1000, 1),
                    "cpu_ms": round(statistics.median(cpus[name]) * 1000, 1),
                    "wall_x": round(statistics.median(walls[name]) / bare_wall, 2),
                    "cpu_x": round(statistics.median(cpus[name]) / bare_cpu, 2),
                }
                for name in commands
            }
        out["load_1min"] = [round(x, 2) for x in loads]
        print(json.dumps(out, indent=1))
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
