"""One unit read by its adapter and turned into the rows the writer inserts.

This is the CPU-heavy half of indexing (JSON decoding, the adapter's logic, text extraction,
JSON encoding), so it runs in worker processes while the single writer inserts: a batch of
jobs goes in as msgpack bytes and their prepared rows come back as msgpack bytes. The same
``prepare`` function runs in-process for small updates, where starting workers would cost more.
"""

from __future__ import annotations

import time
import traceback
from datetime import UTC, datetime
from typing import Any

import msgspec

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.edit_shapes import generic_edit
from agtaild.adapters.kit.tool_categories import category_of
from agtaild.fsnames import printable, to_text, unit_text
from agtaild.index import statepack
from agtaild.index.codec import encode_event
from agtaild.index.text import event_columns, wide_words
from agtaild.model import Event, Session, UsageRecord, project_of
from agtaild.provenance import records

#: A request whose input side (input + cache read + cache write) is above this is priced at
#: the long-context rate by models that have one.
LONG_CONTEXT_TOKENS = 200_000


class Job(msgspec.Struct, array_like=True):
    agent: str
    unit: Unit
    state: bytes | None
    kind: str  # native | imported | archive
    collection: str | None
    now: float | None = None


#: An ``events`` row as the writer binds it, in column order (plain tuples: the writer hands
#: them to executemany as they are decoded, without a Python loop over events):
#: (seq, kind, epoch, text, tool_input, tool_result, result_moved, data, tool, tool_failed,
#: tool_category); the last three only for tool calls (``stats --by tool`` and ``--by
#: tool-category`` group them in SQL).
EventRow = tuple[
    int, str, float | None, str | None, str | None, str | None, int, bytes, str | None, int | None, str | None
]
#: The same row as a worker process sends it: the three text columns as their UTF-8 bytes.
#: Decoding bytes in the writer process is a copy; decoding text also checks and converts
#: every character (measured on the 200 MB corpus, the writer's decoding of all results: 0.20 s
#: → 0.12 s of CPU); the writer stores them back as TEXT (``CAST``), the same bytes and type,
#: so the index is unchanged.
WireEventRow = tuple[
    int, str, float | None, bytes | None, bytes | None, bytes | None, int, bytes, str | None, int | None, str | None
]
#: A trigram row: (index of its event in ``Prepared.events``, text words, tool input words).
CjkRow = tuple[int, str | None, str | None]
#: A ``usage`` row: (key, epoch, day, model, input, output, cache_read, cache_write,
#: reasoning, total, long_ctx).
UsageRow = tuple[str, float | None, str, str | None, int, int, int, int, int, int, int]


class SessionRow(msgspec.Struct, array_like=True):
    sid: str
    cwd: str | None
    project: str | None
    started: float | None
    activity: float
    programmatic: bool
    archived: bool
    title: str | None
    data: bytes


class Prepared(msgspec.Struct):
    path: str
    missing: bool = False
    error: str | None = None
    reset: bool = True
    state: bytes | None = None
    session: SessionRow | None = None
    events: list[EventRow] = msgspec.field(default_factory=list)
    #: ``events`` as a worker sends them (see WireEventRow); one of the two is empty.
    wire_events: list[WireEventRow] = msgspec.field(default_factory=list)
    cjk: list[CjkRow] = msgspec.field(default_factory=list)
    usage: list[UsageRow] = msgspec.field(default_factory=list)
    #: ``edits`` rows (agtaild.provenance.records.EditRow): the file changes of these events.
    edits: list[records.EditRow] = msgspec.field(default_factory=list)
    #: Stored events to re-mark: seq → ``extra`` keys (see agtaild.adapters.base, ``marks``).
    marks: dict[int, dict[str, Any]] = msgspec.field(default_factory=dict)
    chars: int = 0  # characters of text to index (the writer batches full-text inserts by it)
    seconds: float = 0.0

    @property
    def rows(self) -> list[EventRow] | list[WireEventRow]:
        """The ``events`` rows, whichever way they came."""
        return self.events or self.wire_events


_json = msgspec.json.Encoder()
_batch_decoder = msgspec.msgpack.Decoder(list[Prepared])
_msgpack = msgspec.msgpack.Encoder()


def parse_time(value: str | None) -> float | None:
    """ISO 8601 (with or without zone; naive = UTC, as agents write UTC) → epoch seconds."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def local_day(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    try:
        return time.strftime("%Y-%m-%d", time.localtime(epoch))
    except (OverflowError, OSError, ValueError):
        return None


def session_row(session: Session, kind: str, collection: str | None, fallback_time: float) -> SessionRow:
    if kind == "imported":
        session.imported = True
        session.collection = collection
        session.resumable = False
    elif kind == "archive":
        session.archived = True
        session.resumable = False
    if session.project is None:
        session.project = project_of(session.cwd)
    started = parse_time(session.started)
    activity = parse_time(session.ended) or session.mtime or started or fallback_time
    return SessionRow(
        sid=session.id,
        cwd=session.cwd,
        project=session.project,
        started=started,
        activity=activity,
        programmatic=session.programmatic,
        archived=session.archived,
        title=session.title,
        data=_json.encode(session),
    )


def event_row(event: Event) -> EventRow:
    text, tool_input, tool_result, moved = event_columns(event)
    # The columns hold these; the JSON keeps the key (null) so field order is unchanged.
    event.text = None
    if moved:
        event.result = None
    call = event.kind == "tool_use"
    return (
        event.seq,
        event.kind,
        parse_time(event.ts),
        text,
        tool_input,
        tool_result,
        int(moved),
        encode_event(event),
        (str(event.tool) if event.tool else None) if call else None,
        int(event.is_error is True) if call else None,
        event.extra.get("tool_category") if call else None,
    )


def cjk_rows(events: list[EventRow]) -> list[CjkRow]:
    """Words in other scripts of the text and tool input (tool results are left out of the
    trigram table: see agtaild.index.text)."""
    rows: list[CjkRow] = []
    for i, e in enumerate(events):
        text, tool_input = e[3], e[4]
        if (text and not text.isascii()) or (tool_input and not tool_input.isascii()):
            words = (wide_words(text), wide_words(tool_input))
            if words[0] or words[1]:
                rows.append((i, *words))
    return rows


def session_time(session: Session) -> float | None:
    """When a session's usage happened if its records do not say (OpenHands, Continue and Aider
    record tokens per session or per run, not per turn): the session's start, else its end."""
    return parse_time(session.started) or parse_time(session.ended)


def usage_row(record: UsageRecord, fallback: float | None = None) -> UsageRow:
    """The row of one usage record; dated by ``fallback`` (the session's time) when the record
    has no time of its own, so date filters find it. Without either it has no day ('')."""
    u = record.usage
    epoch = parse_time(record.ts)
    if epoch is None:
        epoch = fallback
    total = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens
    long_ctx = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens > LONG_CONTEXT_TOKENS
    return (
        record.key,
        epoch,
        local_day(epoch) or "",
        record.model,
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
        total,
        int(long_ctx),
    )


def prepare(job: Job) -> Prepared:
    """Read one unit and prepare its rows; never raises (errors are reported per unit).

    ``job.unit`` holds real OS paths; the Prepared rows hold their text form (fsnames)."""
    from agtaild.adapters import get_adapter

    started = time.perf_counter()
    path = to_text(job.unit.path)
    now = time.time() if job.now is None else job.now
    try:
        adapter = get_adapter(job.agent)
        result = adapter.read(job.unit, statepack.unpack(job.state), now=now)
        session = result.session
        session.path = to_text(session.path)
        session.id = printable(session.id)  # an id taken from an undecodable file name
        for e in result.events:
            if e.kind != "tool_use":
                continue
            # The generic edit path: tool calls whose adapter gave no extra["edit"].
            if "edit" not in e.extra and e.input is not None:
                edit = generic_edit(e.input)
                if edit is not None:
                    e.extra["edit"] = edit
            # Every call's kind beside its own name, from the one mapping (kit/tool_categories).
            e.extra["tool_category"] = category_of(e.tool, e.input, has_edit="edit" in e.extra)
        # Before event_row: it moves the texts out of the events.
        edits = records.rows(result.events, session.cwd, parse_time)
        events = [event_row(e) for e in result.events]
        return Prepared(
            path=path,
            # A read without a state is a read from scratch, whatever the adapter says.
            reset=result.reset or job.state is None,
            state=statepack.pack(result.state),
            session=session_row(session, job.kind, job.collection, now),
            events=events,
            cjk=cjk_rows(events),
            usage=[usage_row(r, session_time(session)) for r in result.usage],
            edits=edits,
            marks=result.marks,
            chars=sum(len(e[3] or "") + len(e[4] or "") + len(e[5] or "") for e in events),
            seconds=time.perf_counter() - started,
        )
    except FileNotFoundError:
        return Prepared(path=path, missing=True)
    except Exception as exc:  # an adapter bug or an unreadable file must not stop indexing
        where = traceback.extract_tb(exc.__traceback__)[-1:]
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        return Prepared(path=path, error=to_text(f"{type(exc).__name__}: {exc}{at}"))


def encode_jobs(jobs: list[Job]) -> bytes:
    """A batch of jobs for a worker process, as one message (their paths in text form:
    msgpack takes no lone surrogates). Small units travel in batches because each round trip
    through the process pool has a fixed cost in the writer process (its queue threads,
    pickling, the pipe): measured, 1335 units one by one cost the writer ~0.2 s more CPU than
    the same bytes in ~150 messages."""
    return _msgpack.encode([msgspec.structs.replace(job, unit=unit_text(job.unit)) for job in jobs])


def encoded(prep: Prepared) -> msgspec.Raw:
    """One unit's result, encoded on its own: a result that cannot be sent (text msgpack
    cannot hold, e.g. a lone surrogate from an adapter) becomes that unit's error, and the
    other units of its batch are unaffected."""
    try:
        return msgspec.Raw(_msgpack.encode(for_wire(prep)))
    except Exception as exc:
        error = to_text(f"the result could not be sent: {type(exc).__name__}: {exc}")
        return msgspec.Raw(_msgpack.encode(Prepared(path=prep.path, error=error)))


def for_wire(prep: Prepared) -> Prepared:
    """``prep`` with its event rows' text columns as UTF-8 bytes (WireEventRow)."""
    if prep.events:
        prep.wire_events = [
            (
                seq,
                kind,
                epoch,
                None if text is None else text.encode(),
                None if tool_input is None else tool_input.encode(),
                None if tool_result is None else tool_result.encode(),
                moved,
                data,
                tool,
                failed,
                category,
            )
            for seq, kind, epoch, text, tool_input, tool_result, moved, data, tool, failed, category in prep.events
        ]
        prep.events = []
    return prep


def decode_prepared_batch(raw: bytes) -> list[Prepared]:
    return _batch_decoder.decode(raw)
