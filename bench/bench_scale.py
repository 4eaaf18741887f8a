#!/usr/bin/env python3
"""Issue #32 at scale: a running agtaild on a large corpus against the same on a 200 MB one.

For each corpus (the base first, then the large one) an agtaild is started on an empty data
dir (archive off) and does the cold index itself, as a new install's daemon does; meanwhile
this script samples, every ``--sample`` seconds, the resident memory of the daemon's whole
process tree (its readers included, from /proc) and the ``progress`` of ``/health``. Then:

* cold index: seconds and MB/s (the daemon's first scan, its own report), the CPU of the tree
  (the daemon's utime + stime + its reaped children's, and any live descendant's);
* progress: the ETA ``/health`` gave when half the bytes were read, against the real rest;
* idle: once the daemon has settled (no update, no secrets pass, ``--settle`` s quiet), the
  tree's RSS and its CPU over ``--idle`` seconds (/proc ticks);
* every query over HTTP (the REST API), ``--rounds`` requests after one warm-up: p50 / p95 of
  the wall time and the daemon's CPU per request; stats are computed anew (``no-cache``).

    bench/bench_scale.py --corpus /work/cache/corpus-10000 --base /tmp/scale/c200 --work /tmp/scale
           [--rounds 20] [--idle 60] [--json OUT] [--keep-index]

"Idle" waits for the daemon's background secrets pass over the new index (~2,000 events a
second on this machine: ~40 minutes at 10 GB); ``--no-secrets-wait`` measures while it runs.
``--keep-index``: reuse a data dir a previous run left in ``--work`` (no cold index; the
queries and idle figures only: after a change that needs no re-index, or an index migration).
Corpora are bench/gen_corpus.py's (their summary JSON beside them, ``DIR.json``). Run it with
``nice -n 5`` on a shared machine; the load average is recorded before and after each part.
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
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "clients" / "python"))

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PHRASES = ("refactor the parser", "token usage cost", "import store collection", "cache read write")
#: bench/gen_corpus.py plants one rare word in every 97th session, named after its number: these
#: five are in the 200 MB corpus (1,193 sessions) and in every larger one (seed 1).
NEEDLES = tuple(f"needle{n * 97:06d}zq" for n in (0, 3, 6, 9, 12))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def proc_table() -> dict[int, tuple[int, int, int]]:
    """pid → (parent, utime + stime ticks, rss pages) of every process."""
    out: dict[int, tuple[int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        f = stat[stat.rfind(")") + 2 :].split()
        out[int(entry)] = (int(f[1]), int(f[11]) + int(f[12]), int(f[21]))
    return out


def tree(pid: int) -> dict[str, Any]:
    """The process tree under ``pid``: its RSS (sum of the members'), its CPU ticks (each
    member's own, plus what ``pid`` reaped from children that ended), its size."""
    procs = proc_table()
    members, frontier = {pid}, [pid]
    while frontier:
        cur = frontier.pop()
        for child, (parent, _t, _r) in procs.items():
            if parent == cur and child not in members:
                members.add(child)
                frontier.append(child)
    reaped = 0
    try:
        f = Path(f"/proc/{pid}/stat").read_text()
        f2 = f[f.rfind(")") + 2 :].split()
        reaped = int(f2[13]) + int(f2[14])
    except OSError:
        pass
    live = [procs[p] for p in members if p in procs]
    return {
        "rss": sum(r for _p, _t, r in live) * PAGE,
        "ticks": sum(t for _p, t, _r in live) + reaped,
        "procs": len(live),
        "parent_rss": procs.get(pid, (0, 0, 0))[2] * PAGE,
    }


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


class Run:
    """One daemon on one corpus: the cold index, idle, then the queries."""

    def __init__(self, corpus: Path, work: Path, tag: str, rounds: int) -> None:
        from tests.daemon_proc import DaemonProc

        self.corpus, self.rounds = corpus, rounds
        self.base = work / f"daemon-{tag}"
        roots = {"claude-code": corpus / "claude" / "projects", "codex": corpus / "codex" / "sessions"}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGTAIL_", "CLAUDE_", "CODEX_"))}
        env.pop("HOME", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
        self.daemon = DaemonProc(self.base, roots, env={**env, "TZ": "UTC", "AGTAIL_ARCHIVE": "0"})
        self.samples: list[dict[str, Any]] = []
        self.wait_secrets = True
        self.secrets_pending: Any = None
        self.peak: dict[str, int] = {"rss": 0, "procs": 0, "parent_rss": 0}

    # -- the cold index ---------------------------------------------------------------------
    def cold(self, sample: float) -> dict[str, Any]:
        shutil.rmtree(self.base, ignore_errors=True)
        self.base.mkdir(parents=True)
        before = load()
        t0 = time.monotonic()
        self.daemon.start(wait_indexed=False, timeout=120)
        assert self.daemon.proc is not None
        pid = self.daemon.proc.pid
        client = self.daemon.unix(timeout=120)
        done: dict[str, Any] = {}
        while True:
            t = time.monotonic() - t0
            snap = tree(pid)
            for k in self.peak:
                self.peak[k] = max(self.peak[k], snap[k])
            try:
                health = client.health()
            except OSError:
                health = {}
            index = health.get("index") or {}
            progress = health.get("progress")
            self.samples.append(
                {"t": round(t, 2), "rss": snap["rss"], "procs": snap["procs"], "progress": progress}
            )
            if index.get("updates", 0) >= 1:
                done = {"t": t, "report": index.get("last_report") or {}, "ticks": snap["ticks"]}
                break
            if self.daemon.proc.poll() is not None:
                raise RuntimeError(f"agtaild exited:\n{self.daemon.log()}")
            time.sleep(sample)
        client.close()
        report = done["report"]
        total = next((s["progress"]["bytes_total"] for s in reversed(self.samples) if s["progress"]), 0)
        return {
            "seconds": round(done["t"], 2),
            "index_seconds": report.get("seconds"),
            "sessions": report.get("sessions"),
            "events": report.get("events"),
            "bytes": total,
            "mb_per_s": round(total / 2**20 / done["t"], 2) if done["t"] else None,
            "cpu_seconds": round(done["ticks"] / CLK_TCK, 1),
            "peak_rss_mb": round(self.peak["rss"] / 2**20, 1),
            "peak_parent_rss_mb": round(self.peak["parent_rss"] / 2**20, 1),
            "peak_procs": self.peak["procs"],
            "eta": self.eta(done["t"]),
            "progress_samples": sum(1 for s in self.samples if s["progress"]),
            # (seconds, phase, bytes done, ETA, RSS MB) of every sample: how the ETA moved.
            "trace": [
                [
                    s["t"],
                    (s["progress"] or {}).get("phase"),
                    (s["progress"] or {}).get("bytes_done"),
                    (s["progress"] or {}).get("eta_seconds"),
                    round(s["rss"] / 2**20),
                ]
                for s in self.samples
            ],
            "samples": len(self.samples),
            "load_before": before,
            "load_after": load(),
        }

    def eta(self, end: float) -> dict[str, Any]:
        """The ETA /health gave at the first sample with half the bytes read, against the time
        the index really took from there."""
        for s in self.samples:
            p = s["progress"]
            if (
                p
                and p.get("bytes_total")
                and p["bytes_done"] >= p["bytes_total"] / 2
                and p.get("eta_seconds") is not None
            ):
                real = end - s["t"]
                return {
                    "at": s["t"],
                    "done": round(p["bytes_done"] / p["bytes_total"], 3),
                    "eta": p["eta_seconds"],
                    "real": round(real, 1),
                    "error": round((p["eta_seconds"] - real) / real, 3) if real > 0 else None,
                }
        return {}

    def restart(self) -> None:
        """The daemon on the data dir a previous run indexed (``--keep-index``)."""
        self.daemon.start(wait_indexed=True, timeout=1800)

    # -- idle -------------------------------------------------------------------------------
    def idle(self, settle: float, seconds: float) -> dict[str, Any]:
        assert self.daemon.proc is not None
        pid = self.daemon.proc.pid
        client = self.daemon.unix(timeout=60)
        t0 = time.monotonic()
        quiet_since = None
        while time.monotonic() - t0 < 3600:
            h = client.health()
            index = h.get("index") or {}
            # Without waiting for the secrets pass, its steps (state "secrets", back to back)
            # count as idle: else the quiet seconds never come while it runs.
            quiet = ("idle",) if self.wait_secrets else ("idle", "secrets")
            busy = h.get("progress") is not None or index.get("state") not in quiet
            if self.wait_secrets:
                busy = busy or bool((index.get("secrets") or {}).get("pending"))
            pending = (index.get("secrets") or {}).get("pending")
            quiet_since = None if busy else quiet_since or time.monotonic()
            if quiet_since is not None and time.monotonic() - quiet_since >= settle:
                break
            time.sleep(1.0)
        waited = time.monotonic() - t0
        self.secrets_pending = pending
        client.close()
        before, w0 = tree(pid), time.monotonic()
        rss = [before["rss"]]
        while time.monotonic() - w0 < seconds:
            time.sleep(min(5.0, seconds))
            rss.append(tree(pid)["rss"])
        after, w1 = tree(pid), time.monotonic()
        cpu = (after["ticks"] - before["ticks"]) / CLK_TCK
        return {
            "settled_after": round(waited, 1),
            "seconds": round(w1 - w0, 1),
            "cpu_seconds": round(cpu, 3),
            "cpu_percent": round(100 * cpu / (w1 - w0), 3),
            "rss_mb": round(max(rss) / 2**20, 1),
            "parent_rss_mb": round(after["parent_rss"] / 2**20, 1),
            "procs": after["procs"],
            "secrets_pending": self.secrets_pending,
            "load": load(),
        }

    # -- queries ----------------------------------------------------------------------------
    def queries(self) -> dict[str, Any]:
        from agtail_client import ApiError
        from agtail_client.transport import API, document, query

        assert self.daemon.proc is not None
        pid = self.daemon.proc.pid
        client = self.daemon.tcp(timeout=300)

        def get(path: str, params: dict[str, Any], fresh: bool) -> Any:
            if not fresh:
                return client.get(path, params)
            status, raw = client.request(
                "GET", API + path + query(params), headers={"Cache-Control": "no-cache"}
            )
            return document(status, raw)

        def timed(path: str, params: dict[str, Any], fresh: bool = False) -> dict[str, Any]:
            walls: list[float] = []
            c0 = tree(pid)["ticks"]
            doc: Any = {}
            # One warm-up, then the rounds (3 only for a request slower than a second).
            while len(walls) < (self.rounds if not walls or walls[0] < 1.0 else 3) + 1:
                t = time.perf_counter()
                try:
                    doc = get(path, params, fresh)
                except ApiError as err:  # e.g. a search stopped at the daemon's time limit
                    return {"error": str(err), "seconds": round(time.perf_counter() - t, 1)}
                walls.append(time.perf_counter() - t)
            cpu = (tree(pid)["ticks"] - c0) / CLK_TCK / len(walls)
            walls = walls[1:]
            size = len(
                doc.get("hits")
                or doc.get("rows")
                or doc.get("sessions")
                or doc.get("events")
                or doc.get("projects")
                or []
            )
            return {
                "p50_ms": round(statistics.median(walls) * 1e3, 1),
                "p95_ms": round(pct(walls, 95) * 1e3, 1),
                "cpu_ms": round(cpu * 1e3, 1),
                "rounds": len(walls),
                "items": size,
            }

        started = load()
        newest = client.get("/sessions", {"limit": 50})["sessions"]
        # The biggest of the newest sessions: its events page and a search within it.
        biggest = max(newest, key=lambda s: s.get("messages") or 0)
        ref = f"/sessions/{biggest['agent']}/{biggest['id']}"
        out: dict[str, Any] = {
            "list": timed("/sessions", {"limit": 50}),
            "rare": {n: timed("/search", {"q": n}) for n in NEEDLES},
            "common": {q: timed("/search", {"q": q}) for q in ("session", "parser")},
            "phrase": {q: timed("/search", {"q": q}) for q in PHRASES},
            "prefix": {q: timed("/search", {"q": q, "mode": "prefix"}) for q in ("trig", "sess")},
            "cjk": {q: timed("/search", {"q": q}) for q in ("テスト", "索引")},
            "regex": {
                q: timed("/search", {"q": q, "mode": "regex"})
                for q in (r"debounce\s+inotify", r"fixture path \w+")
            },
            "stats": {
                by: timed("/stats", {"by": by, **({"limit": 20} if by == "session" else {})}, fresh=True)
                for by in ("day", "model", "agent", "project", "session", "tool", "hour")
            },
            "projects": timed("/projects", {}),
            "events_page": timed(f"{ref}/events", {"limit": 200}),
            "in_session": timed("/search", {"q": "parser", "session": f"{biggest['agent']}:{biggest['id']}"}),
            "session_events": biggest.get("messages"),
            "load_before": started,
            "load_after": load(),
        }
        client.close()
        return out

    def stop(self) -> None:
        self.daemon.cleanup()


def flat(q: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Query name → its figure (a group's worst p95 stands for the group)."""
    out: dict[str, dict[str, Any]] = {}
    for name, v in q.items():
        if not isinstance(v, dict):
            continue
        if "p95_ms" in v or "error" in v:
            out[name] = v
        elif name == "stats":
            for by, fig in v.items():
                out[f"stats by {by}"] = fig
        else:
            for sub, fig in v.items():
                out[f"{name}: {sub}"] = fig
    return out


def _ms(fig: dict[str, Any] | None, key: str = "p95_ms") -> str:
    if not fig:
        return "—"
    if "error" in fig:
        return f"refused after {fig.get('seconds', '?')} s ({fig['error'].split(':')[0]})"
    return f"{fig[key]:g} ms"


def _met(ok: bool | None) -> str:
    return "—" if ok is None else "met" if ok else "**not met**"


def render(r: dict[str, Any]) -> str:
    """The Markdown section of bench/RESULTS.md for one run's figures."""
    base, large = r["base"], r["large"]
    bs, ls = base.get("summary") or {}, large.get("summary") or {}
    lines = [
        "<!-- bench_scale:start (bench/run_bench.py --scale, bench/bench_scale.py; regenerated by it) -->",
        f"## At scale: a running agtaild on {ls.get('bytes', 0) / 1e9:.1f} GB against 200 MB (issue #32)",
        "",
        f"Run {r['started']}, {r['seconds']:g} s of wall time for {r['cpu_seconds']:g} s of CPU (this script and"
        f" the daemons it ran); {r['cpus']} CPUs, load average {r['load_before']} before, {r['load_after']} after"
        " (the machine is shared: read the CPU columns). Large corpus: "
        f"`{large['corpus']}`, {ls.get('sessions', '?')} sessions, {ls.get('lines', 0):,} lines; base: "
        f"`{base['corpus']}`, {bs.get('sessions', '?')} sessions. Each daemon: `agtaild` on an empty data dir"
        " (archive off, `TZ=UTC`), its cold index sampled every 0.5 s (RSS of its whole process tree from /proc,"
        " `/health` progress), then idle, then every request over HTTP: one warm-up and "
        f"{r.get('rounds', 20)} timed (3 for a request slower than 1 s); stats computed anew (`no-cache`).",
        "",
    ]
    bc, lc = base.get("cold"), large.get("cold")
    if bc and lc:
        per_mb = (lc["seconds"] / lc["bytes"]) / (bc["seconds"] / bc["bytes"])
        eta = lc.get("eta") or {}
        lines += [
            "| figure | target | large | 200 MB | |",
            "|---|---|---|---|---|",
            f"| cold index by the daemon (start → first scan done) | per MB ≤ 1.2× the 200 MB one | {lc['seconds']:g} s"
            f" ({lc['mb_per_s']:g} MB/s; the update itself {lc['index_seconds']:g} s), CPU {lc['cpu_seconds']:g} s,"
            f" load {lc['load_before']} → {lc['load_after']} | {bc['seconds']:g} s ({bc['mb_per_s']:g} MB/s),"
            f" CPU {bc['cpu_seconds']:g} s, load {bc['load_before']} → {bc['load_after']} | {per_mb:.2f}× per MB:"
            f" {_met(per_mb <= 1.2)} |",
            f"| peak RSS of the process tree during it | ≤ 250 MB | {lc['peak_rss_mb']:g} MB ({lc['peak_procs']} processes"
            f" at most; the daemon alone {lc['peak_parent_rss_mb']:g} MB) | {bc['peak_rss_mb']:g} MB"
            f" ({bc['peak_parent_rss_mb']:g} MB) | {_met(lc['peak_rss_mb'] <= 250)} |",
            f"| `/health` progress throughout | every sample | {lc['progress_samples']} of {lc['samples']} samples"
            f" | {bc['progress_samples']} of {bc['samples']} | {_met(lc['progress_samples'] >= lc['samples'] - 4)} |",
            f"| its ETA at half way vs the real rest | within 20 % | at {eta.get('at', '?')} s ({eta.get('done', 0):.0%}"
            f" read): ETA {eta.get('eta', '?')} s, took {eta.get('real', '?')} s ({eta.get('error', 0):+.0%}) |"
            f" {(bc.get('eta') or {}).get('error', 0):+.0%} | {_met(abs(eta.get('error') or 1) <= 0.2)} |",
        ]
    else:
        lines += ["| figure | target | large | 200 MB | |", "|---|---|---|---|---|"]
    bi, li = base["idle"], large["idle"]
    lines += [
        f"| idle after the index: RSS of the tree | ≤ 150 MB | {li['rss_mb']:g} MB ({li['procs']} processes; the daemon"
        f" {li['parent_rss_mb']:g} MB) | {bi['rss_mb']:g} MB ({bi['parent_rss_mb']:g} MB) | {_met(li['rss_mb'] <= 150)} |",
        f"| idle CPU over {li['seconds']:g} s (/proc ticks of the tree) | 0.0 % | {li['cpu_percent']:g} %"
        f" ({li['cpu_seconds']:g} s; settled {li['settled_after']:g} s after the index; load {li['load']}) |"
        f" {bi['cpu_percent']:g} % | {_met(li['cpu_percent'] == 0)} |",
    ]
    bq, lq = flat(base["queries"]), flat(large["queries"])
    lines += [
        "",
        f"Requests (load {large['queries']['load_before']} → {large['queries']['load_after']} for the large run,"
        f" {base['queries']['load_before']} → {base['queries']['load_after']} for the base): wall p95 (p50) and the"
        " daemon's CPU per request; targets p95 ≤ 100 ms and ≤ 2× the 200 MB p95.",
        "",
        "| request | large p95 (p50) | CPU | 200 MB p95 (p50) | CPU | × | |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, fig in lq.items():
        b = bq.get(name)
        ratio = None
        if b and "p95_ms" in fig and "p95_ms" in b and b["p95_ms"]:
            ratio = fig["p95_ms"] / b["p95_ms"]
        ok = None if "p95_ms" not in fig else fig["p95_ms"] <= 100 and (ratio is None or ratio <= 2)
        cpu_ratio = ""
        if b and fig.get("cpu_ms") and b.get("cpu_ms"):
            cpu_ratio = f" (CPU {fig['cpu_ms'] / b['cpu_ms']:.1f}×)"
        lines.append(
            f"| {name} | {_ms(fig)} ({_ms(fig, 'p50_ms')}) | {_ms(fig, 'cpu_ms') if 'cpu_ms' in fig else '—'} |"
            f" {_ms(b)} ({_ms(b, 'p50_ms')}) | {_ms(b, 'cpu_ms') if b and 'cpu_ms' in b else '—'} |"
            f" {'' if ratio is None else f'{ratio:.1f}'}{cpu_ratio} | {_met(ok)} |"
        )
    lines += ["", "<!-- bench_scale:end -->"]
    return "\n".join(lines) + "\n"


def one(corpus: Path, work: Path, tag: str, args: argparse.Namespace) -> dict[str, Any]:
    run = Run(corpus, work, tag, args.rounds)
    run.wait_secrets = not args.no_secrets_wait
    out: dict[str, Any] = {"corpus": str(corpus)}
    try:
        if args.keep_index and (run.daemon.data_dir / "index.sqlite3").exists():
            run.restart()
        else:
            out["cold"] = run.cold(args.sample)
        out["idle"] = run.idle(args.settle, args.idle)
        out["queries"] = run.queries()
    finally:
        run.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True, help="the large corpus (gen_corpus.py)")
    ap.add_argument("--base", type=Path, required=True, help="the 200 MB corpus it is compared with")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agtail-bench-scale")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--settle", type=float, default=10)
    ap.add_argument("--sample", type=float, default=0.5)
    ap.add_argument("--keep-index", action="store_true")
    ap.add_argument(
        "--no-secrets-wait",
        action="store_true",
        help="measure idle and the requests while the daemon's background secrets pass still runs"
        " (at 10 GB it takes ~40 min on 2 shared cores: ~2,000 events/s)",
    )
    ap.add_argument("--json", type=Path, help="write the figures here too")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.time(), os.times()
    result: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_before": load(),
    }
    for tag, corpus in (("base", args.base), ("large", args.corpus)):
        summary = corpus.with_name(corpus.name + ".json")
        doc = one(corpus, args.work, tag, args)
        if summary.exists():
            doc["summary"] = {k: v for k, v in json.loads(summary.read_text()).items() if k != "needles"}
        result[tag] = doc
        print(json.dumps({tag: doc}), file=sys.stderr, flush=True)
    c1 = os.times()
    result["seconds"] = round(time.time() - t0, 1)
    result["cpu_seconds"] = round(c1.user + c1.system + c1.children_user + c1.children_system
                                  - c0.user - c0.system - c0.children_user - c0.children_system, 1)  # fmt: skip
    result["load_after"] = load()
    result["rounds"] = args.rounds
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
