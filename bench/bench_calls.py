#!/usr/bin/env python3
"""The daemon's work per request, in-process, against an existing index: each request of
bench/bench_scale.py as a ``Service.call`` (no HTTP), wall and CPU time (median of
``--repeat`` after one warm-up). CPU time is what a shared machine disturbs least; use it to
compare two versions of the code on the same index (run this script from each checkout).

    bench/bench_calls.py --data DATA_DIR [--repeat 7] [--json]

The index is opened as the daemon opens it (migrations run: point it at a copy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

NEEDLES = tuple(f"needle{n * 97:06d}zq" for n in (0, 3, 6, 9, 12))


def requests(svc: Any) -> dict[str, tuple[str, dict[str, Any]]]:
    newest = svc.call("sessions.list", {"limit": 50})["sessions"]
    big = max(newest, key=lambda s: s.get("messages") or 0)
    ref = f"{big['agent']}:{big['id']}"
    out: dict[str, tuple[str, dict[str, Any]]] = {"list": ("sessions.list", {"limit": 50})}
    out.update({f"rare: {n}": ("search", {"q": n}) for n in NEEDLES[:2]})
    out.update({f"common: {q}": ("search", {"q": q}) for q in ("session", "parser")})
    out.update({f"phrase: {q}": ("search", {"q": q}) for q in ("refactor the parser", "token usage cost")})
    out.update({f"prefix: {q}": ("search", {"q": q, "mode": "prefix"}) for q in ("trig", "sess")})
    out.update({f"cjk: {q}": ("search", {"q": q}) for q in ("テスト", "索引")})
    out.update(
        {
            f"regex: {q}": ("search", {"q": q, "mode": "regex"})
            for q in (r"debounce\s+inotify", r"fixture path \w+")
        }
    )
    for by in ("day", "model", "agent", "project", "session", "tool", "hour"):
        out[f"stats by {by}"] = ("stats", {"by": by, **({"limit": 20} if by == "session" else {})})
    out["projects"] = ("projects.list", {})
    out["events_page"] = ("events.list", {"agent": big["agent"], "id": big["id"], "limit": 200})
    out["in_session"] = ("search", {"q": "parser", "session": ref})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from agtaild.config import Config, RootSpec
    from agtaild.errors import UsageError
    from agtaild.query.service import Service

    # The roots name the agents (a request naming one checks it); nothing is read from them.
    roots = [RootSpec(agent, str(args.data / "no-such-root")) for agent in ("claude-code", "codex")]
    svc = Service(Config(data_dir=str(args.data), roots=roots, archive=False))
    out: dict[str, Any] = {"code": str(REPO), "load": " ".join(Path("/proc/loadavg").read_text().split()[:3])}
    try:
        for name, (method, params) in requests(svc).items():
            walls, cpus = [], []
            try:
                for _ in range(args.repeat + 1):
                    w, c = time.perf_counter(), time.process_time()
                    svc.call(method, params)
                    walls.append(time.perf_counter() - w)
                    cpus.append(time.process_time() - c)
            except UsageError as err:
                out[name] = {"error": str(err), "wall_ms": round((time.perf_counter() - w) * 1e3)}
                continue
            out[name] = {
                "wall_ms": round(statistics.median(walls[1:]) * 1e3, 2),
                "cpu_ms": round(statistics.median(cpus[1:]) * 1e3, 2),
            }
    finally:
        svc.close()
    out["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for name, fig in out.items():
        print(f"{name:32s} {fig}")


if __name__ == "__main__":
    main()
