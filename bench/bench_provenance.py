#!/usr/bin/env python3
"""Provenance figures (issue 27, bench/RESULTS.md): blame's speed and the edits index's cost.

    bench/bench_provenance.py blame            # a 2,000-line file with 300 recorded edits
    bench/bench_provenance.py cold --mb 50     # the cold index with and without the edits table
    bench/bench_provenance.py share [--mb 0]   # the CPU share of the edits code in a cold index
    bench/bench_provenance.py accuracy         # tests/provenance_synth.py's repositories, scored

``blame``: one Claude Code session writes a 2,000-line file, then edits it 300 times (Edit
calls with their structured patches, as Claude records them); the figure is the time of
``files.history`` (asked with ``replay``) plus the replay and line matching of the file on
disk, in-process, the median of 9 runs after one warm-up. ``cold``: a corpus from
bench/gen_corpus.py indexed from scratch, alternately with the edits extraction on and off
(off: agtaild.provenance.records.rows returns no rows; forked workers inherit that), three
runs each, each in a fresh process; and the size of the edits table and its indexes (dbstat).
Everything in temporary directories; nothing reads the real agent folders.
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
sys.path.insert(0, str(REPO))


def _service(data: Path, roots: dict[str, Path]):  # type: ignore[no-untyped-def]
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service

    return Service(Config(data_dir=str(data), roots=[RootSpec(a, str(p)) for a, p in roots.items()], archive=False))


def bench_blame(lines: int, edits: int) -> dict[str, float | int]:
    """The file starts at ``lines`` · 0.725 lines: the edits grow it to about ``lines``."""
    from agtaild.provenance.blamefile import blame_doc, read_text
    from tests.provenance_synth import Builder

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        b = Builder(base / "repo", seed=5)
        s = b.session("claude-code")
        b.prompt(s, "Write the big module.")
        b.create(s, "big.py", int(lines * 0.725))
        for i in range(edits):
            if i % 20 == 0:
                b.prompt(s, f"Step {i}: improve it.")
            b.edit(s, "big.py")
        roots = b.save()
        path = str(b.project / "big.py")
        svc = _service(base / "data", roots)
        try:
            svc.update_index()
            runs, cpu = [], []
            for _ in range(10):
                started, started_cpu = time.perf_counter(), time.process_time()
                history = svc.call("files.history", {"path": path, "replay": True})
                doc = blame_doc(history, read_text(path))
                runs.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
            runs, cpu = runs[1:], cpu[1:]
        finally:
            svc.close()
        return {
            "file_lines": len(doc["lines"]),
            "recorded_changes": doc["changes"],
            "attributed": doc["attributed"],
            "median_ms": round(statistics.median(runs) * 1000, 1),
            "max_ms": round(max(runs) * 1000, 1),
            "median_cpu_ms": round(statistics.median(cpu) * 1000, 1),
        }


def _roots_of(corpus: Path) -> list[tuple[str, str]]:
    if (corpus / "claude" / "projects").is_dir():  # bench/gen_corpus.py's layout
        return [("claude-code", str(corpus / "claude" / "projects")), ("codex", str(corpus / "codex" / "sessions"))]
    # tests/corpus: every sample of Claude Code and Codex (real recordings and other projects')
    roots = [("claude-code", str(p)) for p in sorted(corpus.glob("claude-code/*/projects"))]
    roots += [("codex", str(p)) for p in sorted(corpus.glob("codex/*/sessions"))]
    roots += [("claude-code", str(corpus / "real" / "claude-2.1.197" / "projects")),
              ("codex", str(corpus / "real" / "codex-0.171.0" / "sessions"))]  # fmt: skip
    return roots


def _cold_once(corpus: Path, data: Path, with_edits: bool) -> dict[str, float]:
    code = f"""
import json, sys, time
sys.path.insert(0, {str(REPO)!r})
if not {with_edits!r}:
    from agtaild.provenance import records
    records.rows = lambda events, cwd, time_of: []
from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
roots = [RootSpec(a, p) for a, p in {_roots_of(corpus)!r}]
svc = Service(Config(data_dir={str(data)!r}, roots=roots, archive=False))
t = time.perf_counter()
svc.update_index()
wall = time.perf_counter() - t
import sqlite3
db = sqlite3.connect(svc.config.index_path)
rows = db.execute("SELECT count(*) FROM edits").fetchone()[0]
try:
    size = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'edits%'").fetchone()[0] or 0
except sqlite3.OperationalError:
    size = -1
total = db.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").fetchone()[0]
svc.close()
print(json.dumps({{"wall": wall, "rows": rows, "edits_bytes": size, "index_bytes": total}}))
"""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    # CPU of the process and its reading workers (reaped): steadier than wall time on a shared machine
    doc["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return doc


def bench_cold(mb: int, runs: int) -> dict[str, object]:
    """``mb`` 0: tests/corpus (real edits); else a generated corpus of that size (its edit calls
    carry no texts: it measures what the extraction costs every other event)."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        if mb:
            subprocess.run([sys.executable, str(REPO / "bench" / "gen_corpus.py"), str(corpus), "--mb", str(mb)],
                           check=True, capture_output=True)  # fmt: skip
        else:
            corpus = REPO / "tests" / "corpus"
        on: list[dict[str, float]] = []
        off: list[dict[str, float]] = []
        for i in range(runs):
            for with_edits, into in ((True, on), (False, off)) if i % 2 == 0 else ((False, off), (True, on)):
                data = Path(tmp) / f"data-{i}-{with_edits}"
                into.append(_cold_once(corpus, data, with_edits))
        won = statistics.median(r["wall"] for r in on)
        woff = statistics.median(r["wall"] for r in off)
        con = statistics.median(r["cpu"] for r in on)
        coff = statistics.median(r["cpu"] for r in off)
        return {
            "corpus_mb": mb,
            "with_edits_s": [round(r["wall"], 2) for r in on],
            "without_s": [round(r["wall"], 2) for r in off],
            "with_edits_cpu_s": [round(r["cpu"], 2) for r in on],
            "without_cpu_s": [round(r["cpu"], 2) for r in off],
            "overhead_pct": round((won - woff) / woff * 100, 1),
            "cpu_overhead_pct": round((con - coff) / coff * 100, 1),
            "edit_rows": on[0]["rows"],
            "edits_table_bytes": on[0]["edits_bytes"],
            "index_bytes": on[0]["index_bytes"],
        }


def bench_share(mb: int) -> dict[str, object]:
    """The CPU a cold index spends in the edits index's own code (agtaild.provenance.records.rows
    in the reading, agtaild.index.edits.insert in the writer), in-process (no workers), as a
    share of the whole: a figure the machine's load does not blur the way wall times are."""
    from agtaild.index import edits
    from agtaild.provenance import records

    spent = {"rows": 0.0, "insert": 0.0}

    def timed(fn, key):  # type: ignore[no-untyped-def]
        def run(*a, **kw):  # type: ignore[no-untyped-def]
            t = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                spent[key] += time.process_time() - t

        return run

    records.rows = timed(records.rows, "rows")  # type: ignore[assignment]
    edits.insert = timed(edits.insert, "insert")  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        if mb:
            subprocess.run([sys.executable, str(REPO / "bench" / "gen_corpus.py"), str(corpus), "--mb", str(mb)],
                           check=True, capture_output=True)  # fmt: skip
        else:
            corpus = REPO / "tests" / "corpus"
        from agtaild.config import Config, RootSpec
        from agtaild.query.service import Service

        svc = Service(Config(data_dir=str(Path(tmp) / "data"), roots=[RootSpec(a, p) for a, p in _roots_of(corpus)],
                             archive=False), workers=0)  # fmt: skip
        t = time.process_time()
        svc.update_index()
        total = time.process_time() - t
        svc.close()
    own = spent["rows"] + spent["insert"]
    return {"corpus_mb": mb, "cold_cpu_s": round(total, 3), "rows_s": round(spent["rows"], 3),
            "insert_s": round(spent["insert"], 3), "share_pct": round(own / total * 100, 2)}  # fmt: skip


def bench_accuracy(seeds: list[int]) -> dict[str, object]:
    from tests import provenance_synth

    per = []
    right = lines = hand = hand_wrong = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            repo = provenance_synth.build(Path(tmp) / f"repo{seed}", seed=seed)
            sc = provenance_synth.score(repo, Path(tmp) / f"data{seed}")
            per.append({"seed": seed, "agent_lines": sc.agent_lines, "right": sc.agent_right,
                        "hand_lines": sc.hand_lines, "hand_as_agent": sc.hand_as_agent})  # fmt: skip
            right, lines = right + sc.agent_right, lines + sc.agent_lines
            hand, hand_wrong = hand + sc.hand_lines, hand_wrong + sc.hand_as_agent
    return {"repos": per, "accuracy_pct": round(right / lines * 100, 2), "hand_lines": hand, "hand_as_agent": hand_wrong}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("blame")
    b.add_argument("--lines", type=int, default=2000)
    b.add_argument("--edits", type=int, default=300)
    c = sub.add_parser("cold")
    c.add_argument("--mb", type=int, default=50)
    c.add_argument("--runs", type=int, default=3)
    sh = sub.add_parser("share")
    sh.add_argument("--mb", type=int, default=0)
    a = sub.add_parser("accuracy")
    a.add_argument("--seeds", default="27,1,2,3,4,5,6,7,8,9")
    args = ap.parse_args()
    home = tempfile.mkdtemp()
    os.environ.update(HOME=home, XDG_DATA_HOME=f"{home}/.local/share", XDG_CONFIG_HOME=f"{home}/.config")
    if args.what == "blame":
        doc = bench_blame(args.lines, args.edits)
    elif args.what == "cold":
        doc = bench_cold(args.mb, args.runs)
    elif args.what == "share":
        doc = bench_share(args.mb)
    else:
        doc = bench_accuracy([int(x) for x in args.seeds.split(",")])
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
