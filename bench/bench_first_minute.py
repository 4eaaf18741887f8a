#!/usr/bin/env python3
"""The first minute of a new install, and the CLI's start-up against a running daemon.

    bench/bench_first_minute.py CORPUS [--runs 3] [--startup-runs 40] [--archive]

CORPUS is a bench/gen_corpus.py output (``OUT/claude/projects``, ``OUT/codex/sessions``). Its
files are first given the mtime of their last record (``--no-touch`` skips that): a real
agent's newest transcript is also its most recently written file, and the daemon indexes
newest first by mtime, which the generator's write order would not reflect.

Figure 1 (each run on a fresh data dir): start ``agtaild`` and, from the moment of the start,
run whole ``agtail list --limit 50 --json`` processes back to back until one returns 50
sessions, then ``agtail show`` the newest. Reported: seconds from the start until the daemon
answers at all, until list has 50 sessions, until show worked; when the first update finished
(the cold index time, from /health ``index.last_scan``); a few /health ``progress`` samples.

Figure 3: against the daemon (index complete), ``python -c pass`` and ``agtail search WORD``,
``list``, ``stats`` as whole processes, alternating, ``--startup-runs`` each: medians of wall
time and of CPU time (user + sys of the child, from wait4).

Prints one JSON document; the load average is in it (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from calendar import timegm
from pathlib import Path
from typing import Any

VENV_BIN = Path(sys.executable).parent
AGTAIL = str(VENV_BIN / "agtail")
AGTAILD = str(VENV_BIN / "agtaild")
STAMP = re.compile(rb'"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)')


def touch_by_last_record(corpus: Path) -> int:
    """Give each transcript the mtime of its last timestamped record; returns how many."""
    n = 0
    for path in corpus.rglob("*.jsonl"):
        with path.open("rb") as fh:
            fh.seek(max(path.stat().st_size - 65536, 0))
            tail = fh.read()
        stamps = STAMP.findall(tail)
        if not stamps:
            continue
        when = timegm(time.strptime(stamps[-1].decode(), "%Y-%m-%dT%H:%M:%S"))
        os.utime(path, (when, when))
        n += 1
    return n


def roots(corpus: Path) -> list[str]:
    return ["--only-roots", "--root", f"claude-code={corpus / 'claude/projects'}",
            "--root", f"codex={corpus / 'codex/sessions'}"]  # fmt: skip


def run_rusage(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, float, float]:
    """(exit code, stdout, wall seconds, CPU seconds of the child alone: reaped with wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, wall, usage.ru_utime + usage.ru_stime


def settle_archive(data: Path) -> None:
    """Wait for the archive's finisher the daemon's first index started (it goes on after the
    daemon: agtaild.store.archive.finish), so the next run does not share the machine with it."""
    store = data / "archive" / ".zstore"
    if (store / "pins").is_dir():
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from agtaild.store.archive import finish as archive_finish

        archive_finish.wait(store, 600)


class Daemon:
    def __init__(self, corpus: Path, archive: bool) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="fm-bench-"))
        self.data = self.base / "data"
        self.home = self.base / "home"
        self.home.mkdir()
        self.env = {**os.environ, "HOME": str(self.home), "XDG_RUNTIME_DIR": str(self.base / "run")}
        self.env.pop("AGTAIL_DATA_DIR", None)
        argv = [AGTAILD, "--data-dir", str(self.data), "--listen", "none",
                "--socket", str(self.base / "d.sock"), *roots(corpus)]  # fmt: skip
        if not archive:
            argv.append("--no-archive")
        self.log = (self.base / "agtaild.log").open("wb")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=self.log, env=self.env)

    def agtail(self, *args: str) -> tuple[int, bytes, float, float]:
        return run_rusage([AGTAIL, "--data-dir", str(self.data), *args], self.env)

    def health(self) -> dict[str, Any] | None:
        from agtail_client import Client

        client = Client.discover(str(self.data))
        if client is None:
            return None
        try:
            doc: dict[str, Any] = client.health(timeout=5.0)
            return doc
        finally:
            client.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        settle_archive(self.data)
        shutil.rmtree(self.base, ignore_errors=True)


def first_minute(corpus: Path, archive: bool) -> dict[str, Any]:
    d = Daemon(corpus, archive)
    out: dict[str, Any] = {}
    samples: list[dict[str, Any]] = []
    try:
        answering = listed = shown = None
        while time.perf_counter() < d.started + 120 and answering is None:
            if d.proc.poll() is not None:
                raise RuntimeError(f"agtaild exited: {(d.base / 'agtaild.log').read_text()[-2000:]}")
            try:
                if d.health() is not None:
                    answering = time.perf_counter() - d.started
            except OSError:
                pass
            time.sleep(0.02)
        attempts = 0
        tries: list[dict[str, Any]] = []
        newest: dict[str, Any] | None = None
        deadline = d.started + 120
        while time.perf_counter() < deadline:
            if d.proc.poll() is not None:
                raise RuntimeError(f"agtaild exited: {(d.base / 'agtaild.log').read_text()[-2000:]}")
            attempts += 1
            began = time.perf_counter() - d.started
            code, stdout, wall, _cpu = d.agtail("list", "--limit", "50", "--json")
            got = len(json.loads(stdout)["sessions"]) if code == 0 else None
            tries.append({"at": round(began, 2), "wall": round(wall, 2), "sessions": got})
            if code == 0:
                sessions = json.loads(stdout)["sessions"]
                if len(sessions) >= 50:
                    listed = time.perf_counter() - d.started
                    newest = sessions[0]
                    break
        if newest is not None:
            code, stdout, _wall, _cpu = d.agtail("show", f"{newest['agent']}:{newest['id']}", "--json")
            if code == 0 and json.loads(stdout).get("session", {}).get("id") == newest["id"]:
                shown = time.perf_counter() - d.started
        out.update(answering_s=answering, list50_s=listed, show_newest_s=shown, list_attempts=tries)
        # Then follow the index to its end through /health.
        done_at = None
        while time.perf_counter() < d.started + 600:
            h = d.health() or {}
            if h.get("progress"):
                samples.append({"t": round(time.perf_counter() - d.started, 2), **h["progress"]})
            index = h.get("index") or {}
            if index.get("updates", 0) >= 1 and index.get("state") == "idle":
                done_at = time.perf_counter() - d.started
                out["first_update_seconds"] = (index.get("last_report") or {}).get("seconds")
                out["sessions"] = (index.get("last_report") or {}).get("sessions")
                break
            time.sleep(0.5)
        out["indexed_s"] = done_at
        out["progress_samples"] = samples[:: max(len(samples) // 6, 1)]
    finally:
        d.stop()
    return out


def compile_sources(*dirs: Path, compiled: bool = True) -> None:
    """Byte-compile, as an install does: with PYTHONDONTWRITEBYTECODE set (this machine sets
    it) an editable checkout would otherwise compile every module of agtail at each start.
    ``compiled=False`` removes the compiled files instead (to time that case)."""
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *map(str, dirs)], check=True)
        return
    for d in dirs:
        for cache in d.rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)


def startup(corpus: Path, runs: int, word: str, baseline: Path | None, compiled: bool) -> dict[str, Any]:
    import agtail_client
    import agtaild

    here = [Path(agtaild.__file__).parent, Path(agtail_client.__file__).parent]
    there = [] if baseline is None else [baseline / "agtaild", baseline / "clients/python/agtail_client"]
    compile_sources(*here, *there, compiled=compiled)
    d = Daemon(corpus, archive=False)
    try:
        while True:  # wait for the index to be complete: the figure is the CLI's, not the index's
            h = d.health() or {}
            if (h.get("index") or {}).get("updates", 0) >= 1 and not h.get("progress"):
                break
            time.sleep(0.5)
        base_env = dict(d.env)
        if baseline is not None:
            base_env["PYTHONPATH"] = f"{baseline}:{baseline / 'clients/python'}"
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], d.env)
        }
        for name, args in ((f"search {word}", ["search", word]), ("list", ["list"]), ("stats", ["stats"])):
            commands[name] = ([AGTAIL, "--data-dir", str(d.data), *args], d.env)
            if baseline is not None:
                commands[f"{name} (baseline)"] = ([AGTAIL, "--data-dir", str(d.data), *args], base_env)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for name, (argv, env) in commands.items():  # warm the page cache once
            code, _out, _w, _c = run_rusage(argv, env)
            if code != 0:
                raise RuntimeError(f"{name} failed with {code}")
        for _ in range(runs):
            for name, (argv, env) in commands.items():  # alternating: load hits every command alike
                _code, _out, wall, cpu = run_rusage(argv, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        base_w = statistics.median(walls["python -c pass"])
        base_c = statistics.median(cpus["python -c pass"])
        result: dict[str, Any] = {}
        for name in commands:
            w, c = statistics.median(walls[name]), statistics.median(cpus[name])
            result[name] = {
                "wall_ms": round(w * 1000, 1),
                "cpu_ms": round(c * 1000, 1),
                "wall_ratio": round(w / base_w, 2),
                "cpu_ratio": round(c / base_c, 2) if base_c else None,
            }
        return result
    finally:
        d.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--runs", type=int, default=3, help="cold starts (default 3)")
    ap.add_argument("--startup-runs", type=int, default=40, help="runs of each start-up command (default 40)")
    ap.add_argument(
        "--archive", action="store_true", help="mirror into the archive, as shipped (default: off)"
    )
    ap.add_argument("--no-touch", action="store_true", help="keep the files' mtimes")
    ap.add_argument("--word", default="needle000097zq", help="the search word (default: a planted needle)")
    ap.add_argument(
        "--baseline", type=Path, help="a source tree (git archive of another commit) to time beside"
    )
    ap.add_argument("--no-compile", action="store_true", help="time agtail without its byte-compiled files")
    ap.add_argument("--skip-first-minute", action="store_true")
    ap.add_argument("--skip-startup", action="store_true")
    args = ap.parse_args()
    doc: dict[str, Any] = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    if not args.no_touch:
        doc["touched"] = touch_by_last_record(args.corpus)
    if not args.skip_first_minute:
        doc["first_minute"] = [first_minute(args.corpus, args.archive) for _ in range(args.runs)]
        doc["load_after_first_minute"] = os.getloadavg()
    if not args.skip_startup:
        doc["startup"] = startup(
            args.corpus, args.startup_runs, args.word, args.baseline, not args.no_compile
        )
    doc["load_after"] = os.getloadavg()
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
