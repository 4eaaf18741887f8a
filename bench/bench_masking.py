#!/usr/bin/env python3
"""What masking every text answer costs (issue #24): in-process ``Service.call`` with and
without masking (``reveal=True`` skips it), on the sample corpus' claude-code and codex folders.

    bench/bench_masking.py [--work DIR] [--repeat 20] [--profile METHOD]

Methods measured: ``events.list`` (200 events of the session with the most events),
``search`` "the" (20 hits), ``sessions.list`` (50 sessions). Each call is timed ``--repeat``
times after one warm-up call; the best is printed (CPU milliseconds) with the ratio. "masked" is
a page read before (its items' verdicts cached, agtaild.query.masking); "first read" empties
the verdict cache before each call (every item scanned). Prints one
JSON document. ``--profile METHOD`` prints cProfile's top functions of the masked calls.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agtaild.config import Config, RootSpec  # noqa: E402
from agtaild.query.service import Service  # noqa: E402


def timed(fn: Any, repeat: int, before: Any = None) -> float:
    """The best of ``repeat`` runs in CPU milliseconds of this process (CPU time, and the
    best: the machine is shared, and wall time under load measures the neighbours)."""
    fn()
    out = []
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.process_time()
        fn()
        out.append(time.process_time() - started)
    return min(out) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--profile", default=None)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="agtail-bench-masking-"))
    os.environ["HOME"] = str(work / "home")
    os.environ["XDG_DATA_HOME"] = str(work / "xdg")
    corpus = ROOT / "tests" / "corpus"
    config = Config(
        data_dir=str(work / "data"),
        roots=[RootSpec("claude-code", str(corpus / "claude-code")), RootSpec("codex", str(corpus / "codex"))],
        archive=False,
    )
    svc = Service(config)
    svc.update_index()
    sessions = svc.call("sessions.list", {"limit": 1000}, reveal=True)["sessions"]
    longest = max(sessions, key=lambda s: (s.get("accounting") or {}).get("events") or 0)
    calls = {
        "events.list": {"agent": longest["agent"], "id": longest["id"], "limit": 200},
        "search": {"q": "the", "limit": 20},
        "sessions.list": {"limit": 50},
    }
    if args.profile:
        import cProfile
        import pstats

        params = calls[args.profile]
        svc.call(args.profile, params)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.repeat):
            svc.call(args.profile, params)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return
    out: dict[str, Any] = {"python": platform.python_version(), "load": os.getloadavg()[0], "repeat": args.repeat}
    try:
        from agtaild.query.masking import masker_for
        from agtaild.secrets import default_scanner

        clear = masker_for(default_scanner())._verdicts.clear
    except ImportError:  # a checkout from before the verdict cache: every read is a first read
        clear = None
    for method, params in calls.items():
        plain = timed(lambda m=method, p=params: svc.call(m, p, reveal=True), args.repeat)
        masked = timed(lambda m=method, p=params: svc.call(m, p), args.repeat)
        cold = timed(lambda m=method, p=params: svc.call(m, p), args.repeat, clear)
        out[method] = {
            "unmasked_ms": round(plain, 2),
            "masked_ms": round(masked, 2),
            "ratio": round(masked / plain, 2),
            "masked_first_read_ms": round(cold, 2),
            "first_read_ratio": round(cold / plain, 2),
        }
    svc.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
