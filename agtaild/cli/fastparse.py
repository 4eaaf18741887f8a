"""A plain `agtail` command line parsed without argparse, exactly as argparse parses it.

argparse imports re, enum and gettext: against a running daemon they cost a read command more
than everything else it does. Most command lines are plain — the command, its positional
arguments, options spelt out in full (``--limit 5``, ``--limit=5``, ``-q text``) — and need none
of argparse's machinery, so this parses them itself, from the same declarations: the command's
module registers its arguments into a recorder (:class:`Recorder`) instead of a parser, the same
``register(sub, common)`` call argparse gets.

Anything else gets None, and argparse parses the line as always: help, ``--version``, an
abbreviated or unknown option, ``--``, a value that starts with ``-``, a value a ``type`` or
``choices`` refuses, options of one exclusive group together, a missing argument, positional
arguments on both sides of an option, anything the recorder was not told how to take (sub-
commands, ``nargs`` on an option, other actions). So every error is still argparse's own, and
what comes back for a line parsed here is what argparse would have returned
(tests/test_cli_fastparse.py compares the two on every command).
"""

from __future__ import annotations

from agtaild.cli.commands import COMMANDS, SUPPRESS, _common_options, command_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Unsupported(Exception):
    """The line (or the command's declarations) needs argparse."""


class Namespace:
    """The attributes argparse.Namespace would hold (compared equal to one by their values)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Namespace(" + ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items()) + ")"


_TAKES_VALUE = ("store", "append")
_KNOWN_ACTIONS = ("store", "append", "store_true", "store_false", "store_const", "version")


class Action:
    """One add_argument call, as argparse would resolve its dest and default."""

    def __init__(self, flags: tuple[str, ...], kwargs: dict[str, Any], group: int | None) -> None:
        extra = set(kwargs) - {"action", "dest", "default", "type", "choices", "nargs", "const",
                               "metavar", "help", "required", "version"}  # fmt: skip
        action = kwargs.get("action", "store")
        if extra or not isinstance(action, str) or action not in _KNOWN_ACTIONS:
            raise Unsupported(f"add_argument{flags}")
        self.flags = flags
        self.positional = not flags[0].startswith("-")
        self.action = action
        self.nargs = kwargs.get("nargs")
        if self.positional:
            if self.nargs not in (None, "?", "*", "+") or action != "store":
                raise Unsupported(f"positional {flags[0]}")
            self.dest = flags[0]
        else:
            if self.nargs is not None:
                raise Unsupported(f"nargs on {flags[0]}")
            long = [f for f in flags if f.startswith("--")]
            self.dest = kwargs.get("dest") or (long[0] if long else flags[0]).lstrip("-").replace("-", "_")
        self.type = kwargs.get("type")
        self.choices = kwargs.get("choices")
        self.const = kwargs.get("const")
        self.required = bool(kwargs.get("required", False))
        self.group = group
        if action == "store_true":
            default: Any = False
        elif action == "store_false":
            default = True
        elif action == "version":
            default, self.dest = SUPPRESS, SUPPRESS
        else:
            default = None
        self.default = kwargs.get("default", default)
        if self.positional and self.nargs in ("*",) and "default" not in kwargs:
            self.default = []  # argparse: a '*' positional with no default gets []

    def value(self, text: str) -> Any:
        """``text`` converted and checked as argparse would; Unsupported where argparse would
        refuse it (argparse then says so, in its words)."""
        try:
            value = self.type(text) if self.type is not None else text
        except Exception:
            raise Unsupported("a value the type refuses") from None
        if self.choices is not None and value not in self.choices:
            raise Unsupported("a value not among the choices")
        return value


class Recorder:
    """Takes the calls a command module makes on its parser and records the arguments."""

    SUPPRESS = SUPPRESS

    def __init__(self, *, parents: Sequence[Recorder] = (), **_kwargs: Any) -> None:
        self.actions: list[Action] = [a for p in parents for a in p.actions]
        self.defaults: dict[str, Any] = {k: v for p in parents for k, v in p.defaults.items()}
        self._groups = max((a.group or 0 for a in self.actions), default=0)
        self._group: int | None = None

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        action = Action(flags, kwargs, self._group)
        if action.dest in self.defaults:  # set_defaults before the argument: argparse keeps it
            action.default = self.defaults[action.dest]
        self.actions.append(action)

    def add_argument_group(self, *_args: Any, **_kwargs: Any) -> Recorder:
        return self  # a group only for help: its arguments are the parser's

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Exclusive:
        if kwargs.get("required"):
            raise Unsupported("a required exclusive group")
        self._groups += 1
        return _Exclusive(self, self._groups)

    def set_defaults(self, **values: Any) -> None:
        self.defaults.update(values)
        for action in self.actions:
            if action.dest in values:
                action.default = values[action.dest]

    def __getattr__(self, name: str) -> Any:
        raise Unsupported(f"parser.{name}")  # add_subparsers and the like: argparse's


class _Exclusive:
    def __init__(self, parser: Recorder, group: int) -> None:
        self.parser, self.group = parser, group

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.parser._group = self.group
        try:
            self.parser.add_argument(*flags, **kwargs)
        finally:
            self.parser._group = None


class Unbuilt:
    """Takes every call a command module makes on a parser (add_argument, groups,
    set_defaults) and builds nothing: the parsers of the commands a line does not name."""

    def __getattr__(self, _name: str) -> Any:
        return self._ignore

    def _ignore(self, *_args: Any, **_kwargs: Any) -> Unbuilt:
        return self


class _Commands:
    """The subparsers action of the recorder: only the named command's parser is recorded."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.found: Recorder | None = None

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name != self.command:
            return Unbuilt()
        if kwargs.get("aliases"):
            raise Unsupported("aliases")
        self.found = Recorder(**kwargs)
        return self.found

    def __getattr__(self, name: str) -> Any:
        raise Unsupported(f"subparsers.{name}")


def parse(argv: Sequence[str]) -> Namespace | None:
    """``argv`` as argparse would parse it, or None when argparse is to parse it."""
    at = command_at(argv)
    if at is None:
        return None
    command = argv[at]
    try:
        top = _common_options(False, Recorder)
        commands = _Commands(command)
        # __import__, not importlib.import_module: importing importlib (and warnings with it)
        # costs 0.7 ms of every command's start here
        __import__(COMMANDS[command], fromlist=["register"]).register(commands, _common_options(True, Recorder))
        if commands.found is None:
            return None
        values = _parse(top, list(argv[:at]))
        values["command"] = command
        values.update(_parse(commands.found, list(argv[at + 1 :])))
    except Unsupported:
        return None
    return Namespace(**values)


def _parse(spec: Recorder, tokens: list[str]) -> dict[str, Any]:
    options: dict[str, Action] = {}
    for action in spec.actions:
        if not action.positional:
            for flag in action.flags:
                options[flag] = action
    positionals = [a for a in spec.actions if a.positional]
    given: dict[str, Any] = {}
    seen: list[Action] = []
    runs: list[list[str]] = []  # the positional tokens, in runs between options
    after_option = False
    first_run_at_start = bool(tokens) and (not tokens[0].startswith("-") or tokens[0] == "-")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            raise Unsupported("--")
        if not token.startswith("-") or token == "-":
            if not runs or after_option:
                runs.append([])
            runs[-1].append(token)
            after_option = False
            continue
        if " " in token:
            raise Unsupported("an option-like token with a space (argparse takes it as positional)")
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        found = options.get(name)
        if found is None or found.action == "version":
            raise Unsupported(f"option {token}")
        action = found
        if action.group is not None and any(s.group == action.group and s is not action for s in seen):
            raise Unsupported("options of one exclusive group together")
        seen.append(action)
        after_option = True
        if action.action in _TAKES_VALUE:
            if eq:
                text = inline
            else:
                if i >= len(tokens) or tokens[i].startswith("-"):
                    raise Unsupported(f"{token} without a plain value")
                text = tokens[i]
                i += 1
            value = action.value(text)
            if action.action == "append":
                before = given.get(action.dest)
                if before is None and action.default not in (None, SUPPRESS):
                    before = action.default
                given[action.dest] = [*(before or []), value]
            else:
                given[action.dest] = value
        elif eq:
            raise Unsupported(f"a value given to the flag {name}")
        elif action.action == "store_true":
            given[action.dest] = True
        elif action.action == "store_false":
            given[action.dest] = False
        else:  # store_const
            given[action.dest] = action.const
    given.update(_positionals(positionals, runs, first_run_at_start))
    for action in spec.actions:
        if action.required and action.dest not in given:
            raise Unsupported("a required option missing")
    out: dict[str, Any] = {}
    for action in spec.actions:  # argparse's defaults first, in declaration order
        if action.dest == SUPPRESS or action.dest in out or action.default == SUPPRESS:
            continue
        default = action.default
        if isinstance(default, str) and action.type is not None and action.dest not in given:
            default = action.value(default)
        out[action.dest] = default
    for dest, value in spec.defaults.items():
        out.setdefault(dest, value)
    out.update(given)
    return out


def _positionals(positionals: list[Action], runs: list[list[str]], at_start: bool) -> dict[str, Any]:
    """The positional arguments from one run of tokens: some taking one each, then at most one
    ``?``/``*``/``+`` last (argparse's matching, for the declarations agtail makes)."""
    if len(runs) > 1:
        raise Unsupported("positional arguments on both sides of an option")
    tokens = runs[0] if runs else []
    singles = [a for a in positionals if a.nargs is None]
    rest = [a for a in positionals if a.nargs is not None]
    if len(rest) > 1 or (rest and positionals[-1] is not rest[0]):
        raise Unsupported("positional declarations argparse matches otherwise")
    if rest and rest[0].nargs in ("?", "*") and runs and not at_start:
        # argparse gives such a positional its default at the first option already
        raise Unsupported("an optional positional after an option")
    if len(tokens) < len(singles):
        raise Unsupported("a positional argument missing")
    out: dict[str, Any] = {}
    for action, token in zip(singles, tokens, strict=False):
        out[action.dest] = action.value(token)
    left = tokens[len(singles) :]
    if not rest:
        if left:
            raise Unsupported("more positional arguments than declared")
        return out
    action = rest[0]
    if action.nargs == "?":
        if len(left) > 1:
            raise Unsupported("more positional arguments than declared")
        if left:
            out[action.dest] = action.value(left[0])
    elif action.nargs == "+" and not left:
        raise Unsupported("a positional argument missing")
    elif left or action.nargs == "+":
        out[action.dest] = [action.value(t) for t in left]
    return out
