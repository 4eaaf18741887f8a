#!/usr/bin/env python3
"""Export and hand off a huge session (issue #26: a 50 MB session in ≤ 5 s, ≤ 100 MB RSS; the
brief within its budget).

Makes the session with bench/make_huge_claude.py in a temporary folder, indexes it once (not
timed), then runs each command as its own `agtail --no-daemon` process on that index, as a
person would: `export --format md|html|json --to FILE` and `handoff --to codex --print`. For
each (the run of least CPU of ``--runs``, and the fastest wall time of them): wall time, the process's peak RSS (``ru_maxrss`` of that child alone, from ``wait4``),
its CPU seconds (user + system, from the same ``wait4``: on a loaded machine the wall time
is mostly waiting for a core) and the size of what it wrote. Prints one JSON document.

    python bench/bench_export.py --mb 50
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.make_huge_claude import SESSION_ID  # noqa: E402
from bench.make_huge_claude import main as make_huge  # noqa: E402


def run(argv: list[str], env: dict[str, str], stdout: Any) -> dict[str, Any]:
    """One child process: its exit code, wall seconds and peak RSS in MB."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"rc": proc.returncode, "seconds": round(wall, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "max_rss_mb": round(usage.ru_maxrss / 1024, 1), "stderr": err.strip()[-300:]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=50.0, help="the session's size in MB (default 50)")
    parser.add_argument(
        "--runs", type=int, default=2, help="runs of each command; the one of least CPU is kept (default 2)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agtail-bench-export-") as tmp:
        base = Path(tmp)
        root = base / "projects"
        make_huge([str(root), "--mb", str(args.mb)])
        session_file = next(root.rglob(f"{SESSION_ID}.jsonl"))
        home = base / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "XDG_DATA_HOME": str(home / ".local/share"), "XDG_STATE_HOME": str(home / ".local/state"),
               "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(base / "pycache")}  # fmt: skip
        # Bytecode cached (in the temporary folder) as an installed agtail has it: where the
        # environment says PYTHONDONTWRITEBYTECODE, every command would compile agtail anew.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        agtail = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())",
                  "--no-daemon", "--data-dir", str(base / "data"), "--only-roots", "--root", f"claude-code={root}"]  # fmt: skip
        t0 = time.perf_counter()
        index = run([*agtail, "index"], env, subprocess.DEVNULL)
        index["seconds"] = round(time.perf_counter() - t0, 1)
        results: dict[str, Any] = {
            "session_bytes": session_file.stat().st_size,
            "index": index,
            "cpus": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()],
        }
        ref = f"claude-code:{SESSION_ID}"
        for fmt in ("md", "html", "json"):
            target = base / f"out.{fmt}"
            best: dict[str, Any] | None = None
            walls = []
            for _ in range(args.runs):
                r = run(
                    [*agtail, "export", ref, "--format", fmt, "--to", str(target)], env, subprocess.DEVNULL
                )
                r["out_bytes"] = target.stat().st_size if target.exists() else None
                walls.append(r["seconds"])
                if best is None or r["cpu_seconds"] < best["cpu_seconds"]:
                    best = r
            assert best is not None
            results[f"export_{fmt}"] = {**best, "fastest_seconds": min(walls)}
        brief_path = base / "brief.md"
        best = None
        walls = []
        for _ in range(args.runs):
            with open(brief_path, "wb") as out:
                r = run([*agtail, "handoff", ref, "--to", "codex", "--print"], env, out)
            text = brief_path.read_text(encoding="utf-8")
            r["out_chars"] = len(text)
            r["budget_chars"] = 8000 * 4
            r["says_what_it_cut"] = "Cut to fit the budget:" in text
            walls.append(r["seconds"])
            if best is None or r["cpu_seconds"] < best["cpu_seconds"]:
                best = r
        assert best is not None
        results["handoff_print"] = {**best, "fastest_seconds": min(walls)}
        results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
