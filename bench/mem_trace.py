#!/usr/bin/env python3
"""Where the memory of a cold index goes: ``agtail ARGS…`` run as the console script runs it,
its whole process tree sampled from /proc every ``--sample`` seconds.

For every member of the tree, each sample reads ``/proc/PID/status``: VmRSS split into
RssAnon (the heap: Python's objects, SQLite's page cache and buffers, malloc's free pages),
RssFile (mapped files: the interpreter, shared libraries, and any memory-mapped database) and
RssShmem. Inside the CLI process itself (the writer), a timer signal records at the same rate
what SQLite holds (``sqlite3_memory_used``, through the libsqlite3 the interpreter's sqlite3
module links to) and glibc's view of the heap (``mallinfo2``: in use, free in the arenas,
mapped blocks) — no thread is started, so the reading workers are forked exactly as without
the trace.

    bench/mem_trace.py --out TRACE.json [--sample 0.5] -- AGTAIL-ARGS…

The summary (peaks per process role, the writer's figures at its peak) is printed and written
with every sample to ``--out``. Experiments: ``AGTAIL_TRACE_PRAGMAS="cache_size=-2000;…"`` runs
those PRAGMAs on every connection the index opens, after its own;
``AGTAIL_TRACE_SET="agtaild.index.schema.CACHE_KIB=4000;…"`` sets module constants (integers)
before the CLI starts; ``AGTAIL_TRACE_MALLOC_AT="10,60"`` runs it under tracemalloc and keeps
the 30 biggest allocation sites at those seconds (the heap then grows by tracemalloc's own).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_scale import load, proc_table  # the same /proc readings as the scale run

PAGE = os.sysconf("SC_PAGE_SIZE")
FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM")


def status(pid: int) -> dict[str, int] | None:
    """The memory fields of ``/proc/PID/status``, in kB (None: the process is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in FIELDS or key == "PPid":
                    out[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return out


def children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for pid, (parent, _ticks, _rss) in proc_table().items():
        kids.setdefault(parent, []).append(pid)
    return kids


def role(pid: int, root: int) -> str:
    if pid == root:
        return "writer"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    if "forkserver" in cmd:
        return "forkserver"
    if "resource_tracker" in cmd:
        return "tracker"
    return "worker"


def sample_tree(root: int) -> dict[str, Any]:
    kids = children()
    members, frontier = [root], [root]
    while frontier:
        for child in kids.get(frontier.pop(), []):
            members.append(child)
            frontier.append(child)
    procs = {}
    for pid in members:
        st = status(pid)
        if st is not None:
            procs[pid] = {"role": role(pid, root), **st}
    return {"rss_kb": sum(p.get("VmRSS", 0) for p in procs.values()), "procs": procs}


# -- inside the traced process ----------------------------------------------------------------
class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _handle(db: Any) -> int:
    """The ``sqlite3 *`` of an open :class:`sqlite3.Connection` (CPython: the first field after
    the object header), 0 once closed."""
    try:
        _ = db.total_changes  # raises once closed
    except Exception:
        return 0
    return ctypes.c_void_p.from_address(id(db) + 2 * ctypes.sizeof(ctypes.c_void_p)).value or 0


def _db_status(sqlite: Any, handle: int, op: int) -> int:
    cur, high = ctypes.c_int(0), ctypes.c_int(0)
    sqlite.sqlite3_db_status(ctypes.c_void_p(handle), op, ctypes.byref(cur), ctypes.byref(high), 0)
    return cur.value


def _child(out: str, every: float, args: list[str]) -> int:
    sqlite = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
    sqlite.sqlite3_memory_used.restype = ctypes.c_int64
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    mallinfo2 = getattr(libc, "mallinfo2", None)
    if mallinfo2 is not None:
        mallinfo2.restype = _MallInfo2
    t0 = time.monotonic()
    rows: list[list[Any]] = []
    conns: list[Any] = []

    snap_at = sorted(float(x) for x in os.environ.get("AGTAIL_TRACE_MALLOC_AT", "").split(",") if x)
    snaps: list[dict[str, Any]] = []
    if snap_at:
        import tracemalloc

        tracemalloc.start()

    def snapshot() -> None:
        import tracemalloc

        taken = tracemalloc.take_snapshot().statistics("lineno")
        snaps.append(
            {
                "t": round(time.monotonic() - t0, 2),
                "traced_mb": round(sum(s.size for s in taken) / 2**20, 1),
                "top": [[str(s.traceback), round(s.size / 2**20, 2), s.count] for s in taken[:30]],
            }
        )

    def record(_sig: int = 0, _frame: Any = None) -> None:
        if os.getpid() != me:  # a forked worker inherits the handler, not the timer
            return
        if snap_at and time.monotonic() - t0 >= snap_at[0]:
            snap_at.pop(0)
            snapshot()
        m = mallinfo2() if mallinfo2 is not None else None
        per_conn = []
        for db in conns:
            handle = _handle(db)
            if handle:
                per_conn.append([_db_status(sqlite, handle, op) >> 10 for op in (1, 3)])  # cache, statements
        rows.append(
            [
                round(time.monotonic() - t0, 2),
                sqlite.sqlite3_memory_used() >> 10,
                (m.uordblks >> 10) if m else -1,  # in use (arenas)
                (m.fordblks >> 10) if m else -1,  # free in the arenas
                (m.hblkhd >> 10) if m else -1,  # mmapped blocks
                (m.arena >> 10) if m else -1,  # arena bytes from the system
                per_conn,
            ]
        )

    me = os.getpid()
    pragmas = [p.strip() for p in os.environ.get("AGTAIL_TRACE_PRAGMAS", "").split(";") if p.strip()]
    import importlib

    for item in filter(None, os.environ.get("AGTAIL_TRACE_SET", "").split(";")):
        name, _, value = item.partition("=")
        module, _, attr = name.strip().rpartition(".")
        setattr(importlib.import_module(module), attr, int(value))
    from agtaild.index import schema

    plain = schema.connect

    def connect(*a: Any, **kw: Any) -> Any:
        db = plain(*a, **kw)
        for p in pragmas:
            db.execute(f"PRAGMA {p}")
        conns.append(db)  # kept: a closed one reads as 0
        return db

    schema.connect = connect  # type: ignore[assignment]
    signal.signal(signal.SIGALRM, record)
    signal.siginterrupt(signal.SIGALRM, False)
    signal.setitimer(signal.ITIMER_REAL, every, every)
    from agtaild.entry import main as agtail

    try:
        code = agtail(args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        record()
        me_usage = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(out, "w") as fh:
            json.dump(
                {
                    "columns": [
                        "t",
                        "sqlite",
                        "malloc_used",
                        "malloc_free",
                        "mmapped",
                        "arena",
                        "per_connection",
                    ],
                    "rows": rows,
                    "tracemalloc": snaps,
                    "cpu_self": me_usage.ru_utime + me_usage.ru_stime,
                    "cpu_children": kids.ru_utime + kids.ru_stime,
                    "maxrss_children_mb": kids.ru_maxrss / 1024,
                },
                fh,
            )
    return code


# -- the tracer -------------------------------------------------------------------------------
def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return _child(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sample", type=float, default=0.5)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    inner = a.out.with_suffix(".inner.json")
    before = load()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(inner), str(a.sample), *args], stdout=subprocess.DEVNULL
    )
    samples = []
    while proc.poll() is None:
        snap = sample_tree(proc.pid)
        snap["t"] = round(time.monotonic() - t0, 2)
        samples.append(snap)
        time.sleep(a.sample)
    wall = time.monotonic() - t0
    inside = json.loads(inner.read_text()) if inner.exists() else {}
    peaks: dict[str, dict[str, int]] = {}
    tree_peak = max(samples, key=lambda s: s["rss_kb"]) if samples else {"rss_kb": 0, "t": 0, "procs": {}}
    for s in samples:
        for p in s["procs"].values():
            peak = peaks.setdefault(p["role"], {})
            for k in FIELDS:
                if k in p:
                    peak[k] = max(peak.get(k, 0), p[k])
    rows = inside.get("rows", [])
    summary = {
        "args": args,
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_writer_s": round(inside.get("cpu_self", 0), 2),
        "cpu_workers_s": round(inside.get("cpu_children", 0), 2),
        "load_before": before,
        "load_after": load(),
        "pragmas": os.environ.get("AGTAIL_TRACE_PRAGMAS", ""),
        "set": os.environ.get("AGTAIL_TRACE_SET", ""),
        "tree_peak_mb": round(tree_peak["rss_kb"] / 1024, 1),
        "tree_peak_at": tree_peak["t"],
        "tree_peak_procs": {str(pid): p for pid, p in tree_peak["procs"].items()},
        "peak_by_role_mb": {r: {k: round(v / 1024, 1) for k, v in p.items()} for r, p in peaks.items()},
        "writer_inside_peak_mb": {
            c: round(max((r[i] for r in rows), default=0) / 1024, 1)
            for i, c in enumerate(inside.get("columns", [])[:6])
            if i
        },
    }
    a.out.write_text(json.dumps({"summary": summary, "samples": samples, "inside": inside}))
    print(json.dumps(summary, indent=1))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
