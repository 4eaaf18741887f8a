#!/usr/bin/env python3
"""Team-database benchmarks: `agtail pg push` throughput and the team server's query latency.

1. push: a cold push of the whole corpus (rows/s, MB/s of native transcripts), an unchanged
   re-push (must write 0 rows), and an incremental push after appends to 100 sessions.
2. queries: the same list / search / stats calls on the local SQLite index (in-process Service)
   and on the team database (TeamService), medians of --repeat runs each.
3. scale: the same corpus pushed again under --machines more machine names (a team's worth),
   then the same queries.

With --rls the database is set up as `agtail pg init` does (group roles, row-level security):
each machine pushes with its own login role, the team server reads with its role, and the
queries are asked as a reader of tier `all` (at 10 machines also as a reader of tier `own`
who reads machine m0's sessions).

A throw-away PostgreSQL cluster is started for the run (tests/pg_cluster.py), on a unix socket.

Usage (from the repo root):
    .venv/bin/python bench/bench_team.py --work /tmp/agt-team [--mb 200] [--machines 10] [--repeat 5]
Prints one JSON document; bench/RESULTS.md records the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agtaild.api.caller import CALLER  # noqa: E402
from agtaild.config import load_config  # noqa: E402
from agtaild.pg.push import push  # noqa: E402
from agtaild.pg.service import TeamService  # noqa: E402
from agtaild.query.service import Service  # noqa: E402
from tests.pg_cluster import Cluster  # noqa: E402

GEN = REPO / "bench" / "gen_corpus.py"


def corpus(work: Path, mb: float) -> tuple[Path, dict[str, Any]]:
    out = work / f"corpus{int(mb)}"
    summary = work / f"corpus{int(mb)}.json"
    if not summary.exists():
        text = subprocess.run(
            [sys.executable, str(GEN), str(out), "--mb", str(mb)], check=True, capture_output=True, text=True
        ).stdout
        summary.write_text(text)
        # Settled: written an hour ago (a file changed in the last seconds is read again by the
        # next update, in case it was caught mid-write; a real history is not that fresh).
        old = time.time() - 3600
        for path in out.rglob("*"):
            if path.is_file():
                os.utime(path, (old, old))
    return out, json.loads(summary.read_text())


def timed(fn: Any, repeat: int) -> float:
    """The median of ``repeat`` runs; NaN (null in the JSON) when a run passes the team
    server's statement timeout (a loaded machine), so the other figures are still printed."""
    from agtaild.errors import UsageError

    times = []
    try:
        fn()  # warm
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    except UsageError:
        return float("nan")
    return statistics.median(times)


QUERIES: list[tuple[str, str, dict[str, Any]]] = [
    ("list 50", "sessions.list", {"limit": 50}),
    ("stats by day", "stats", {"by": "day"}),
    ("stats by model", "stats", {"by": "model"}),
    ("search common word", "search", {"q": "daemon", "limit": 20}),
    ("search phrase", "search", {"q": "sqlite fts5", "limit": 20}),
    ("search CJK", "search", {"q": "索引", "limit": 20}),
]


def query_times(call: Any, needles: list[str], repeat: int) -> dict[str, float]:
    out = {
        name: timed(lambda m=method, p=params: call(m, p), repeat) * 1000 for name, method, params in QUERIES
    }
    out["search rare word"] = (
        statistics.median(timed(lambda n=n: call("search", {"q": n}), repeat) for n in needles[:5]) * 1000
    )
    return {k: (None if v != v else round(v, 2)) for k, v in out.items()}


def append_lines(root: Path, count: int) -> int:
    files = sorted(root.glob("claude/projects/*/*.jsonl"))[:count]
    added = 0
    for i, path in enumerate(files):
        sid = path.stem
        with path.open("rb") as f:  # continue the conversation's last record, as Claude Code does
            f.seek(max(0, path.stat().st_size - 65536))
            tail = [json.loads(x) for x in f.read().splitlines()[1:] if x.strip()]
        parent = next((r["uuid"] for r in reversed(tail) if r.get("uuid")), None)
        line = {
            "type": "user",
            "message": {"role": "user", "content": f"appended for the push benchmark {i}"},
            "uuid": str(uuid.uuid4()),  # fresh each run: the corpus is reused between runs
            "parentUuid": parent,
            "sessionId": sid,
            "timestamp": "2026-12-01T00:00:00.000Z",
            "cwd": "/home/dev",
        }
        data = json.dumps(line) + "\n"
        with path.open("a") as f:
            f.write(data)
        old = time.time() - 3600
        os.utime(path, (old, old))
        added += len(data)
    return added


def with_roles(url: str, machines: int) -> dict[str, str]:
    """`agtail pg init` on the new database, and a login per machine and one for the server."""
    from agtaild.pg.readers import add_reader
    from agtaild.pg.roles import add_login, init

    with psycopg.connect(url, autocommit=True) as conn:
        init(conn)
        logins = {f"m{i}": add_login(conn, url, "machine", f"m{i}")["url"] for i in range(machines)}
        logins["server"] = add_login(conn, url, "server", "server")["url"]
        logins["reader"] = add_reader(conn, "bench", "all", machines=[], projects=[])["token"]
        logins["own"] = add_reader(conn, "bench-own", "own", machines=["m0"], projects=[])["token"]
    return logins


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/agt-team-bench"))
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rls", action="store_true", help="roles and row-level security (agtail pg init)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    src, info = corpus(args.work, args.mb)
    corpus_bytes = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    data = args.work / "data"
    config = load_config(
        data_dir=str(data),
        root_options=[f"claude-code={src / 'claude' / 'projects'}", f"codex={src / 'codex' / 'sessions'}"],
        only_roots=True,
    )
    config.archive = False
    result: dict[str, Any] = {"corpus_mb": round(corpus_bytes / 2**20, 1), "load": os.getloadavg()[0]}
    svc = Service(config)
    t = time.perf_counter()
    svc.update_index()
    result["local_index_s"] = round(time.perf_counter() - t, 2)
    cluster = Cluster(args.work / f"pg-{os.getpid()}")
    cluster.start()
    try:
        url = cluster.new_database()
        logins = with_roles(url, args.machines) if args.rls else None

        def as_machine(name: str) -> str:
            return logins[name] if logins else url

        result["rls"] = bool(logins)
        report = push(config.index_path, as_machine("m0"), "m0")
        rows = report.rows
        result["push"] = {
            "seconds": round(report.seconds, 2),
            "rows": rows,
            "events": report.events,
            "rows_per_s": round(rows / report.seconds),
            "mb_per_s": round(corpus_bytes / 2**20 / report.seconds, 1),
        }
        again = push(config.index_path, as_machine("m0"), "m0")
        result["repush_unchanged"] = {"seconds": round(again.seconds, 3), "rows": again.rows}
        appended = append_lines(src, 100)
        svc.update_index()
        inc = push(config.index_path, as_machine("m0"), "m0")
        result["push_after_100_appends"] = {
            "seconds": round(inc.seconds, 3),
            "sessions": inc.sessions,
            "events": inc.events,
            "appended_bytes": appended,
        }
        team = TeamService(as_machine("server"), data_dir=data, machine="m0")
        if logins:  # the team's queries as a reader of tier `all` would ask them
            CALLER.set(team.reader_token(logins["reader"]) or "")
        needles = list(info["needles"])
        result["local_ms"] = query_times(svc.call, needles, args.repeat)
        result["team_ms"] = query_times(team.call, needles, args.repeat)
        t = time.perf_counter()
        for i in range(1, args.machines):
            push(config.index_path, as_machine(f"m{i}"), f"m{i}")
        result["scale"] = {
            "machines": args.machines,
            "push_s": round(time.perf_counter() - t, 1),
            "team_ms": query_times(team.call, needles, args.repeat),
        }
        if logins:  # and as a reader of one machine's sessions (tier `own`, machine m0)
            CALLER.set(team.reader_token(logins["own"]) or "")
            result["scale"]["team_ms_own_reader"] = query_times(team.call, needles, args.repeat)
        with psycopg.connect(url) as conn:
            size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        result["scale"]["database_mb"] = round(size / 2**20)
        team.close()
    finally:
        svc.close()
        cluster.stop()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
