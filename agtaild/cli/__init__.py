"""`agtail`: the command line. Data on stdout, every message on stderr.

Each command lives in a small module under ``agtaild/cli/`` that exposes
``register(subparsers, common)``; this file resolves the global options into a
:class:`Context`, runs the command and maps errors to exit codes (errors.py). Heavy imports
happen inside the command handlers, so `agtail --help` starts fast.

Start-up is part of every command's time, so a plain read command against a running daemon
imports little beyond what a bare interpreter has: the line is parsed by agtaild.cli.fastparse
from the command's own declarations (argparse, agtaild.cli.parser, only for help, errors and
what fastparse leaves to it), the data dir comes from agtaild.dirs (no platformdirs or
pathlib), the client speaks HTTP over ``_socket`` itself (no http.client) and reads JSON with
json's C scanner (agtail_client.cjson: no json package, so no re), ``--json`` is written with
the json module when that gives msgspec's bytes (no msgspec), and only the command module named
on the command line is registered. tests/test_cli_startup.py holds it.
"""

from __future__ import annotations

import os
import sys

from agtaild.errors import AgtailError

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Callable, Sequence
    from typing import Any

    Handler = Callable[["Context"], int | None]

from agtaild.cli.commands import (  # noqa: E402 -- re-exported: the CLI's names as they always were
    _FLAG_OPTIONS,
    _VALUE_OPTIONS,
    COMMAND_MODULES,
    COMMANDS,
    SUPPRESS,
    _common_options,
    command_named,
    help_width,
)

__all__ = [
    "COMMANDS",
    "COMMAND_MODULES",
    "SUPPRESS",
    "_FLAG_OPTIONS",
    "_VALUE_OPTIONS",
    "Context",
    "_common_options",
    "build_parser",
    "command_named",
    "help_width",
    "main",
]


class Context:
    """The resolved global options, handed to every command handler."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.data_dir: str | None = getattr(args, "data_dir", None)
        self.root_options: list[str] = list(getattr(args, "root", None) or [])
        self.only_roots: bool = bool(getattr(args, "only_roots", False))
        self.no_daemon: bool = bool(getattr(args, "no_daemon", False))
        self.json: bool = bool(getattr(args, "json", False))
        self._config: Any = None
        self._store_config: Any = None

    @property
    def resolved_data_dir(self) -> str:
        """The data dir the command names (where a daemon for it is found), without resolving
        roots (which imports every adapter). ``config.data_dir`` may be another one: the index
        of these roots when they are not the data dir's own (agtaild/index/owner.py)."""
        from agtaild.dirs import default_data_dir_name  # not agtaild.config: that imports msgspec

        return os.path.realpath(os.path.expanduser(self.data_dir) if self.data_dir else default_data_dir_name())

    @property
    def config(self) -> Any:
        """The roots and data dir this command works on in-process: the data dir's own roots,
        or, for roots that are not its owner's, an index of their own (said on stderr)."""
        if self._config is None:
            from agtaild.config import load_config
            from agtaild.index.owner import for_command

            config = load_config(
                data_dir=self.data_dir, root_options=self.root_options, only_roots=self.only_roots
            )
            self._config, note = for_command(
                config, given_roots=bool(self.root_options or self.only_roots), explicit_dir=self.data_dir is not None
            )
            if note:
                self.err(f"agtail: {note}")
        return self._config

    @property
    def store_config(self) -> Any:
        """The roots given and the data dir named, as they are: what `sync` works on. The
        import store belongs to the data dir, whoever owns its index (and a push reads the
        native files of the roots given)."""
        if self._store_config is None:
            from agtaild.config import load_config

            self._store_config = load_config(
                data_dir=self.data_dir, root_options=self.root_options, only_roots=self.only_roots
            )
        return self._store_config

    def backend(self) -> Any:
        """The daemon when one runs for this data dir (unless --no-daemon), else in-process."""
        from agtaild.query.backend import open_backend

        return open_backend(self)

    def out_json(self, doc: Any) -> None:
        sys.stdout.buffer.write(json_bytes(doc) + b"\n")
        sys.stdout.flush()

    def err(self, message: str) -> None:
        print(message, file=sys.stderr)


def json_bytes(doc: Any) -> bytes:
    """``msgspec.json.encode(doc)``, byte for byte.

    Against a daemon, msgspec is not loaded and the document is plain JSON data (it was
    just parsed), so the standard library writes it, unless it cannot guarantee the same
    bytes; importing msgspec would cost more than the rest of such a command.
    """
    if "msgspec" not in sys.modules:
        fast = stdlib_json_bytes(doc)
        if fast is not None:
            return fast
    import msgspec

    return msgspec.json.encode(doc)


def stdlib_json_bytes(doc: Any) -> bytes | None:
    """``doc`` (JSON data: dicts with str keys, lists, str, int, float, bool, None) as msgspec
    writes it, with the json module; None when that is not certain.

    Both write compact UTF-8 with the same string escapes; they differ on floats in exponent
    form (json ``1e-05``, ``1e+16``; msgspec ``0.00001``, ``1e16``), on what is not plain JSON
    data (structs, dates, NaN: json refuses them) and, with older msgspec, on integers beyond
    64 bits. So the answer is None when json refuses, or when the text holds what may be such
    a number: one in exponent form, or of 19 digits or more, after ``:``, ``,`` or ``[``. (The
    same text inside a string is a false alarm, which only costs importing msgspec.)
    """
    import json
    import re

    try:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None
    if re.search(r"(?:^|[:,\[])-?(?:\d+(?:\.\d+)?e[-+]\d|\d{19})", text):
        return None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: let msgspec say what it says about it
        return None


def build_parser(argv: Sequence[str] | None = None) -> Any:
    """The argparse parser of every command (of only the one ``argv`` surely names):
    agtaild.cli.parser, imported only when the command line needs it."""
    from agtaild.cli.parser import build_parser as build

    return build(argv)




def main(argv: Sequence[str] | None = None) -> int:
    """Run one command with stdout and stderr behind the sanitiser (agtaild/textsafe.py):
    everything a person reads goes through it; ``--json`` writes exact bytes underneath.
    Everything it creates is private (agtaild.dirs.private_umask)."""
    from agtaild.dirs import private_umask
    from agtaild.textsafe import SafeStream

    umask = private_umask()  # everything this command creates: 0600 files, 0700 dirs
    insecure = os.environ.get("AGTAIL_INSECURE")
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        code = _run(argv)
        sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _reader_gone(out)
    finally:
        sys.stdout, sys.stderr = out, err
        os.umask(umask)  # as it was (a caller in the same process, e.g. a test, keeps its own)
        if insecure is None:
            os.environ.pop("AGTAIL_INSECURE", None)
        else:
            os.environ["AGTAIL_INSECURE"] = insecure


def _reader_gone(out: Any) -> int:
    """`agtail list | head`: the reader went away; that is not an error. What is still
    buffered goes to /dev/null, so the interpreter's last flush has nothing to complain of."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass
    return 0


#: Service parameters whose option has another name (the rest are ``--<name>``).
_OPTION_OF = {"q": "the query", "id": "the session id", "after_seq": "--from"}


def in_cli_terms(err: AgtailError) -> str:
    """The error as the command line says it: a refused parameter as the option it came from
    (``--since: 'x' is not a date …``), never the service method or the API's wording."""
    from agtaild.errors import worded

    return worded(err, lambda name: _OPTION_OF.get(name, "--" + name.replace("_", "-")))


def _run(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    from agtaild.cli.fastparse import parse

    parser = None
    args = parse(argv)  # a plain command line, without argparse (None: argparse decides)
    if args is None:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "func", None)
    if handler is None:
        (parser or build_parser(argv)).print_help(sys.stderr)
        return 2
    ctx = Context(args)
    if getattr(args, "insecure", False):  # every client of this command sees the opt-in (agtail_client)
        os.environ["AGTAIL_INSECURE"] = "1"
    try:
        code = handler(ctx)
    except AgtailError as err:
        print(f"agtail: {in_cli_terms(err)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
