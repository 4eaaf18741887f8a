"""Replaying a Gemini CLI chat log (JSONL since 0.39, or a legacy JSON document) into events.

The JSONL log is not a plain append-only transcript. Its records are: a header
(``sessionId``, ``projectHash``, ``startTime``, …; written again on every ``--resume``),
message records keyed by ``id`` — **re-appended whole whenever the message changes** (last
occurrence wins, position is the first) —, ``{"$set": {...}}`` patches (``lastUpdated``,
``summary``, ``sessionId``, and ``messages``: a checkpoint that replaces the whole history),
and ``{"$rewindTo": id}``.

How agtail reads it (history is never lost):

* every message id gets a *slot* at its first appearance; its events are derived from its
  latest record. Slots are never deleted: a checkpoint that leaves messages out (``/compress``,
  or the reset a resume writes before its rebuild) does not delete them, and ``$rewindTo``
  only marks the rewound messages (``extra["rewound"]``).
* a checkpoint entry whose id is already known is ignored: Gemini's rebuilt history carries
  the resume time as every timestamp and no tokens, models or tool calls, so the first record
  keeps all of those. New ids in a checkpoint are appended as new messages — except the
  synthetic ``<id>_response`` tool-result copies whose calls already hold their result.
* a ``user`` record made only of function responses is a copy of results the tool calls
  already hold: it is merged (no event); a response whose call is unknown becomes a
  ``tool_result`` event. Decisions follow line order, so any split into reads agrees.

Incremental reads continue with a small state: per slot its seq range, model and usage;
per tool call whether it has a result. A new line that needs to change events of an earlier
read in a way the protocol cannot express as upserts of the same seqs (a non-last message
that grows or shrinks, a result for a call emitted without one, a rewind into earlier
reads) raises :class:`NeedsFullRead`, and the adapter re-reads the file from the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from agtaild.adapters.gemini.messages import (
    call_has_result,
    context_cwd,
    function_responses,
    is_tool_response_record,
    message_role,
    open_ending,
    plain_text,
    record_events,
    tool_calls,
    usage_of,
    usage_record,
)
from agtaild.adapters.kit.jsondoc import Category
from agtaild.adapters.kit.jsonl import MAX_BAD_LINE_NUMBERS
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.model import Event, Session, Usage, UsageRecord

TITLE_MAX = 200


class NeedsFullRead(Exception):
    """An incremental read met a change to earlier events: read the file from the start."""


class Slot(msgspec.Struct, array_like=True):
    """One message's place in the event sequence, and what the summary needs of it."""

    first_seq: int
    count: int
    role: str
    model: str | None = None
    usage: Usage | None = None


class ReplayState(msgspec.Struct):
    session: Session
    next_seq: int = 0
    line_no: int = 0
    slots: dict[str, Slot] = msgspec.field(default_factory=dict)
    #: The newest slot: the only one whose events may grow in a later read.
    last_slot: str | None = None
    #: Tool call id → whether the call already holds its result.
    calls: dict[str, bool] = msgspec.field(default_factory=dict)
    first_prompt_id: str | None = None
    open_end: bool = False
    headers: int = 0
    summary: str | None = None
    kind: str | None = None
    directories: list[str] = msgspec.field(default_factory=list)
    context_cwd: str | None = None
    project_hash: str | None = None
    rewinds: int = 0


@dataclass
class _Pending:
    key: str
    rec: Any
    line: int
    known: bool
    drop_calls: set[str] = field(default_factory=set)
    rewound: bool = False


class Replay:
    """One read's worth of replay over a :class:`ReplayState` (``full``: from scratch)."""

    def __init__(self, state: ReplayState, *, full: bool, source_key: str = "line") -> None:
        self.st = state
        self.full = full
        self.source_key = source_key
        self._batch: dict[str, _Pending] = {}
        #: call id → key of the batch record holding the call.
        self._batch_calls: dict[str, str] = {}
        self._events: list[Event] = []
        self._usage: list[UsageRecord] = []

    # -- accounting ---------------------------------------------------------------------
    def count(self, category: Category) -> None:
        acct = self.st.session.accounting
        acct.lines += 1
        setattr(acct, category, getattr(acct, category) + 1)

    def bad(self, number: int) -> None:
        s = self.st.session
        s.accounting.lines += 1
        s.accounting.bad += 1
        s.bad_lines += 1
        if len(s.bad_line_numbers) < MAX_BAD_LINE_NUMBERS:
            s.bad_line_numbers.append(number)

    # -- records --------------------------------------------------------------------------
    def feed(self, obj: Any, pos: int) -> None:
        """Replay one decoded record found at ``pos`` (line number or document index)."""
        self.count(self._feed(obj, pos))

    def _feed(self, obj: Any, pos: int) -> Category:
        if not isinstance(obj, dict):
            return self._unknown(obj, pos)
        if "$set" in obj:
            patch = obj["$set"]
            return self._patch(patch, pos) if isinstance(patch, dict) else self._unknown(obj, pos)
        if "$rewindTo" in obj:
            target = obj["$rewindTo"]
            self._rewind(target if isinstance(target, str) else None)
            return "metadata"
        if isinstance(obj.get("id"), str) and "type" in obj:
            return self._message(obj, pos, from_checkpoint=False)
        if "sessionId" in obj and "id" not in obj:
            return self.header(obj, pos)
        return self._unknown(obj, pos)

    def header(self, obj: dict[str, Any], pos: int) -> Category:
        """The metadata record (first line, again on every resume; a legacy document's top)."""
        st, s = self.st, self.st.session
        st.headers += 1
        if isinstance(obj.get("sessionId"), str) and obj["sessionId"] and st.headers == 1:
            s.id = obj["sessionId"]
        if isinstance(obj.get("projectHash"), str):
            st.project_hash = obj["projectHash"]
        if isinstance(obj.get("kind"), str):
            st.kind = obj["kind"]
        self._directories(obj.get("directories"))
        if isinstance(obj.get("summary"), str):
            st.summary = obj["summary"]
        for key in ("startTime", "lastUpdated"):
            s.started, s.ended = widen(s.started, s.ended, norm_iso(obj.get(key)))
        messages = obj.get("messages")
        if isinstance(messages, list) and self._checkpoint(messages, pos):
            return "events"
        return "metadata"

    def _directories(self, value: Any) -> None:
        if isinstance(value, list):
            self.st.directories = [d for d in value if isinstance(d, str)]

    def _patch(self, patch: dict[str, Any], pos: int) -> Category:
        st, s = self.st, self.st.session
        if isinstance(patch.get("sessionId"), str) and patch["sessionId"]:
            s.id = patch["sessionId"]
        if isinstance(patch.get("summary"), str):
            st.summary = patch["summary"]
        self._directories(patch.get("directories"))
        s.started, s.ended = widen(s.started, s.ended, norm_iso(patch.get("lastUpdated")))
        messages = patch.get("messages")
        if isinstance(messages, list) and self._checkpoint(messages, pos):
            return "events"
        return "metadata"

    def _checkpoint(self, messages: list[Any], pos: int) -> int:
        """Apply a ``$set.messages`` checkpoint; returns how many new messages it brought."""
        new = 0
        for rec in messages:
            if isinstance(rec, dict) and isinstance(rec.get("id"), str) and "type" in rec:
                known = rec["id"] in self._batch or rec["id"] in self.st.slots
                self._message(rec, pos, from_checkpoint=True)
                new += not known and rec["id"] in self._batch
        return new

    def _rewind(self, target: str | None) -> None:
        """``$rewindTo``: mark the target and every later message as rewound (never delete)."""
        self.st.rewinds += 1
        keys = [*self.st.slots, *(k for k in self._batch if k not in self.st.slots)]
        start = keys.index(target) if target in keys else 0
        for key in keys[start:]:
            pending = self._batch.get(key)
            if pending is None:
                if self.full:
                    continue
                raise NeedsFullRead(f"rewind to {target} reaches messages of an earlier read")
            pending.rewound = True

    def _unknown(self, obj: Any, pos: int) -> Category:
        key = f"#{pos}"
        while key in self._batch or key in self.st.slots:
            key += "+"
        self._batch[key] = _Pending(key=key, rec=obj, line=pos, known=False)
        return "events"

    def _message(self, rec: dict[str, Any], pos: int, *, from_checkpoint: bool) -> Category:
        key = rec["id"]
        in_batch = self._batch.get(key)
        if in_batch is not None or key in self.st.slots:
            if from_checkpoint:
                return "merged"  # the first record keeps its timestamps, tokens and tool calls
            if in_batch is not None:
                in_batch.rec, in_batch.line = rec, pos
            else:
                self._batch[key] = _Pending(key=key, rec=rec, line=pos, known=True)
            self._note_calls(key, rec)
            return "merged"
        pending = _Pending(key=key, rec=rec, line=pos, known=False)
        category: Category = "events"
        if is_tool_response_record(rec):
            pending.drop_calls = self._merge_responses(rec)
            responses = function_responses(rec.get("content"))
            if len(pending.drop_calls) == len(responses):
                category = "merged"
                if from_checkpoint:
                    return category  # a rebuilt copy of results already held: no message
        self._batch[key] = pending
        self._note_calls(key, rec)
        return category

    def _note_calls(self, key: str, rec: dict[str, Any]) -> None:
        for call in tool_calls(rec):
            if isinstance(call.get("id"), str):
                self.st.calls[call["id"]] = call_has_result(call)
                self._batch_calls[call["id"]] = key

    def _merge_responses(self, rec: dict[str, Any]) -> set[str]:
        """The call ids of ``rec``'s responses that their tool calls hold (or now hold)."""
        dropped: set[str] = set()
        for resp in function_responses(rec.get("content")):
            call_id = resp.get("id")
            if not isinstance(call_id, str) or call_id not in self.st.calls:
                continue
            if not self.st.calls[call_id]:
                holder = self._batch.get(self._batch_calls.get(call_id, ""))
                if holder is None:
                    raise NeedsFullRead(f"a result for tool call {call_id} of an earlier read")
                for call in tool_calls(holder.rec):
                    if call.get("id") == call_id:
                        call["result"] = [{"functionResponse": resp}]
                self.st.calls[call_id] = True
            dropped.add(call_id)
        return dropped

    # -- emission -----------------------------------------------------------------------
    def emit(self) -> tuple[list[Event], list[UsageRecord]]:
        """Turn the batch into events (known messages first: they own the earlier seqs)."""
        st = self.st
        pending = sorted(self._batch.values(), key=lambda p: not p.known)
        for p in pending:
            events = self._events_of(p)
            if p.known:
                slot = st.slots[p.key]
                grows_at_end = p.key == st.last_slot and len(events) > slot.count
                if len(events) != slot.count and not grows_at_end:
                    raise NeedsFullRead(f"message {p.key} of an earlier read changed its event count")
                if grows_at_end:
                    st.next_seq = slot.first_seq + len(events)
            else:
                slot = Slot(first_seq=st.next_seq, count=len(events), role="unknown")
                st.next_seq += len(events)
                st.slots[p.key] = slot
                st.last_slot = p.key
            slot.count = len(events)
            for i, ev in enumerate(events):
                ev.seq = slot.first_seq + i
            self._events.extend(events)
            self._summarise(p, slot)
        last = self._batch.get(st.last_slot or "")
        if last is not None:
            st.open_end = isinstance(last.rec, dict) and open_ending(last.rec)
        self._events.sort(key=lambda e: e.seq)
        return self._events, self._usage

    def _events_of(self, p: _Pending) -> list[Event]:
        if not isinstance(p.rec, dict) or not isinstance(p.rec.get("id"), str):
            events = [Event(seq=-1, kind="unknown", raw=p.rec, source={self.source_key: p.line})]
        else:
            events = record_events(p.rec, p.line, drop_calls=frozenset(p.drop_calls))
            if self.source_key != "line":
                for ev in events:
                    ev.source = {self.source_key: p.line}
        if p.rewound:
            for ev in events:
                ev.extra["rewound"] = True
        return events

    def _summarise(self, p: _Pending, slot: Slot) -> None:
        st, s = self.st, self.st.session
        rec = p.rec
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            return
        slot.role = message_role(rec)
        slot.model = rec.get("model") if isinstance(rec.get("model"), str) else None
        slot.usage = usage_of(rec.get("tokens"))
        record = usage_record(rec)
        if record is not None:
            self._usage.append(record)
        s.started, s.ended = widen(s.started, s.ended, norm_iso(rec.get("timestamp")))
        if slot.role == "prompt" and st.first_prompt_id in (None, p.key):
            st.first_prompt_id = p.key
            s.first_prompt = plain_text(rec.get("content"))
        elif slot.role == "context" and st.context_cwd is None:
            st.context_cwd = context_cwd(rec)

    # -- summary --------------------------------------------------------------------------
    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        models: list[str] = []
        total = Usage()
        messages = 0
        for slot in st.slots.values():
            if slot.role in ("prompt", "reply"):
                messages += 1
            if slot.model and slot.model not in models:
                models.append(slot.model)
            if slot.usage is not None:
                total.add(slot.usage)
        s.models = models
        s.usage = total.fix_total()
        s.messages = messages
        subagent = st.kind == "subagent"
        title_source = s.first_prompt if subagent or not st.summary else st.summary
        s.title = _title(title_source)
        s.ending = "interrupted" if settled and st.open_end else None
        # Fallbacks only: the adapter prefers the project registry's directory.
        s.cwd = (st.directories[0] if st.directories else None) or st.context_cwd
        extra: dict[str, Any] = {}
        if st.kind:
            extra["kind"] = st.kind
        if st.summary and subagent:
            extra["result"] = st.summary
        if st.headers > 1:
            extra["resumes"] = st.headers - 1
        if st.rewinds:
            extra["rewinds"] = st.rewinds
        if st.project_hash:
            extra["project_hash"] = st.project_hash
        s.extra = extra
        return s


def _title(text: str | None) -> str | None:
    if not text:
        return None
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:TITLE_MAX] or None
