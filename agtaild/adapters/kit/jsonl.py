"""The shared helper for "one JSONL file per session" agents (Claude Code, Codex, Pi, …).

Reading continues from a saved byte offset so that a later read costs only the appended
bytes. The offset is committed only through the last complete newline: a final line without
a newline is either still being written (the file changed in the last few seconds: left for
the next read) or, once the file has settled, read as a last record — or counted as a bad
line and the session flagged ``truncated``. Because the saved state is the parser's state
*before* that tail, the next read re-parses the tail and emits the same seqs again: the
index stores events as upserts, so this is idempotent.

An adapter subclasses :class:`LineParser` (its per-session state lives in one msgspec Struct,
a subclass of :class:`ParserState`) and :class:`JsonlAdapter`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any, ClassVar, Generic, Literal, TypeVar

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit.files import open_regular
from agtaild.model import Event, Session, UsageRecord

#: A file modified less than this many seconds ago may still be mid-write.
SETTLE_SECONDS = 5.0
#: How many bad line numbers a session remembers (the count is always exact).
MAX_BAD_LINE_NUMBERS = 1000
_CHUNK = 1 << 20

Category = Literal["events", "merged", "metadata", "skipped"]


class ParserState(msgspec.Struct):
    """Everything a parser must remember between reads. Adapters subclass it."""

    session: Session
    next_seq: int = 0
    line_no: int = 0


S = TypeVar("S", bound=ParserState)


class Continuation(msgspec.Struct):
    """Where a read stopped, and the parser state to go on with.

    ``parser`` is the state's msgpack object itself, written inline in one pass with the rest
    (:class:`_SavedContinuation`) and not copied out when read (``msgspec.Raw``). Indexes of
    before 2026-12 hold it as a msgpack bin wrapping the state (one more copy each way: for
    the 1.5 MB state of a long forked Claude session, ≈ 1 ms of an append); such a state
    still reads (:func:`parser_bytes`).
    """

    offset: int
    dev: int
    ino: int
    parser: msgspec.Raw


class _SavedContinuation(msgspec.Struct):
    """:class:`Continuation` as written: the same fields, the parser state inline."""

    offset: int
    dev: int
    ino: int
    parser: Any


#: The first byte of a msgpack bin (8, 16, 32-bit length): a state saved the older way.
_BIN = (0xC4, 0xC5, 0xC6)


def parser_bytes(cont: Continuation) -> Any:
    """The msgpack of ``cont``'s parser state, however it was saved (a buffer, not a copy)."""
    raw = memoryview(cont.parser)
    if len(raw) and raw[0] in _BIN:
        return msgspec.msgpack.decode(raw, type=bytes)
    return raw


class LineParser(Generic[S]):
    """Turns decoded records into events. One instance per read.

    ``record`` returns the accounting category of the line; the helper keeps the books, so
    events + merged + metadata + skipped + bad == lines holds by construction.
    """

    State: ClassVar[type[ParserState]] = ParserState

    def __init__(self, adapter: Adapter, unit: Unit, state: S | None) -> None:
        self.adapter = adapter
        self.unit = unit
        self.st: S = state if state is not None else self.new_state()
        self._out: dict[int, Event] = {}
        self._usage: dict[str, UsageRecord] = {}

    # -- to implement -------------------------------------------------------------------
    def new_state(self) -> S:
        raise NotImplementedError

    def record(self, obj: Any, line: int, offset: int) -> Category:
        raise NotImplementedError

    def finish(self, *, settled: bool) -> Session:
        """Derive summary fields (title, ending, …) from the state. Must not mutate events."""
        return self.st.session

    # -- helpers for subclasses ---------------------------------------------------------
    def emit(self, event: Event) -> Event:
        """Emit a new event (seq < 0 gets the next seq) or re-emit an updated one."""
        if event.seq < 0:
            event.seq = self.st.next_seq
            self.st.next_seq += 1
        self._out[event.seq] = event
        return event

    def add_usage(self, record: UsageRecord) -> None:
        self._usage[record.key] = record

    def bad(self, line: int, offset: int, raw: bytes) -> None:
        s = self.st.session
        s.accounting.bad += 1
        s.bad_lines += 1
        if len(s.bad_line_numbers) < MAX_BAD_LINE_NUMBERS:
            s.bad_line_numbers.append(line)

    def settle(self) -> None:
        """Called once the complete lines of a read are in (and again after a settled last
        line): the moment to derive marks that depend on the whole file so far, so the
        state saved after it includes them."""

    def take_marks(self) -> dict[int, dict[str, Any]]:
        """Extra keys to set on events stored by earlier reads, by seq (``ReadResult.marks``)."""
        return {}

    @classmethod
    def resumable(cls, state: ParserState) -> bool:
        """Whether a saved state can be continued (False, e.g., for a state of an older layout:
        the file is then read from the start)."""
        return True

    def wants_full_read(self) -> bool:
        """True when the appended lines cannot be applied to the saved state (e.g. they need
        records the state no longer holds): the helper then reads the file from the start."""
        return False

    # -- used by the helper ---------------------------------------------------------------
    def take_output(self) -> tuple[list[Event], list[UsageRecord]]:
        events = [self._out[k] for k in sorted(self._out)]
        return events, list(self._usage.values())


def decode_line(raw: bytes) -> Any:
    """Decode one JSON line; raises msgspec.DecodeError on anything that is not JSON."""
    return msgspec.json.decode(raw)


def feed_lines(parser: LineParser[Any], lines: Iterable[tuple[bytes, int]]) -> None:
    """Feed complete physical lines (bytes without the newline, byte offset) to ``parser``."""
    st = parser.st
    acct = st.session.accounting
    for raw, offset in lines:
        st.line_no += 1
        if not raw.strip():
            continue
        try:
            obj = decode_line(raw)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # too deeply nested = bad line too
            acct.lines += 1
            parser.bad(st.line_no, offset, raw)
            continue
        acct.count(parser.record(obj, st.line_no, offset))


def split_lines(data: bytes, base: int) -> tuple[list[tuple[bytes, int]], int]:
    """Split ``data`` into complete lines; returns them and the length consumed."""
    out: list[tuple[bytes, int]] = []
    start = 0
    find = data.find
    while True:
        nl = find(b"\n", start)
        if nl < 0:
            break
        line = data[start:nl]
        if line.endswith(b"\r"):
            line = line[:-1]
        out.append((line, base + start))
        start = nl + 1
    return out, start


def parse_tail(parser: LineParser[Any], tail: bytes, offset: int) -> None:
    """A settled last line without a newline: a record if it decodes, else bad + truncated."""
    st = parser.st
    if not tail.strip():
        st.line_no += 1
        return
    try:
        decode_line(tail)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # too deeply nested = bad line too
        st.line_no += 1
        st.session.accounting.lines += 1
        parser.bad(st.line_no, offset, tail)
        st.session.truncated = True
        return
    feed_lines(parser, [(tail, offset)])


class JsonlAdapter(Adapter):
    """Base for agents that write one append-only JSONL file per session."""

    incremental: ClassVar[bool] = True
    Parser: ClassVar[type[LineParser[Any]]] = LineParser

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        path = unit.path
        st = os.stat(path)
        now = time.time() if now is None else now
        settled = now - st.st_mtime >= SETTLE_SECONDS

        cont: Continuation | None = None
        if state is not None:
            try:
                cont = msgspec.msgpack.decode(state, type=Continuation)
            except msgspec.DecodeError:
                cont = None
        with open_regular(path) as fh:
            if cont is not None and not self._can_continue(fh, st, cont):
                cont = None
            parser_state = None
            if cont is not None:
                try:
                    parser_state = msgspec.msgpack.decode(parser_bytes(cont), type=self.Parser.State)
                except msgspec.DecodeError:
                    cont = None
                if parser_state is not None and not self.Parser.resumable(parser_state):
                    cont = parser_state = None
            parser = self.Parser(self, unit, parser_state)
            offset = cont.offset if cont is not None else 0
            fh.seek(offset)
            buf = b""
            buf_start = offset
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                buf += chunk
                lines, used = split_lines(buf, buf_start)
                if lines:
                    feed_lines(parser, lines)
                    buf = buf[used:]
                    buf_start += used
        parser.settle()
        if cont is not None and parser.wants_full_read():
            return self.read(unit, None, now=now)
        committed = self._continuation(parser, st, buf_start)
        if buf and settled:
            parse_tail(parser, buf, buf_start)
            parser.settle()
            if cont is not None and parser.wants_full_read():
                return self.read(unit, None, now=now)
        session = parser.finish(settled=settled)
        session.path = unit.path
        session.mtime = st.st_mtime
        if unit.archived:
            session.archived = True
        events, usage = parser.take_output()
        return ReadResult(
            session=session,
            events=events,
            usage=usage,
            state=committed,
            reset=cont is None,
            marks=parser.take_marks(),
        )

    @staticmethod
    def _continuation(parser: LineParser[Any], st: os.stat_result, offset: int) -> bytes | None:
        """The state to continue from (encoded now: the parser goes on with a settled last
        line after this), or None when the parser's state cannot be saved (e.g. a record
        carried an integer wider than 64 bits into it): the next read then starts over,
        which costs time but loses nothing."""
        try:
            return msgspec.msgpack.encode(
                _SavedContinuation(offset=offset, dev=st.st_dev, ino=st.st_ino, parser=parser.st)
            )
        except (OverflowError, TypeError, ValueError):
            return None

    @staticmethod
    def _can_continue(fh: Any, st: os.stat_result, cont: Continuation) -> bool:
        return same_file_continues(fh, st, cont.dev, cont.ino, cont.offset)


def same_file_continues(fh: Any, st: os.stat_result, dev: int, ino: int, offset: int) -> bool:
    """Whether a read saved at ``offset`` of file (dev, ino) can go on in the open file ``fh``:
    the same file (device, inode), not shorter, and the saved offset ends a line."""
    if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < offset:
        return False
    if offset == 0:
        return True
    fh.seek(offset - 1)
    return bool(fh.read(1) == b"\n")
