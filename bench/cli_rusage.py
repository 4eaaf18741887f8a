#!/usr/bin/env python3
"""Run ``agtail ARGS…`` exactly as the installed command does, then write this process's and
its children's resource usage as JSON to the file named by ``--rusage-out`` (first argument).

Used by run_bench.py so that every CLI figure includes process start-up (the same imports as
the ``agtail`` console script) and the peak RSS of the CLI and of its worker processes can be
told apart.

Usage: cli_rusage.py RUSAGE.json AGTAIL-ARGS…
"""

from __future__ import annotations

import json
import resource
import sys


def peak_rss_mb(usage: resource.struct_rusage) -> float:
    """This process's peak RSS in MB. On Linux from ``VmHWM`` (the peak of the memory image since
    exec): ``ru_maxrss`` keeps the parent's RSS at the fork that led here, so a CLI started from a
    big benchmark process would report that process's size."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return usage.ru_maxrss / 1024


def main() -> int:
    out = sys.argv[1]
    from agtaild.entry import main as agtail

    code = agtail(sys.argv[2:])
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as fh:
        json.dump(
            {
                "cpu_self": me.ru_utime + me.ru_stime,
                "cpu_children": kids.ru_utime + kids.ru_stime,
                "maxrss_self_mb": peak_rss_mb(me),
                "maxrss_children_mb": kids.ru_maxrss / 1024,
            },
            fh,
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
