"""The `agtail` console script: the statusline's fast path, or the full command line.

A status bar runs `agtail statusline` on every change and waits for it, so that command line
goes to agtaild.statusline_fast before argparse or the CLI is imported; every other command
line (and whatever the fast path does not serve) goes to agtaild.cli.main.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if "statusline" in args:  # a cheap first look; then the fast path reads the command line
        from agtaild import statusline_fast

        opts = statusline_fast.parse_argv(args)
        if opts is not None:
            return statusline_fast.main(args, opts)
    from agtaild.cli import main as full

    return full(args)
