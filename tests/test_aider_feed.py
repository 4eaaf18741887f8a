"""RunParser.feed (common lines decided inline, a block's text joined once) builds exactly
what feeding the same lines one by one through RunParser.line does — on the corpus runs and on
hypothesis-made runs of Aider-like lines, fed whole or cut into several reads."""

from __future__ import annotations

import itertools
from pathlib import Path

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agtaild.adapters.aider.markdown import RunParser, RunState
from agtaild.model import Accounting, Session


def _by_line(lines: list[str], cuts: list[int]) -> tuple[bytes, bytes]:
    return _run(lines, cuts, by_line=True)


def _run(lines: list[str], cuts: list[int], *, by_line: bool) -> tuple[bytes, bytes]:
    """(the events of every read, the final state) for ``lines`` read in pieces at ``cuts``,
    the state saved and loaded between reads as the adapter does."""
    state = RunState(session=Session(agent="aider", id="r"))
    out: list[bytes] = []
    number = 0
    bounds = sorted({0, len(lines), *(c % (len(lines) + 1) for c in cuts)})
    for start, end in itertools.pairwise(bounds):
        parser = RunParser(state)
        acct: Accounting = state.session.accounting
        if by_line:
            for raw in lines[start:end]:
                number += 1
                category = parser.line(raw.rstrip("\r"), number)
                if category is not None:
                    acct.count(category)
        else:
            number = parser.feed(lines[start:end], number, acct)
        events, usage = parser.output()
        out.append(msgspec.json.encode([events, usage]))
        state = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=RunState)
    return b"\n".join(out), msgspec.msgpack.encode(state)


_LINES = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "  ",
            "\r",
            "> ",
            ">",
            ">  ",
            ">   ",
            ">    ",
            "> x",
            "> x  ",
            ">  x  ",
            "> Tokens: 1.2k sent, 30 received.",
            "> Model: m with diff edit format",
            "> Aider v0.86.2",
            "> aider --message hi",
            "> Error: boom",
            "> ^C again to exit",
            "> Unable to x",
            "> an exception",
            "#### hi",
            "####",
            "#### <blank>",
            "#### /exit",
            "text",
            "text  ",
            "  indented",
            "<thinking-content-ab12>",
            "</thinking-content-ab12>",
            ">>>>>>> REPLACE",
            "<<<<<<< SEARCH",
            "# heading",
            "\t",
            "x \t",
            "reply  \r",
            "> wrapped output  ",
            "continued",
            "> Applied edit to hello.py  ",
        ]
    ),
    st.text(alphabet=" >#<x\tA\r", max_size=6),
)


@settings(max_examples=200, deadline=None)
@example(["> ", ">   ", "> x"], [])  # an output block whose text stays empty for a while
@example(["> a", "", "> ", ">   ", "> x"], [4])
@given(st.lists(_LINES, max_size=40), st.lists(st.integers(0, 40), max_size=3))
def test_feed_equals_line_by_line(lines: list[str], cuts: list[int]) -> None:
    assert _run(lines, cuts, by_line=False) == _by_line(lines, cuts)


def test_feed_equals_line_by_line_on_the_corpus(corpus: Path) -> None:
    for path in sorted(corpus.rglob(".aider.chat.history.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for run in text.split("# aider chat started at ")[1:]:
            lines = run.split("\n")[1:-1]
            for cuts in ([], [len(lines) // 3, len(lines) // 2]):
                assert _run(lines, cuts, by_line=False) == _by_line(lines, cuts), path
