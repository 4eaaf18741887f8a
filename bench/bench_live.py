#!/usr/bin/env python3
"""Live usage figures on a generated corpus: ``usage.live`` in-process and over HTTP, and
`agtail statusline` as a whole process through a running daemon.

Usage: bench/bench_live.py CORPUS [--data-dir DIR] [--runs 20] [--json] [--ccusage PATH]

CORPUS is a bench/gen_corpus.py output (``CORPUS/claude/projects``, ``CORPUS/codex/sessions``).
The index is built in ``--data-dir`` (default: a temporary one) unless it is there already.

* in-process: the service's ``usage.live`` (what the daemon does per request), best, median and
  p95 of 7, wall and CPU; once at the real clock and once at the corpus' last activity (its
  last sessions active, the Claude block open; ``live_usage(now=…)``). gen_corpus.py starts a
  session every 1 to 600 minutes from 2026-01-01: a 20 MB corpus is weeks old at the real
  clock, a 2 GB one runs to 2032 — the real clock falls inside it, with two thirds of its
  sessions dated after it (what a clock set back years looks like);
* HTTP: ``GET /api/v1/usage/live`` and ``…?session=…&sessions=false`` (the statusline's
  request) to an idle agtaild (its start-up rescan and its background secrets scan of an index
  that `agtail index` built finished: a scanning daemon spends a third of a core), best,
  median and p95 of 30, and the daemon's own CPU per
  request (its /proc counters: what load on a shared machine does not inflate);
* the statusline: ``agtail --data-dir DIR statusline`` with a Claude session's statusline JSON on
  stdin, through the daemon, alternating with ``python -c pass``, ``agtail stats`` (the CLI
  start-up figure of bench/RESULTS.md) and the same statusline through the full CLI
  (agtaild.cli.main, what the fast path hands over to), ``--runs`` each; medians of wall time
  and of the child's CPU (wait4), the way bench/bench_first_minute.py measures the CLI; and
  whether the fast path answered (``fast_path``: agtaild.cli was not imported);
* with ``--ccusage``: Claude's 5-hour blocks of the whole index against ``ccusage blocks`` on the
  same files, and the block ``usage.live`` shows inside every 50th of them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "clients" / "python")]
#: The `agtail` console script, and the full command line behind it (what the statusline's
#: fast path hands over to; measured beside it).
MAIN = "import sys; from agtaild.entry import main; sys.exit(main())"
FULL = "import sys; from agtaild.cli import main; sys.exit(main())"


def run_rusage(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[int, bytes, float, float]:
    """(exit code, stdout, wall seconds, CPU seconds of the child alone: reaped with wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return os.waitstatus_to_exitcode(status), out, wall, usage.ru_utime + usage.ru_stime


def timed(call: Any, repeat: int = 7) -> dict[str, float]:
    """Best, median and p95 wall time and median CPU of ``repeat`` calls after a first one."""
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
        "wall_p95_ms": round(sorted(walls)[max(0, round(0.95 * len(walls)) - 1)] * 1e3, 2),
        "cpu_median_ms": round(statistics.median(cpus) * 1e3, 2),
    }


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def daemon_timed(call: Any, pid: int, repeat: int = 30) -> dict[str, float]:
    """:func:`timed`, and the daemon's own CPU per call (its /proc counters over the calls)."""
    before = process_cpu(pid)
    doc = timed(call, repeat)
    doc["daemon_cpu_per_call_ms"] = round((process_cpu(pid) - before) / (repeat + 1) * 1e3, 2)
    return doc


def roots(corpus: Path) -> dict[str, Path]:
    return {"claude-code": corpus / "claude" / "projects", "codex": corpus / "codex" / "sessions"}


def build_index(corpus: Path, data: Path, env: dict[str, str]) -> float:
    argv = [sys.executable, "-c", MAIN, "--data-dir", str(data), "--no-daemon", "--only-roots"]
    for agent, path in roots(corpus).items():
        argv += ["--root", f"{agent}={path}"]
    t = time.perf_counter()
    subprocess.run([*argv, "index"], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def in_process(corpus: Path, data: Path) -> dict[str, Any]:
    from agtaild.config import Config, RootSpec
    from agtaild.index.live import live_usage
    from agtaild.query.service import Service

    svc = Service(
        Config(
            data_dir=str(data), roots=[RootSpec(a, str(p)) for a, p in roots(corpus).items()], archive=False
        )
    )
    try:
        db = svc._reader()
        last = float(db.execute("SELECT max(activity) FROM sessions").fetchone()[0])
        heavy = live_usage(db, svc.pricing(), now=last)
        return {
            "sessions_in_index": db.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "real_clock": timed(lambda: svc.call("usage.live", {})),
            "at_last_activity": {
                "active_sessions": len(heavy["sessions"]),
                "block_responses": next(
                    (w["usage"]["responses"] for w in heavy["windows"] if w["kind"] == "block"), 0
                ),
                **timed(lambda: live_usage(db, svc.pricing(), now=last)),
            },
        }
    finally:
        svc.close()


def ccusage_blocks(corpus: Path, data: Path, ccusage: str) -> dict[str, Any]:
    """Claude's 5-hour blocks from the index against ``ccusage blocks`` on the same files: the
    whole history (every block), and the block ``usage.live`` shows a minute after the last
    response of every 50th block (the live path: a lookback from that moment)."""
    from agtaild.config import Config
    from agtaild.index.live import CLAUDE, agent_entries, live_usage
    from agtaild.index.windows import billing_blocks
    from agtaild.query.service import Service
    from tests.test_live_usage_ccusage import iso, parse

    with tempfile.TemporaryDirectory(prefix="ccusage-home-") as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "TZ": "UTC",
            "CLAUDE_CONFIG_DIR": str(corpus / "claude"),
        }
        t = time.perf_counter()
        out = subprocess.run(
            [ccusage, "blocks", "--json", "--offline"], env=env, capture_output=True, text=True, check=True
        )
        seconds = time.perf_counter() - t

    def shape(start: str, end: str, last: str, entries: int, total: int, io: int) -> dict[str, Any]:
        return {"start": start, "end": end, "last": last, "entries": entries, "total": total, "io": io}

    theirs = [
        shape(b["startTime"], b["endTime"], b["actualEndTime"], b["entries"], b["totalTokens"],
              b["tokenCounts"]["inputTokens"] + b["tokenCounts"]["outputTokens"])
        for b in json.loads(out.stdout)["blocks"] if not b.get("isGap")
    ]  # fmt: skip
    svc = Service(Config(data_dir=str(data), roots=[], archive=False))
    try:
        db = svc._reader()
        entries = agent_entries(db, svc.pricing(), CLAUDE, None)
        ours = [
            shape(iso(b.start), iso(b.end), iso(b.last), len(b.entries), b.tokens(), b.io_tokens())
            for b in billing_blocks(entries)
        ]
        checked = different = 0
        for block in theirs[::50]:
            now = parse(block["last"]) + 60
            if now >= parse(block["end"]):
                continue
            doc = live_usage(db, svc.pricing(), now=now, sessions=False)
            w = next((x for x in doc["windows"] if x["kind"] == "block"), None)
            got = None if w is None else shape(
                iso(parse(w["start"])), iso(parse(w["end"])), iso(parse(w["last"])),
                w["usage"]["responses"], w["usage"]["total_tokens"], w["io_tokens"],
            )  # fmt: skip
            checked += 1
            different += got != block
    finally:
        svc.close()
    return {"ccusage_seconds": round(seconds, 1), "blocks": len(theirs), "ours": len(ours), "equal": theirs == ours,
            "live_moments": checked, "live_different": different}  # fmt: skip


def latest_claude(data: Path) -> tuple[str, str]:
    db = sqlite3.connect(f"file:{data / 'index.sqlite3'}?mode=ro", uri=True)
    try:
        sid, path = db.execute(
            "SELECT s.sid, f.path FROM sessions s JOIN files f ON f.id = s.file_id WHERE s.agent = 'claude-code'"
            " ORDER BY s.activity DESC LIMIT 1"
        ).fetchone()
        return str(sid), str(path)
    finally:
        db.close()


def through_daemon(corpus: Path, data: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    from tests.daemon_proc import DaemonProc

    base = Path(tempfile.mkdtemp(prefix="agtail-bench-live-"))
    (base / "data").symlink_to(data.resolve())
    daemon = DaemonProc(base, roots(corpus), extra=["--no-archive"])
    daemon.start(timeout=1800)
    try:
        client = daemon.tcp()
        deadline = time.monotonic() + 1800
        idle_since = None
        while time.monotonic() < deadline:  # an idle daemon: its start-up rescan and its secrets scan done
            health = client.get("/health")
            busy = health.get("progress") is not None or (health.get("index") or {}).get("state") != "idle"
            idle_since = None if busy else idle_since or time.monotonic()
            if idle_since is not None and time.monotonic() - idle_since >= 5:
                break
            time.sleep(0.5)
        sid, path = latest_claude(data)
        assert daemon.proc is not None
        pid = daemon.proc.pid
        http = {
            "live": daemon_timed(lambda: client.get("/usage/live", {}), pid),
            "statusline_request": daemon_timed(
                lambda: client.get("/usage/live", {"session": f"claude-code:{sid}", "sessions": "false"}), pid
            ),
        }
        client.close()
        stdin = json.dumps(
            {
                "session_id": sid,
                "transcript_path": path,
                "cwd": "/",
                "model": {"id": "x", "display_name": "X"},
            }
        ).encode()
        agtail = [sys.executable, "-c", MAIN, "--data-dir", str(base / "data")]
        full = [sys.executable, "-c", FULL, "--data-dir", str(base / "data")]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            "stats": ([*agtail, "stats"], b""),
            "statusline": ([*agtail, "statusline"], stdin),
            "statusline, full CLI": ([*full, "statusline"], stdin),
        }
        # Which path answered: the fast one imports no agtaild.cli.
        probe = subprocess.run(
            [sys.executable, "-X", "importtime", *agtail[1:], "statusline"],
            input=stdin,
            env=env,
            capture_output=True,
        )
        fast_path = b"| agtaild.cli\n" not in probe.stderr and b"agtaild.statusline_fast" in probe.stderr
        line = b""
        for name, (argv, given) in commands.items():  # warm the page cache once
            code, out, _w, _c = run_rusage(argv, env, given)
            if code != 0:
                raise RuntimeError(f"{name} failed with {code}")
            if name == "statusline":
                line = out
        if not line.strip():
            raise RuntimeError("the statusline printed nothing")
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(runs):
            for name, (argv, given) in commands.items():  # alternating: load hits every command alike
                _code, _out, wall, cpu = run_rusage(argv, env, given)
                walls[name].append(wall)
                cpus[name].append(cpu)
        processes = {
            name: {"wall_median_ms": round(statistics.median(walls[name]) * 1e3, 1),
                   "wall_best_ms": round(min(walls[name]) * 1e3, 1),
                   "cpu_median_ms": round(statistics.median(cpus[name]) * 1e3, 1)}
            for name in commands
        }  # fmt: skip
        return {"http": http, "processes": processes, "line": line.decode().strip(), "fast_path": fast_path}
    finally:
        daemon.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ccusage", help="also compare Claude's blocks with this ccusage's `blocks` (20.0.24)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agtail-live-"))
    data = args.data_dir or work / "data"
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "PYTHONPATH": f"{REPO}:{REPO / 'clients' / 'python'}",
        "AGTAIL_ARCHIVE": "0",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("AGTAIL_DATA_DIR", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "agtaild"), str(REPO / "clients" / "python")],
        check=True,
    )
    result: dict[str, Any] = {"load": os.getloadavg()[0]}
    if not (data / "index.sqlite3").exists():
        result["index_seconds"] = round(build_index(args.corpus, data, env), 1)
    result["in_process"] = in_process(args.corpus, data)
    result["daemon"] = through_daemon(args.corpus, data, env, args.runs)
    if args.ccusage:
        result["ccusage_blocks"] = ccusage_blocks(args.corpus, data, args.ccusage)
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result, indent=None if args.json else 1))
    if args.data_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
