"""The argparse parser of `agtail`: every command's, or only the one a command line names.

Imported only when a command line needs argparse (help, an error to word, anything
agtaild.cli.fastparse does not take): argparse brings re, enum and gettext, which cost a
command against a running daemon more than the rest of it.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import Any

from agtaild import __version__
from agtaild.cli import commands as cli
from agtaild.cli.commands import _common_options, command_named, help_width
from agtaild.cli.fastparse import Unbuilt

#: help_width() as build_parser found it (None: not built yet, ask each time).
_width: int | None = None


class HelpFormatter(argparse.HelpFormatter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) < 4 and kwargs.get("width") is None:
            kwargs["width"] = _width if _width is not None else help_width()
        super().__init__(*args, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse's parser with :func:`help_width`; its subparsers are of this class too."""

    SUPPRESS = argparse.SUPPRESS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)



def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given the command line, of only the command module it
    names when it surely names one (the parse is the same: no other command is involved)."""
    global _width
    _cached_translations()
    _width = help_width()  # once: argparse makes a formatter for every argument it adds
    modules = cli.COMMAND_MODULES  # looked up at each call (a test narrows it)
    command = command_named(argv) if argv is not None else None
    if command is not None and cli.COMMANDS[command] in modules:
        modules = [cli.COMMANDS[command]]
    parser = Parser(
        prog="agtail",
        description="Find, read, follow and keep the sessions of your AI coding agents.",
        parents=[_common_options(False, Parser)],
    )
    parser.add_argument("--version", action="version", version=f"agtail {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common_options(True, Parser)
    target = sub if command is None else OnlyCommand(sub, command)
    for name in modules:
        importlib.import_module(name).register(target, common)
    return parser


class OnlyCommand:
    """The subparsers action, building only the parser of the named command: a module
    registers several (agtaild.cli.query: six), and the others are never used when the
    command line names one. Their add_parser gets a :class:`Unbuilt`."""

    def __init__(self, sub: Any, command: str) -> None:
        self.sub = sub
        self.command = command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self.command:
            return self.sub.add_parser(name, **kwargs)
        return Unbuilt()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sub, name)


def _cached_translations() -> None:
    """argparse asks gettext for each of its messages anew, and each ask looks for catalogue
    files on disk (~25 asks for one command's parser). The answer cannot change within a
    process, so it is asked once per message."""
    import functools

    if not hasattr(argparse._, "cache_info"):  # type: ignore[attr-defined]
        argparse._ = functools.lru_cache(maxsize=None)(argparse._)  # type: ignore[attr-defined]
        argparse.ngettext = functools.lru_cache(maxsize=None)(argparse.ngettext)  # type: ignore[attr-defined]


