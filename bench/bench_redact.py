#!/usr/bin/env python3
"""What ``sync push --redact`` costs against a plain push (issue #24).

    nice -n 5 bench/bench_redact.py [--work DIR] [--repeat 3] [--claude DIR]

Copies Claude Code sessions (default: tests/corpus/claude-code, 12 MB of sample transcripts;
``--claude`` names another folder of them, e.g. a copy of /work/cache/one-50) and OpenCode's
sample SQLite store under ``--work``, then pushes them to an empty directory remote, plain and
``--redact``, each into a new collection (every file is sent whole). Reports CPU seconds (this
process: the redaction runs in it) and wall seconds, best of ``--repeat``, the MB read, and
how many values the redaction rewrote. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agtaild.config import load_config  # noqa: E402
from agtaild.sync.remote import push  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--claude", type=Path, default=CORPUS / "claude-code")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="agtail-bench-redact-"))
    work.mkdir(parents=True, exist_ok=True)
    claude = work / "claude"
    if not claude.exists():
        shutil.copytree(args.claude, claude)
    oc = work / "opencode" / ".local/share/opencode"
    if not oc.exists():
        oc.mkdir(parents=True)
        shutil.copy2(
            CORPUS / "opencode/synthetic-agtail-sqlite/.local/share/opencode/opencode.db", oc / "opencode.db"
        )
    roots = [
        f"claude-code={p}" for p in sorted(claude.rglob("*")) if p.is_dir() and p.name == "projects"
    ] or [f"claude-code={claude}"]
    roots.append(f"opencode={oc}")
    config = load_config(data_dir=str(work / "data"), root_options=roots, only_roots=True)
    remote = work / "remote"
    runs: dict[str, list[tuple[float, float]]] = {"plain": [], "redact": []}
    report: dict[str, Any] = {}
    n = 0
    for _ in range(args.repeat):
        for kind in ("plain", "redact"):
            shutil.rmtree(remote, ignore_errors=True)
            remote.mkdir()
            n += 1
            wall, cpu = time.perf_counter(), time.process_time()
            rep = push(config, str(remote), f"c{n}", redact=kind == "redact")
            runs[kind].append((time.process_time() - cpu, time.perf_counter() - wall))
            assert not rep["errors"], rep["errors"]
            report[kind] = {"files": rep["files"], "bytes": rep["bytes"], "redacted": rep.get("redacted")}
    mb = tree_bytes(claude) / 1e6 + (oc / "opencode.db").stat().st_size / 1e6
    out = {
        "source_mb": round(mb, 2),
        **{
            kind: {
                "cpu_s_best": round(min(c for c, _ in r), 3),
                "wall_s_best": round(min(w for _, w in r), 3),
                **report[kind],
            }
            for kind, r in runs.items()
        },
    }
    out["redact_mb_per_cpu_s"] = round(mb / out["redact"]["cpu_s_best"], 2)
    out["load"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
