"""The Codex parser's building blocks: emitting events once, pairing tool calls, counting usage.

Record handlers (codex_items, codex_events, codex_parser) only decide *what* a line means;
this base class keeps the bookkeeping that makes incremental reads equal one-shot reads.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.codex.state import DONE_CALLS_KEPT, PENDING_CALLS_KEPT, RECENT_TEXT_KEPT, CodexState
from agtaild.adapters.codex.text import (
    dedupe_key,
    epoch_of,
    msgpack_safe,
    thread_id_from_filename,
)
from agtaild.adapters.codex.usage import counted_usage, to_usage
from agtaild.adapters.kit.jsonl import Category, LineParser
from agtaild.model import Event, Session, UsageRecord

#: Codex writes a fork's copied items in one batch; lines this close to the first one are copies.
COPY_BATCH_SECONDS = 1.0


class Line:
    """Where one record sits, and whether it belongs to a copied (fork/spawn) prefix.

    ``by_batch`` says the only evidence is the fork's copy batch (a timing guess), which a
    known parent total overrides for usage.
    """

    __slots__ = ("by_batch", "copied", "no", "ts")

    def __init__(self, no: int, ts: str | None, copied: bool = False, by_batch: bool = False) -> None:
        self.no = no
        self.ts = ts
        self.copied = copied
        self.by_batch = by_batch


def _earlier(ts: str, other: str) -> bool:
    """ISO timestamps of one shape compare as strings; mixed precision needs parsing."""
    if len(ts) == len(other):
        return ts < other
    a, b = epoch_of(ts), epoch_of(other)
    return a is not None and b is not None and a < b


class CodexParserBase(LineParser[CodexState]):
    State = CodexState

    def new_state(self) -> CodexState:
        sid = thread_id_from_filename(self.unit.path)
        return CodexState(session=Session(agent="codex", id=sid, resumable=True))

    # -- events -------------------------------------------------------------------------
    def new_event(self, line: Line, kind: str, **fields: Any) -> Event:
        event = Event(seq=-1, kind=kind, ts=line.ts, source={"line": line.no}, **fields)
        if line.copied:
            event.extra["copied"] = True
        return event

    def emit_text(
        self,
        line: Line,
        role: str,
        text: str,
        *,
        kind: str = "text",
        uuid: str | None = None,
        subtype: str | None = None,
        extra: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> Category:
        """Emit a user/assistant text (or thinking) once; its second copy counts as merged."""
        st = self.st
        if key is None:
            key = dedupe_key(role if kind == "text" else kind, text)
        if key in st.recent_text:
            del st.recent_text[key]
            return "merged"
        event = self.new_event(line, kind, role=role, text=text, uuid=uuid, subtype=subtype)
        if role == "assistant":
            event.model = st.model
        if extra:
            event.extra.update(extra)
        self.emit(event)
        st.in_compaction = False
        st.recent_text[key] = event.seq
        while len(st.recent_text) > RECENT_TEXT_KEPT:
            del st.recent_text[next(iter(st.recent_text))]
        if kind == "text" and role in ("user", "assistant"):
            st.session.messages += 1
            if role == "user":
                self.note_prompt(line, text)
        return "events"

    def emit_system(self, line: Line, text: str | None, subtype: str, **fields: Any) -> Category:
        self.emit(self.new_event(line, "system", text=text, subtype=subtype, **fields))
        return "events"

    def emit_unknown(self, line: Line, raw: Any) -> Category:
        self.emit(self.new_event(line, "unknown", raw=raw))
        return "events"

    def note_prompt(self, line: Line, text: str) -> None:
        """Remember the first prompt (callers already routed injected context elsewhere)."""
        st = self.st
        if not text.strip():
            return
        if line.copied:
            if st.first_prompt_copied is None:
                st.first_prompt_copied = text
        elif st.session.first_prompt is None:
            st.session.first_prompt = text

    def start_turn(self) -> None:
        """Both copies of a text are written inside one turn: older keys can go."""
        self.st.recent_text.clear()

    # -- tool calls ---------------------------------------------------------------------
    def open_call(self, line: Line, call_id: str | None, event: Event) -> Category:
        """Emit a tool_use; outputs and companions with the same call_id merge into it later."""
        st = self.st
        event.model = st.model
        event.tool_use_id = call_id
        event.input = msgpack_safe(event.input)
        event.extra = msgpack_safe(event.extra)
        if call_id and call_id in st.done_calls:  # written again (copied prefix): keep the first
            return "merged"
        if call_id and call_id in st.calls:
            return "merged"
        self.emit(event)
        st.in_compaction = False
        if call_id:
            st.calls[call_id] = event
            while len(st.calls) > PENDING_CALLS_KEPT:  # calls aborted before their output
                del st.calls[next(iter(st.calls))]
        return "events"

    def find_call(self, call_id: str | None) -> Event | None:
        if not call_id:
            return None
        return self.st.calls.get(call_id) or self.st.done_calls.get(call_id)

    def close_call(self, call_id: str, event: Event) -> None:
        """The call got its output: keep it a little for late companions, then forget it."""
        st = self.st
        st.calls.pop(call_id, None)
        st.done_calls[call_id] = event
        while len(st.done_calls) > DONE_CALLS_KEPT:
            del st.done_calls[next(iter(st.done_calls))]

    def update_call(self, event: Event) -> None:
        """Re-emit a tool_use under its seq (an upsert) after merging an output or companion."""
        event.result = msgpack_safe(event.result)
        event.extra = msgpack_safe(event.extra)
        self.emit(event)

    # -- copied prefixes ----------------------------------------------------------------
    def copied_line(self, no: int, ts: str | None, writer_thread: str | None) -> Line:
        """A Line, marked when it belongs to items copied from another thread (fork or spawn).

        Three signals: the writer's thread id (0.17x records carry it), a timestamp older
        than this file's own session_meta (copies that kept their time), and, in a fork,
        the batch Codex writes right after the session_meta (new timestamps, all within a
        moment of each other).
        """
        st = self.st
        if writer_thread and st.thread_id and writer_thread != st.thread_id:
            return Line(no, ts, True)
        if ts and st.meta_ts and _earlier(ts, st.meta_ts):
            return Line(no, ts, True)
        if not st.copy_open:
            return Line(no, ts)
        when = epoch_of(ts)
        if st.copy_batch_start is None and when is not None:
            st.copy_batch_start = when
        if when is None or (st.copy_batch_start is not None and when - st.copy_batch_start <= COPY_BATCH_SECONDS):
            return Line(no, ts, True, by_batch=True)
        st.copy_open = False
        return Line(no, ts)

    # -- usage --------------------------------------------------------------------------
    def count_usage(
        self,
        line: Line,
        total: list[int] | None,
        last: list[int] | None,
        model: str | None,
    ) -> Category:
        st = self.st
        copied = line.copied
        if st.fork_baseline is not None:
            # The parent's total at fork time is known: exactly the rows up to it are copies
            # (this replaces the timing guess; the other signals still hold).
            copied = copied and not line.by_batch
            if not st.baseline_passed:
                if total is not None and total[-1] <= st.fork_baseline:
                    copied = True
                else:
                    st.baseline_passed = True
        counts = counted_usage(total, last, st.prev_total, copied=copied)
        if total is not None:
            st.prev_total = total
        if counts is None:
            return "metadata"
        usage = to_usage(counts)
        model = model or st.model
        st.session.usage.add(usage)
        if model and model not in st.session.models:
            st.session.models.append(model)
        self.add_usage(UsageRecord(key=f"{st.session.id}:{line.no}", ts=line.ts, model=model, usage=usage))
        return "metadata"
