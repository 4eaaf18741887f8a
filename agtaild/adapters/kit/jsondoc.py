"""The shared helper for "one JSON document per session" agents (Gemini CLI before 0.39, and
the one-file-per-record stores such as OpenCode's older ``storage/`` tree).

Such a document is rewritten whole whenever the agent saves, so there is no offset to
continue from: every read parses the whole document and returns ``reset=True``. Accounting
counts the document's *records* (its messages, or one file per record) as its "lines":
a record mapped to events, merged into another event, kept as metadata, skipped on purpose,
or bad — and those add up to the whole, as for JSONL files.

A document that does not decode is counted as one bad record rather than raised: the agent
may be rewriting it right now (then the next read sees the whole file), or it was torn by a
crash (then, once the file has settled, the session is flagged ``truncated``).

:class:`RecordBook` keeps those books for any whole-unit read (the SQLite helper uses it
too); :class:`JsonDocAdapter` is the base for agents whose unit is one JSON file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit.files import open_regular, regular_stat
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import MAX_BAD_LINE_NUMBERS, SETTLE_SECONDS
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.errors import AgtailError
from agtaild.model import Event, Session, Usage, UsageRecord

Category = Literal["events", "merged", "metadata", "skipped"]

#: Documents larger than this are not loaded (a session document is kilobytes to megabytes).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

_decoder = msgspec.json.Decoder()


class Document(msgspec.Struct):
    """One JSON file as read from disk: the decoded value, or why it could not be decoded."""

    path: str
    mtime: float
    size: int
    settled: bool
    value: Any = None
    error: str | None = None
    #: An empty (or all-whitespace) file: no records at all, which is not an error.
    empty: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.empty


def read_document(path: str | os.PathLike[str], *, now: float | None = None) -> Document:
    """Read and decode one JSON file. OSError (missing, unreadable, not a regular file:
    agtaild.adapters.kit.files) propagates: the caller decides whether that makes the whole
    unit unreadable."""
    path = os.fspath(path)
    st = regular_stat(path)
    now = time.time() if now is None else now
    settled = now - st.st_mtime >= SETTLE_SECONDS
    doc = Document(path=path, mtime=st.st_mtime, size=st.st_size, settled=settled)
    if st.st_size > MAX_DOCUMENT_BYTES:
        doc.error = f"larger than {MAX_DOCUMENT_BYTES} bytes"
        return doc
    with open_regular(path) as fh:
        data = fh.read()
    if not data.strip():
        doc.empty = True
        return doc
    try:
        doc.value = json_value(data, _decoder)
    except BadJson as exc:
        doc.error = str(exc)
    return doc


class RecordBook:
    """The events, usage records and accounting of one whole-unit read.

    ``count`` and ``bad`` are called once per source record, so
    events + merged + metadata + skipped + bad == lines holds by construction.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.next_seq = 0
        self._events: dict[int, Event] = {}
        self._usage: dict[str, UsageRecord] = {}

    def emit(self, event: Event) -> Event:
        """Add an event; a negative seq takes the next one (re-emitting a seq replaces it)."""
        if event.seq < 0:
            event.seq = self.next_seq
            self.next_seq += 1
        self._events[event.seq] = event
        return event

    def add_usage(self, record: UsageRecord) -> None:
        self._usage[record.key] = record

    def count(self, category: Category) -> None:
        self.session.accounting.count(category)

    def bad(self, number: int) -> None:
        """A record that could not be decoded; ``number`` is its 1-based position (or row)."""
        s = self.session
        s.accounting.lines += 1
        s.accounting.bad += 1
        s.bad_lines += 1
        if len(s.bad_line_numbers) < MAX_BAD_LINE_NUMBERS:
            s.bad_line_numbers.append(number)

    @property
    def events(self) -> list[Event]:
        return [self._events[k] for k in sorted(self._events)]

    @property
    def usage(self) -> list[UsageRecord]:
        return list(self._usage.values())

    def total_usage(self) -> Usage:
        """The sum of the usage records: the session's usage, each response counted once."""
        total = Usage()
        for rec in self._usage.values():
            total.add(rec.usage)
        return total.fix_total()

    def result(self, state: bytes | None = None) -> ReadResult:
        return ReadResult(session=self.session, events=self.events, usage=self.usage, state=state, reset=True)


class JsonDocAdapter(Adapter):
    """Base for agents that write one JSON document per session.

    Subclasses implement :meth:`parse` (walk the document, ``book.count`` every record) and
    may override :meth:`new_session` (the id before the document says otherwise) and
    :meth:`finish` (title, ending, … from what was parsed).
    """

    incremental: ClassVar[bool] = False
    #: True for agents that rewrite the document in place while it is in use (Continue): a
    #: document that does not decode and changed in the last seconds is being rewritten, so
    #: the read fails (the index keeps what it stored and reads it again) instead of storing
    #: an empty session.
    retry_torn: ClassVar[bool] = False

    def new_session(self, unit: Unit) -> Session:
        return Session(agent=self.id, id=Path(unit.path).stem, path=unit.path)

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        raise NotImplementedError

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        return book.session

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        doc = read_document(unit.path, now=now)
        if self.retry_torn and not doc.ok and not doc.empty and not doc.settled:
            raise AgtailError(f"{unit.path} is being rewritten ({doc.error}); it will be read again")
        book = RecordBook(self.new_session(unit))
        if doc.ok:
            self.parse(doc.value, book, unit)
        elif not doc.empty:
            book.bad(1)
            book.session.truncated = doc.settled
        if book.session.usage.is_zero():
            book.session.usage = book.total_usage()
        session = self.finish(book, unit, settled=doc.settled)
        session.path = unit.path
        session.mtime = doc.mtime
        if unit.archived:
            session.archived = True
        return book.result()
