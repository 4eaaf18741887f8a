#!/usr/bin/env python3
"""The archive's part of an incremental update (issue #13, figure 2): ``Archiver.mirror_pairs``
alone, in-process, for files that were appended to.

    bench/bench_archive_append.py CORPUS [--lines 10 100] [--rounds 3] [--files 100]
                                         [--repo PATH] [--profile OUT]

A copy of CORPUS's Claude Code projects is mirrored whole (cold), then in each round, for each
``--lines``, that many lines are appended to each of ``--files`` session files and one
``Archiver.mirror_pairs`` over their units is timed: wall, and CPU (user + sys of this process,
all threads), its batch flushed (the blobs fsynced, the rows committed) as at the end of an
update. The fixed part and the part per MB come from a least-squares fit over the runs.
``--repo`` imports agtaild from another checkout (a before/after comparison in the same
minutes). The load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def line(uuid: str, session: str, text: str) -> bytes:
    doc = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": session,
        "timestamp": "2026-03-30T00:00:00.000Z",
    }
    return (json.dumps(doc, separators=(",", ":")) + "\n").encode()


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares ``y = a + b x``: (a, b)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - b * mx, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--lines", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--profile", help="profile the last round's mirrors to PROFILE.<lines>")
    args = ap.parse_args()
    sys.path.insert(0, str(args.repo.resolve()))
    from agtaild.adapters import get_adapter
    from agtaild.config import load_config
    from agtaild.store.archive.archiver import Archiver

    work = Path(tempfile.mkdtemp(prefix="agtail-archive-append-"))
    out: dict[str, Any] = {"repo": str(args.repo), "load_before": load(), "runs": []}
    try:
        native = work / "projects"
        shutil.copytree(args.corpus / "claude" / "projects", native)
        config = load_config(
            data_dir=str(work / "data"), root_options=[f"claude-code={native}"], only_roots=True
        )
        adapter = get_adapter("claude-code")
        units = list(adapter.discover(native))
        arch = Archiver(config)
        c, t = time.process_time(), time.perf_counter()
        rep = arch.mirror_pairs((adapter, u) for u in units)
        out["cold"] = {"wall_ms": round((time.perf_counter() - t) * 1000), "cpu_ms": round((time.process_time() - c) * 1000),
                       "files": rep["files"], "errors": len(rep["errors"])}  # fmt: skip
        files = sorted(native.glob("*/*.jsonl"))[: args.files]
        chosen = {str(f) for f in files}
        pairs = [(adapter, u) for u in units if u.path in chosen]
        assert len(pairs) == len(files), (len(pairs), len(files))
        points: list[tuple[float, float]] = []
        for rnd in range(args.rounds):
            for n in args.lines:
                added = 0
                for i, path in enumerate(files):
                    chunk = b"".join(
                        line(
                            f"00000000-0000-4000-b{n:03d}-{rnd:02d}{i:04d}{j:06d}",
                            path.stem,
                            f"line {j} of {i}",
                        )
                        for j in range(n)
                    )
                    with open(path, "ab") as fh:
                        fh.write(chunk)
                    added += len(chunk)
                prof = (
                    cProfile.Profile(time.process_time) if args.profile and rnd == args.rounds - 1 else None
                )
                if prof is not None:
                    prof.enable()
                c, t = time.process_time(), time.perf_counter()
                rep = arch.mirror_pairs(pairs)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                if prof is not None:
                    prof.disable()
                    prof.dump_stats(f"{args.profile}.{n}")
                assert rep["errors"] == [] and rep["appended"] == len(files), rep
                mb = added / 2**20
                points.append((mb, cpu * 1000))
                out["runs"].append({"lines": n, "mb": round(mb, 3), "wall_ms": round(wall * 1000, 1),
                                    "cpu_ms": round(cpu * 1000, 1), "cpu_ms_per_file": round(cpu * 1000 / len(files), 3),
                                    "load": load()})  # fmt: skip
        fixed, per_mb = fit(points)
        out["fit_cpu"] = {"fixed_ms": round(fixed, 1), "ms_per_mb": round(per_mb, 1),
                          "fixed_ms_per_file": round(fixed / len(files), 3)}  # fmt: skip
        arch.store.close()
        arch.cache.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["load_after"] = load()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
