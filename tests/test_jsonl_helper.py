"""The one-JSONL-file-per-session helper: offsets, torn tails, replaced files, unsavable state."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsonl import Category, JsonlAdapter, LineParser, ParserState
from agtaild.model import Event, Session


class EchoState(ParserState):
    last: Any = None


class EchoParser(LineParser[EchoState]):
    """Every record becomes a text event; `{"keep": X}` also stores X in the saved state."""

    State = EchoState

    def new_state(self) -> EchoState:
        return EchoState(session=Session(agent="echo", id="s"))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if isinstance(obj, dict) and "keep" in obj:
            self.st.last = obj["keep"]
        self.emit(Event(seq=-1, kind="text", text=msgspec.json.encode(obj).decode(), source={"line": line}))
        return "events"


class EchoAdapter(JsonlAdapter):
    id = "echo"
    Parser = EchoParser


def _unit(path: Path) -> Unit:
    return Unit(agent="echo", path=str(path), files=[str(path)], root=str(path.parent))


LATER = time.time() + 3600  # "now" far after the file's mtime: the file has settled


def test_a_torn_last_line_is_bad_and_truncated_once_settled(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a":1}\nnot json\n\n{"b":2}\n{"c":')
    res = EchoAdapter().read(_unit(f), None, now=LATER)
    acct = res.session.accounting
    assert (acct.lines, acct.events, acct.bad) == (4, 2, 2)
    assert acct.balanced()
    assert res.session.bad_line_numbers == [2, 5]
    assert res.session.truncated
    assert [e.text for e in res.events] == ['{"a":1}', '{"b":2}']
    assert res.reset


def test_a_tail_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a":1}\n{"c":')
    res = EchoAdapter().read(_unit(f), None, now=os.stat(f).st_mtime + 0.5)
    assert not res.session.truncated
    assert res.session.accounting.lines == 1
    with open(f, "ab") as fh:
        fh.write(b'3}\n{"d":4}\n')
    nxt = EchoAdapter().read(_unit(f), res.state, now=LATER)
    assert not nxt.reset
    assert [(e.seq, e.text) for e in nxt.events] == [(1, '{"c":3}'), (2, '{"d":4}')]
    assert nxt.session.accounting.lines == 3 and nxt.session.accounting.balanced()


def test_a_settled_tail_is_parsed_and_then_re_parsed_with_the_same_seq(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a":1}\n{"b":2}')
    first = EchoAdapter().read(_unit(f), None, now=LATER)
    assert [e.seq for e in first.events] == [0, 1]
    with open(f, "ab") as fh:
        fh.write(b'\n{"c":3}\n')
    second = EchoAdapter().read(_unit(f), first.state, now=LATER)
    # The tail {"b":2} comes again under the same seq (an upsert), then the new line.
    assert [(e.seq, e.text) for e in second.events] == [(1, '{"b":2}'), (2, '{"c":3}')]
    assert second.session.accounting.lines == 3


def test_a_replaced_or_shrunk_file_is_read_from_the_start(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a":1}\n{"b":2}\n')
    first = EchoAdapter().read(_unit(f), None, now=LATER)
    f.write_bytes(b'{"z":9}\n')  # same inode, shorter: truncated and rewritten
    second = EchoAdapter().read(_unit(f), first.state, now=LATER)
    assert second.reset
    assert [e.text for e in second.events] == ['{"z":9}']
    other = tmp_path / "t.jsonl"
    other.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    os.replace(other, f)  # a new inode at the same path
    third = EchoAdapter().read(_unit(f), second.state, now=LATER)
    assert third.reset and len(third.events) == 3


def test_garbage_state_starts_over_instead_of_failing(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"a":1}\n')
    res = EchoAdapter().read(_unit(f), b"\x00not msgpack", now=LATER)
    assert res.reset and len(res.events) == 1


def test_state_that_cannot_be_saved_means_the_next_read_starts_over(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"keep": 123456789012345678901234567890}\n')
    res = EchoAdapter().read(_unit(f), None, now=LATER)
    assert res.state is None  # a 100-bit integer does not fit msgpack: no continuation
    assert len(res.events) == 1
    with open(f, "ab") as fh:
        fh.write(b'{"keep": 1}\n')
    again = EchoAdapter().read(_unit(f), res.state, now=LATER)
    assert again.reset and len(again.events) == 2 and again.state is not None
