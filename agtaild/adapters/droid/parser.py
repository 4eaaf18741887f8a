"""The line parser for Factory Droid's session JSONL (``sessions/<cwd-slug>/<id>.jsonl``).

Records (0.225.2 real files; older peer fixtures agree): ``session_start`` (id, title, cwd,
version; a fork adds ``parent`` and ``forkedAtMessageId``), ``message`` (``message.role`` and
Anthropic-style ``content`` blocks: ``text``, ``thinking``, ``tool_use``; ``tool_result``
blocks arrive in the next ``user`` message, as in Claude Code), ``agent_turn_outcome``
(``reason``: ``completed`` or why the turn stopped) and ``todo_state``.

Each prompt is preceded by a synthetic user message with id ``context-<prompt id>`` holding
``<system-reminder>`` blocks: it becomes one ``system`` event, not user text. An API error is
written as a *user* message ``BYOK Error: …`` followed by ``agent_turn_outcome`` with
``reason: model_request_rejected``: a ``system`` event with ``is_error``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.model import Event, ParentRef, Session, project_of

MAX_PENDING = 500
#: agent_turn_outcome reasons that end a session some other way than "completed".
_INTERRUPTED = ("cancel", "interrupt", "abort", "stop")
_LIMIT = ("limit", "max", "length", "budget")


class DroidState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    title: str | None = None
    outcome: str | None = None
    #: A prompt without its agent_turn_outcome yet (format 2 writes one per turn).
    turn_open: bool = False
    writes_outcomes: bool = False


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def block_text(content: Any) -> str | None:
    """A tool result's or message's content: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(b["text"]) for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def outcome_of(reason: str | None) -> str | None:
    """An ``agent_turn_outcome`` reason → Session.ending (None for a completed turn)."""
    if not reason or reason == "completed":
        return None
    low = reason.lower()
    if any(w in low for w in _INTERRUPTED):
        return "interrupted"
    if any(w in low for w in _LIMIT):
        return "limit"
    return "error"


class DroidParser(LineParser[DroidState]):
    State = DroidState

    def new_state(self) -> DroidState:
        return DroidState(session=Session(agent=self.adapter.id, id=self.unit.hints.get("id", ""), path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self.emit(Event(seq=-1, kind="unknown", source={"line": line}, raw=obj))
            return "events"
        kind = obj.get("type")
        ts = norm_iso(obj.get("timestamp"))
        s = self.st.session
        s.started, s.ended = widen(s.started, s.ended, ts)
        if kind == "session_start":
            return self._start(obj)
        if kind == "message" and isinstance(obj.get("message"), dict):
            return self._message(obj, obj["message"], line, ts)
        if kind == "agent_turn_outcome":
            return self._outcome(obj, line, ts)
        if kind == "todo_state":
            self._event(obj, line, ts, "system", subtype="todo_state", extra={k: v for k, v in obj.items() if k != "type"})
            return "events"
        self._event(obj, line, ts, "unknown", raw=obj)
        return "events"

    def _event(self, obj: dict[str, Any], line: int, ts: str | None, kind: str, **fields: Any) -> Event:
        return self.emit(
            Event(
                seq=-1,
                kind=kind,
                ts=ts,
                uuid=_str(obj.get("id")),
                parent_uuid=_str(obj.get("parentId")),
                source={"line": line},
                **fields,
            )
        )

    def _start(self, obj: dict[str, Any]) -> Category:
        s = self.st.session
        s.id = _str(obj.get("id")) or s.id
        self.st.title = _str(obj.get("sessionTitle")) or _str(obj.get("title")) or self.st.title
        cwd = _str(obj.get("cwd"))
        if cwd:
            s.cwd, s.project = cwd, project_of(cwd)
        version = obj.get("version")
        if isinstance(version, str | int) and not isinstance(version, bool):
            s.extra["format_version"] = version
            self.st.writes_outcomes = isinstance(version, int) and version >= 2
        for key in ("owner", "hostId", "isSessionTitleManuallySet"):
            if obj.get(key) is not None:
                s.extra[key] = obj[key]
        parent = _str(obj.get("parent"))
        if parent:
            s.forked_from = ParentRef(agent=self.adapter.id, id=parent)
            if _str(obj.get("forkedAtMessageId")):
                s.extra["forked_at_message_id"] = obj["forkedAtMessageId"]
        return "metadata"

    def _message(self, obj: dict[str, Any], msg: dict[str, Any], line: int, ts: str | None) -> Category:
        role = _str(msg.get("role"))
        content = msg.get("content")
        mid = _str(obj.get("id")) or ""
        if role == "user" and mid.startswith("context-"):
            self._event(obj, line, ts, "system", role="user", subtype="context", text=block_text(content))
            return "events"
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self._event(obj, line, ts, "unknown", role=role, raw=obj)
            return "events"
        model = _str(msg.get("modelId"))
        if model and role == "assistant" and model not in self.st.session.models:
            self.st.session.models.append(model)
        emitted = merged = 0
        for block in content:
            got = self._block(obj, msg, block, role, model, line, ts)
            if got == "merged":
                merged += 1
            elif got == "events":
                emitted += 1
        if role in ("user", "assistant") and emitted:
            self.st.session.messages += 1
        if emitted:
            return "events"
        return "merged" if merged else "skipped"

    def _block(
        self, obj: dict[str, Any], msg: dict[str, Any], block: Any, role: str | None, model: str | None,
        line: int, ts: str | None,
    ) -> str | None:
        if not isinstance(block, dict):
            self._event(obj, line, ts, "unknown", role=role, raw=block)
            return "events"
        btype = block.get("type")
        st = self.st
        if btype == "text":
            text = _str(block.get("text"))
            if text is None:
                return None
            if role == "user" and text.startswith("BYOK Error:"):
                st.outcome = "error"
                self._event(obj, line, ts, "system", role="user", subtype="api_error", text=text, is_error=True)
                return "events"
            self._event(obj, line, ts, "text", role=role, text=text, model=model)
            if role == "user":
                st.outcome = None
                st.turn_open = True
                if st.session.first_prompt is None:
                    st.session.first_prompt = text
            return "events"
        if btype == "thinking":
            extra = {k: block[k] for k in ("durationMs", "signatureProvider") if block.get(k) is not None}
            self._event(obj, line, ts, "thinking", role=role, text=_str(block.get("thinking")), model=model, extra=extra)
            return "events"
        if btype == "tool_use":
            call_id = _str(block.get("id"))
            ev = self._event(
                obj, line, ts, "tool_use", role=role, tool=_str(block.get("name")), input=block.get("input"),
                tool_use_id=call_id, model=model,
            )
            if call_id:
                st.pending[call_id] = ev
                if len(st.pending) > MAX_PENDING:
                    del st.pending[next(iter(st.pending))]
            return "events"
        if btype == "tool_result":
            call_id = _str(block.get("tool_use_id"))
            text = block_text(block.get("content"))
            flag = block.get("is_error")
            is_error = bool(flag) if isinstance(flag, bool) else bool(text and text.startswith("Error:"))
            call = st.pending.pop(call_id, None) if call_id else None
            if call is not None:
                call.result, call.is_error = text, is_error
                call.extra["result_uuid"] = _str(obj.get("id"))
                call.extra["result_ts"] = ts
                self.emit(call)
                return "merged"
            self._event(obj, line, ts, "tool_result", role="tool", result=text, is_error=is_error, tool_use_id=call_id)
            return "events"
        self._event(obj, line, ts, "unknown", role=role, raw=block)
        return "events"

    def _outcome(self, obj: dict[str, Any], line: int, ts: str | None) -> Category:
        reason = _str(obj.get("reason"))
        ending = outcome_of(reason)
        self.st.turn_open = False
        self.st.writes_outcomes = True
        if ending is None:
            self.st.outcome = None
            return "metadata"
        self.st.outcome = ending
        self._event(
            obj, line, ts, "system", subtype="agent_turn_outcome", text=reason, is_error=ending == "error",
            extra={k: v for k, v in obj.items() if k != "type"},
        )
        return "events"

    def finish(self, *, settled: bool) -> Session:
        st = self.st
        s = st.session
        s.title = st.title or _first_line(s.first_prompt)
        s.ending = st.outcome
        if s.ending is None and settled and (st.pending or (st.turn_open and st.writes_outcomes)):
            # killed while a tool ran (a call without its result), or stopped mid-turn: a
            # format-2 file closes every finished turn with an agent_turn_outcome
            s.ending = "interrupted"
        return s


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return None
