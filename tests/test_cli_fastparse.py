"""agtaild.cli.fastparse parses a plain command line exactly as argparse does, or leaves it to
argparse: for random command lines of every command, built from the command's own options,
choices, numbers, words and the tokens argparse treats specially."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agtaild import cli
from agtaild.cli.fastparse import parse


def argparse_result(argv: list[str]) -> dict[str, Any] | None:
    """vars() of argparse's namespace, None when argparse refuses the line (exit 2)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(cli.build_parser(argv).parse_args(argv))
    except SystemExit:
        return None


def command_tokens(command: str) -> list[str]:
    """The command's option strings and choices, as its argparse parser declares them."""
    parser = cli.build_parser([command])
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    tokens: list[str] = []
    for action in sub.choices[command]._actions:
        tokens += action.option_strings
        tokens += [str(c) for c in action.choices or () if isinstance(c, str)]
        tokens += [f"{o}=7" for o in action.option_strings if o.startswith("--")]
    return tokens


COMMANDS = sorted(cli.COMMANDS)
TOKENS = {c: command_tokens(c) for c in COMMANDS}
PLAIN = ["x", "7", "-1", "a:b", "claude-code:3f2a", "hello world", "-", "--", "-x", "--lim", "--no-such",
         "day", "md", "k=v", "", "-h", "--help", "--version"]  # fmt: skip


@st.composite
def command_lines(draw: Any) -> list[str]:
    command = draw(st.sampled_from(COMMANDS))
    pool = TOKENS[command] + PLAIN
    before = draw(st.lists(st.sampled_from(["--json", "--no-daemon", "--data-dir", "/d", "--root", "a=/r"]), max_size=3))
    after = draw(st.lists(st.sampled_from(pool), max_size=7))
    return [*before, command, *after]


@given(command_lines())
@settings(max_examples=1500, deadline=None)
def test_a_line_parsed_here_is_what_argparse_makes_of_it(argv: list[str]) -> None:
    fast = parse(argv)
    if fast is None:
        return  # argparse's to parse: nothing to compare
    assert vars(fast) == argparse_result(argv), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["list", "--limit", "5", "--agent", "codex", "--json"],
        ["--data-dir", "/x", "list", "--root", "a=b", "--root", "c=d"],
        ["--root", "z=1", "list", "--root", "a=b"],
        ["--data-dir", "list", "list", "--limit", "3"],  # a global option's value that is a command's name
        ["search", "flaky", "test", "--limit=3", "--mode", "words"],
        ["show", "claude-code:abc", "--full", "--around", "5"],
        ["stats", "--by", "model"],
        ["projects"],
        ["list", "-q", "hello world", "--hidden"],
    ],
)
def test_the_everyday_lines_are_parsed_here(argv: list[str]) -> None:
    fast = parse(argv)
    assert fast is not None, argv
    assert vars(fast) == argparse_result(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "foo", "--limit", "3", "bar"],  # positional arguments on both sides: an error
        ["list", "--native", "--imported"],  # an exclusive group
        ["list", "--lim", "5"],  # an abbreviation argparse accepts
        ["list", "--limit", "x"],  # a value the type refuses
        ["search", "--mode", "nope", "a"],  # not a choice
        ["list", "--help"],
        ["search"],
        ["secrets"],  # subcommands
        ["--version"],
    ],
)
def test_what_needs_argparse_is_left_to_it(argv: list[str]) -> None:
    assert parse(argv) is None
