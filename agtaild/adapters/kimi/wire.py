"""The line parser for Kimi CLI's ``wire.jsonl`` (the UI event log of one session or subagent).

First line ``{"type": "metadata", "protocol_version": …}``, then
``{"timestamp": <epoch seconds>, "message": {"type": <WireMessage>, "payload": {…}}}``.
The wire is read rather than ``context.jsonl`` because it has timestamps, per-step usage
(``StatusUpdate.token_usage``) and keeps what context.jsonl loses: partial text of an
interrupted step, tool calls of a killed step. ``context.jsonl`` is rewritten on revert and
is not read.

``SubagentEvent`` lines mirror a subagent's own wire (kept in ``subagents/<agent_id>/``,
read as a child session): they are skipped here so nothing is counted twice.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.model import Event, Session, Usage, UsageRecord

MAX_PENDING = 500
_SKIPPED = frozenset({"StepBegin", "TurnEnd", "CompactionBegin", "SubagentEvent", "ApprovalResponse"})
_SYSTEM = frozenset({"StepRetry", "Notification", "ApprovalRequest", "PlanModeChange", "McpStatus"})


class KimiState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    #: The last streamed content part (text/think), which a following part of the same kind extends.
    last_part: Event | None = None
    title_prompt: str | None = None
    outcome: str | None = None
    turn_open: bool = False
    #: The earliest and latest line timestamps (epoch seconds), formatted once in finish().
    first_epoch: float | None = None
    last_epoch: float | None = None


def nonempty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


#: The token fields of kimi-cli's ``token_usage`` (Kimi Code writes the same in camel case).
WIRE_USAGE_KEYS = ("input_other", "output", "input_cache_read", "input_cache_creation")


def kimi_usage(raw: Any, keys: tuple[str, str, str, str] = WIRE_USAGE_KEYS) -> Usage | None:
    """A token record → Usage: the first key is input without cache, then output, cache read
    and cache write."""
    if not isinstance(raw, dict):
        return None
    inp, out, read, write = keys
    usage = Usage(
        input_tokens=_int(raw.get(inp)),
        output_tokens=_int(raw.get(out)),
        cache_read_tokens=_int(raw.get(read)),
        cache_write_tokens=_int(raw.get(write)),
    ).fix_total()
    return None if usage.is_zero() else usage


def user_input_text(value: Any) -> str | None:
    """``TurnBegin.user_input``: a string, or content parts whose text is joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [str(p["text"]) for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


class KimiWireParser(LineParser[KimiState]):
    State = KimiState

    def new_state(self) -> KimiState:
        return KimiState(session=Session(agent=self.adapter.id, id=self.unit.hints.get("id", ""), path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if isinstance(obj, dict) and obj.get("type") == "metadata":
            if obj.get("protocol_version") is not None:
                self.st.session.extra["protocol_version"] = obj["protocol_version"]
            return "metadata"
        msg = obj.get("message") if isinstance(obj, dict) else None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            self._event(line, None, "unknown", raw=obj)
            return "events"
        kind: str = msg["type"]
        raw_payload = msg.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        st = self.st
        epoch = obj.get("timestamp")
        if isinstance(epoch, int | float) and not isinstance(epoch, bool) and epoch == epoch:
            if st.first_epoch is None or epoch < st.first_epoch:
                st.first_epoch = float(epoch)
            if st.last_epoch is None or epoch > st.last_epoch:
                st.last_epoch = float(epoch)
        if kind != "ContentPart":
            st.last_part = None
        if kind in _SKIPPED:
            if kind == "TurnEnd":
                st.turn_open = False
            return "skipped"
        ts = from_epoch(epoch, unit="s")
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, payload, line, ts)
        if kind in _SYSTEM:
            self._event(line, ts, "system", subtype=kind, extra=dict(payload))
            return "events"
        self._event(line, ts, "unknown", subtype=kind, raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, ts=ts, source={"line": line}, **fields))

    def _turn(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        st = self.st
        text = user_input_text(payload.get("user_input"))
        self._event(line, ts, "text", role="user", text=text)
        st.session.messages += 1
        st.outcome = None
        st.turn_open = True
        if st.title_prompt is None and text:
            st.title_prompt = text
            st.session.first_prompt = text
        return "events"

    def _part(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        st = self.st
        ptype = payload.get("type")
        if ptype == "text":
            kind, text = "text", nonempty_str(payload.get("text"))
        elif ptype == "think":
            kind, text = "thinking", nonempty_str(payload.get("think"))
        else:
            self._event(line, ts, "unknown", role="assistant", subtype="ContentPart", raw=payload)
            return "events"
        last = st.last_part
        if last is not None and last.kind == kind:
            last.text = (last.text or "") + (text or "")
            self.emit(last)
            return "merged"
        ev = self._event(line, ts, kind, role="assistant", text=text)
        if ptype == "think" and payload.get("encrypted"):
            ev.extra["encrypted"] = True
        st.last_part = ev
        st.session.messages += 1
        return "events"

    def _tool_call(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        fn = payload.get("function") if isinstance(payload.get("function"), dict) else {}
        call_id = nonempty_str(payload.get("id"))
        args = fn.get("arguments") if isinstance(fn, dict) else None
        ev = self._event(
            line, ts, "tool_use", role="assistant", tool=nonempty_str(fn.get("name")) if isinstance(fn, dict) else None,
            input=_decode_args(args), tool_use_id=call_id,
        )
        if call_id:
            self.st.pending[call_id] = ev
            if len(self.st.pending) > MAX_PENDING:
                del self.st.pending[next(iter(self.st.pending))]
        return "events"

    def _tool_call_part(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        """A streamed piece of the last call's arguments: appended to it."""
        if not self.st.pending:
            self._event(line, ts, "unknown", subtype="ToolCallPart", raw=payload)
            return "events"
        call = self.st.pending[next(reversed(self.st.pending))]
        piece = payload.get("arguments_part")
        if isinstance(piece, str):
            text = call.input if isinstance(call.input, str) else ""
            call.input = _decode_args(text + piece)
        self.emit(call)
        return "merged"

    def _tool_result(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        call_id = nonempty_str(payload.get("tool_call_id"))
        rv = payload.get("return_value") if isinstance(payload.get("return_value"), dict) else {}
        assert isinstance(rv, dict)
        output = rv.get("output")
        message = nonempty_str(rv.get("message"))
        result = output if isinstance(output, str) and output else message
        is_error = bool(rv.get("is_error"))
        extra = {k: rv[k] for k in ("message", "display", "extras") if rv.get(k)}
        call = self.st.pending.pop(call_id, None) if call_id else None
        if call is not None:
            call.result, call.is_error = result, is_error
            call.extra.update(extra)
            call.extra["result_ts"] = ts
            self.emit(call)
            return "merged"
        self._event(line, ts, "tool_result", role="tool", result=result, is_error=is_error, tool_use_id=call_id, extra=extra)
        return "events"

    def _status(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        usage = kimi_usage(payload.get("token_usage"))
        if usage is not None:
            key = nonempty_str(payload.get("message_id")) or f"line:{line}"
            self.add_usage(UsageRecord(key=key, ts=ts, model=None, usage=usage))
            self.st.session.usage.add(usage)
        if isinstance(payload.get("context_tokens"), int):
            self.st.session.extra["context_tokens"] = payload["context_tokens"]
        return "metadata"

    def _interrupted(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        self.st.outcome = "interrupted"
        self._event(line, ts, "system", subtype="StepInterrupted", text="step interrupted", extra=dict(payload))
        return "events"

    def _compaction(self, payload: dict[str, Any], line: int, ts: str | None) -> Category:
        self.st.session.compactions += 1
        self._event(line, ts, "summary", subtype="CompactionEnd", extra=dict(payload))
        return "events"

    def finish(self, *, settled: bool) -> Session:
        st = self.st
        s = st.session
        s.started = from_epoch(st.first_epoch, unit="s") if st.first_epoch is not None else None
        s.ended = from_epoch(st.last_epoch, unit="s") if st.last_epoch is not None else None
        s.first_prompt = st.title_prompt
        s.ending = st.outcome
        if s.ending is None and settled and (st.pending or st.turn_open):
            s.ending = "interrupted"  # killed: a call without its result, or a turn never ended
        return s


def _decode_args(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return msgspec.json.decode(value)
        except msgspec.DecodeError:
            return value
    return value


_HANDLERS: dict[str, Any] = {
    "TurnBegin": KimiWireParser._turn,
    "ContentPart": KimiWireParser._part,
    "ToolCall": KimiWireParser._tool_call,
    "ToolCallPart": KimiWireParser._tool_call_part,
    "ToolResult": KimiWireParser._tool_result,
    "StatusUpdate": KimiWireParser._status,
    "StepInterrupted": KimiWireParser._interrupted,
    "CompactionEnd": KimiWireParser._compaction,
}
