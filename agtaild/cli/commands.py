"""What every front of `agtail`'s command line shares: the command modules and the commands each
registers, the global options, and how a command line names its command. agtaild.cli runs a
command; agtaild.cli.fastparse (a plain line) and agtaild.cli.parser (argparse, for the rest)
parse it from these."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: Command modules, each with register(subparsers, common).
COMMAND_MODULES: list[str] = [
    "agtaild.cli.query",
    "agtaild.cli.tail",
    "agtaild.cli.open",
    "agtaild.cli.resume",
    "agtaild.cli.sync",
    "agtaild.cli.chat_import",
    "agtaild.cli.share",
    "agtaild.cli.organize",
    "agtaild.cli.state",
    "agtaild.cli.doctor",
    "agtaild.cli.service",
    "agtaild.cli.pg",
    "agtaild.cli.mcp",
    "agtaild.cli.projects",
    "agtaild.cli.top",
    "agtaild.cli.statusline",
    "agtaild.cli.report",
    "agtaild.cli.secrets",
    "agtaild.cli.provenance",
    "agtaild.cli.embeddings",
]

#: The module that registers each command, so that a command line naming one builds only
#: that module's parsers (all of them cost ~10 ms). A test keeps it in step with the modules.
COMMANDS: dict[str, str] = {
    **dict.fromkeys(("index", "reindex", "list", "search", "show", "stats"), "agtaild.cli.query"),
    "tail": "agtaild.cli.tail",
    "open": "agtaild.cli.open",
    "resume": "agtaild.cli.resume",
    "pick": "agtaild.cli.resume",
    **dict.fromkeys(("export", "sync", "collections"), "agtaild.cli.sync"),
    "import": "agtaild.cli.chat_import",
    "handoff": "agtaild.cli.share",
    **dict.fromkeys(("label", "star", "unstar", "title", "hide", "unhide", "rules"), "agtaild.cli.organize"),
    "state": "agtaild.cli.state",
    "doctor": "agtaild.cli.doctor",
    "service": "agtaild.cli.service",
    "pg": "agtaild.cli.pg",
    "mcp": "agtaild.cli.mcp",
    "projects": "agtaild.cli.projects",
    "top": "agtaild.cli.top",
    "statusline": "agtaild.cli.statusline",
    "report": "agtaild.cli.report",
    "secrets": "agtaild.cli.secrets",
    **dict.fromkeys(("history", "blame"), "agtaild.cli.provenance"),
    "embeddings": "agtaild.cli.embeddings",
}

#: argparse.SUPPRESS (the same string), without importing argparse.
SUPPRESS = "==SUPPRESS=="

#: Global options that take a value (and the flags that do not), as the command line may give
#: them before the command.
_VALUE_OPTIONS = ("--data-dir", "--root")
_FLAG_OPTIONS = ("--only-roots", "--no-daemon", "--json", "--insecure")


def help_width() -> int:
    """The width argparse lays help out in: ``shutil.get_terminal_size().columns - 2``,
    without importing shutil (argparse imports it for every argument added; ~4 ms)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def _common_options(for_subcommand: bool, make: Any) -> Any:
    """Global options, accepted before or after the command name.

    On subcommands the defaults are SUPPRESS so a value given before the command is not
    overwritten by the subparser's default.
    """
    p = make(add_help=False)
    d = make.SUPPRESS if for_subcommand else None  # argparse tests its own object by identity
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
    g.add_argument(
        "--insecure",
        action="store_true",
        default=d if for_subcommand else False,
        help="allow AGTAIL_SERVER and http:// sync remotes on plain http to a host that is not loopback: the "
        "token and transcripts cross the network in clear (env: AGTAIL_INSECURE=1)",
    )
    return p


def command_named(argv: Sequence[str]) -> str | None:
    """The command a command line names, when that is certain: only global options (spelt
    out in full) come before it. None otherwise (help, --version, no command, an abbreviated
    or unknown option, an unknown command), and then every command is built."""
    at = command_at(argv)
    return None if at is None else argv[at]


def command_at(argv: Sequence[str]) -> int | None:
    """Where in ``argv`` the command :func:`command_named` finds is (None: no certain one)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _VALUE_OPTIONS:
            i += 2
        elif arg in _FLAG_OPTIONS or arg.startswith(tuple(o + "=" for o in _VALUE_OPTIONS)):
            i += 1
        else:
            return i if arg in COMMANDS else None
    return None
