"""One unit read by its adapter and turned into the rows the writer inserts.

This is the CPU-heavy half of indexing (JSON decoding, the adapter's logic, text extraction,
JSON encoding), so it runs in worker processes while the single writer inserts: a job goes
in as msgpack bytes and prepared rows come back as msgpack bytes. The same ``prepare``
function runs in-process for small updates, where starting workers would cost more.
"""

from __future__ import annotations

import time
import traceback
from datetime import UTC, datetime

import msgspec

from agtaild.adapters.base import Unit
from agtaild.index.text import event_columns, wide_words
from agtaild.model import Event, Session, UsageRecord, project_of

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


class EventRow(msgspec.Struct, array_like=True):
    seq: int
    kind: str
    epoch: float | None
    text: str | None
    tool_input: str | None
    tool_result: str | None
    moved: bool
    data: bytes
    cjk: tuple[str | None, str | None] | None


class UsageRow(msgspec.Struct, array_like=True):
    key: str
    epoch: float | None
    day: str | None
    model: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int
    total: int
    long_ctx: bool


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
    usage: list[UsageRow] = msgspec.field(default_factory=list)
    seconds: float = 0.0


_json = msgspec.json.Encoder()
_job_decoder = msgspec.msgpack.Decoder(Job)
_prepared_decoder = msgspec.msgpack.Decoder(Prepared)
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
    # Tool results (most of the text) are left out of the trigram table: see agtaild.index.text.
    cjk_parts = (wide_words(text), wide_words(tool_input))
    # The columns hold these; the JSON keeps the key (null) so field order is unchanged.
    event.text = None
    if moved:
        event.result = None
    return EventRow(
        seq=event.seq,
        kind=event.kind,
        epoch=parse_time(event.ts),
        text=text,
        tool_input=tool_input,
        tool_result=tool_result,
        moved=moved,
        data=_json.encode(event),
        cjk=cjk_parts if any(cjk_parts) else None,
    )


def usage_row(record: UsageRecord) -> UsageRow:
    u = record.usage
    epoch = parse_time(record.ts)
    total = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens
    return UsageRow(
        key=record.key,
        epoch=epoch,
        day=local_day(epoch),
        model=record.model,
        input=u.input_tokens,
        output=u.output_tokens,
        cache_read=u.cache_read_tokens,
        cache_write=u.cache_write_tokens,
        reasoning=u.reasoning_tokens,
        total=total,
        long_ctx=u.input_tokens + u.cache_read_tokens + u.cache_write_tokens > LONG_CONTEXT_TOKENS,
    )


def prepare(job: Job) -> Prepared:
    """Read one unit and prepare its rows; never raises (errors are reported per unit)."""
    from agtaild.adapters import get_adapter

    started = time.perf_counter()
    path = job.unit.path
    now = time.time() if job.now is None else job.now
    try:
        adapter = get_adapter(job.agent)
        result = adapter.read(job.unit, job.state, now=now)
    except FileNotFoundError:
        return Prepared(path=path, missing=True)
    except Exception as exc:  # an adapter bug or an unreadable file must not stop indexing
        where = traceback.extract_tb(exc.__traceback__)[-1:]
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        return Prepared(path=path, error=f"{type(exc).__name__}: {exc}{at}")
    session = result.session
    return Prepared(
        path=path,
        # A read without a state is a read from scratch, whatever the adapter says.
        reset=result.reset or job.state is None,
        state=result.state,
        session=session_row(session, job.kind, job.collection, now),
        events=[event_row(e) for e in result.events],
        usage=[usage_row(r) for r in result.usage],
        seconds=time.perf_counter() - started,
    )


def encode_job(job: Job) -> bytes:
    return _msgpack.encode(job)


def run_job(raw: bytes) -> bytes:
    """The worker-process entry point: msgpack Job in, msgpack Prepared out."""
    return _msgpack.encode(prepare(_job_decoder.decode(raw)))


def decode_prepared(raw: bytes) -> Prepared:
    return _prepared_decoder.decode(raw)
