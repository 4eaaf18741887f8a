"""`agtail`: the command line. Data on stdout, every message on stderr.

Each command lives in a small module under ``agtaild/cli/`` that exposes
``register(subparsers, common)``; this file only builds the parser, resolves the global
options into a :class:`Context` and maps errors to exit codes (errors.py). Heavy imports
happen inside the command handlers, so `agtail --help` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agtaild import __version__
from agtaild.errors import AgtailError

#: Command modules, each with register(subparsers, common).
COMMAND_MODULES: list[str] = [
    "agtaild.cli.query",
    "agtaild.cli.tail",
    "agtaild.cli.open",
    "agtaild.cli.resume",
    "agtaild.cli.sync",
    "agtaild.cli.doctor",
]


class Context:
    """The resolved global options, handed to every command handler."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.data_dir: str | None = getattr(args, "data_dir", None)
        self.root_options: list[str] = list(getattr(args, "root", None) or [])
        self.only_roots: bool = bool(getattr(args, "only_roots", False))
        self.no_daemon: bool = bool(getattr(args, "no_daemon", False))
        self.json: bool = bool(getattr(args, "json", False))
        self._config: Any = None

    @property
    def resolved_data_dir(self) -> str:
        """The data dir alone, without resolving roots (which imports every adapter)."""
        if self._config is not None:
            return str(self._config.data_dir)
        from agtaild.config import default_data_dir

        path = Path(self.data_dir).expanduser() if self.data_dir else default_data_dir()
        return str(path.resolve())

    @property
    def config(self) -> Any:
        if self._config is None:
            from agtaild.config import load_config

            self._config = load_config(
                data_dir=self.data_dir, root_options=self.root_options, only_roots=self.only_roots
            )
        return self._config

    def backend(self) -> Any:
        """The daemon when one runs for this data dir (unless --no-daemon), else in-process."""
        from agtaild.backend import open_backend

        return open_backend(self)

    def out_json(self, doc: Any) -> None:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(doc) + b"\n")
        sys.stdout.flush()

    def err(self, message: str) -> None:
        print(message, file=sys.stderr)


def _common_options(for_subcommand: bool) -> argparse.ArgumentParser:
    """Global options, accepted before or after the command name.

    On subcommands the defaults are SUPPRESS so a value given before the command is not
    overwritten by the subparser's default.
    """
    p = argparse.ArgumentParser(add_help=False)
    d = argparse.SUPPRESS if for_subcommand else None
    g = p.add_argument_group("global options")
    g.add_argument(
        "--data-dir",
        metavar="DIR",
        default=d,
        help="index and state directory (env: AGTAIL_DATA_DIR; default: the platform user data dir)",
    )
    g.add_argument(
        "--root",
        metavar="AGENT=PATH",
        action="append",
        default=d,
        help="read AGENT's sessions from PATH instead of its default root (repeatable)",
    )
    g.add_argument(
        "--only-roots",
        action="store_true",
        default=d if for_subcommand else False,
        help="ignore every default root: only the --root options given, plus the import store",
    )
    g.add_argument(
        "--no-daemon",
        action="store_true",
        default=d if for_subcommand else False,
        help="work in-process on the embedded index even if a daemon runs",
    )
    g.add_argument(
        "--json",
        action="store_true",
        default=d if for_subcommand else False,
        help="print one JSON document on stdout",
    )
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agtail",
        description="Find, read, follow and keep the sessions of your AI coding agents.",
        parents=[_common_options(False)],
    )
    parser.add_argument("--version", action="version", version=f"agtail {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common_options(True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, common)
    return parser


Handler = Callable[[Context], int | None]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "func", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    ctx = Context(args)
    try:
        code = handler(ctx)
    except AgtailError as err:
        print(f"agtail: {err.message}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `agtail list | head`: the reader went away; that is not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
