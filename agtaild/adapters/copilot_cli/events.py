"""The event-log parser for GitHub Copilot CLI's ``events.jsonl``.

Every line is ``{type, data, id, timestamp, parentId[, agentId]}`` (the SDK's session events;
ephemeral ones never reach the file). The parser maps them one by one:

* ``user.message`` / ``assistant.message`` (reasoningText → thinking, content → text,
  toolRequests → tool_use) / ``assistant.reasoning``;
* ``tool.execution_start`` and ``tool.execution_complete`` are merged into the tool_use of
  the same ``toolCallId`` (a call the file never announced becomes its own event);
* a sub-agent runs inline: its events carry ``agentId`` and ``data.parentToolCallId`` and are
  marked ``sidechain`` with the spawning call in ``extra``;
* usage: 1.0.9x writes one ``session.usage_record`` per API call (inputTokens include cached
  tokens, which are subtracted); older builds only write ``session.shutdown.modelMetrics``.
  Those totals are cumulative over the session in the real 1.0.102 files (each resumed run
  repeats the earlier calls), so they are stored as records keyed per model that every later
  shutdown replaces; a total that goes *down* starts a new segment (older builds that
  counted per run). Shutdown totals are ignored once a file has per-call records.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.copilot_cli.values import (
    arguments,
    copilot_usage,
    payload,
    shutdown_metrics,
    title_of,
    tool_outcome,
)
from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.model import Event, HookInfo, Session, Usage, UsageRecord, project_of

#: Tool calls waiting for their completion that the state keeps (the oldest are dropped).
MAX_PENDING = 500
#: Record types that carry nothing worth an event (their content is elsewhere).
_SKIPPED = frozenset(
    {"assistant.turn_end", "session.usage_checkpoint", "session.auto_mode_resolved", "subagent.configured"}
)
_SYSTEM = frozenset(
    {
        "session.info",
        "session.warning",
        "session.truncation",
        "session.compaction_start",
        "session.plan_changed",
        "session.workspace_file_changed",
        "system.notification",
        "skill.invoked",
        "subagent.selected",
    }
)


class CopilotState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    title_prompt: str | None = None
    #: The usage of an API call, until the assistant.message it belongs to arrives.
    last_usage: Usage | None = None
    saw_usage_record: bool = False
    shutdown_segment: int = 0
    shutdown_requests: dict[str, int] = msgspec.field(default_factory=dict)
    #: The shutdown-based usage records so far (key → usage), to sum into the session.
    shutdown_usage: dict[str, Usage] = msgspec.field(default_factory=dict)
    #: sub-agent instance id (``agentId``) → the ``task`` call that spawned it.
    agents: dict[str, str] = msgspec.field(default_factory=dict)
    outcome: str | None = None
    shutdowns: int = 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class CopilotParser(LineParser[CopilotState]):
    State = CopilotState

    def new_state(self) -> CopilotState:
        return CopilotState(session=Session(agent=self.adapter.id, id=self.unit.hints.get("id", ""), path=self.unit.path))

    # -- dispatch -----------------------------------------------------------------------
    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            self.emit(Event(seq=-1, kind="unknown", source={"line": line}, raw=obj))
            return "events"
        kind: str = obj["type"]
        raw_data = obj.get("data")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        ts = norm_iso(obj.get("timestamp"))
        s = self.st.session
        s.started, s.ended = widen(s.started, s.ended, ts)
        ev = _Base(line, ts, obj, data)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, ev)
        if kind in _SKIPPED:
            return "skipped"
        if kind in _SYSTEM or kind.startswith(("session.", "subagent.")):
            return self._system(ev, kind)
        self._event(ev, "unknown", raw=obj)
        return "events"

    def _event(self, b: _Base, kind: str, **fields: Any) -> Event:
        extra = fields.pop("extra", {})
        agent_id = _str(b.obj.get("agentId"))
        parent_call = _str(b.data.get("parentToolCallId")) or (self.st.agents.get(agent_id) if agent_id else None)
        if agent_id or parent_call:
            extra.setdefault("agent_id", agent_id)
            extra.setdefault("parent_tool_use_id", parent_call)
        return self.emit(
            Event(
                seq=-1,
                kind=kind,
                ts=b.ts,
                uuid=_str(b.obj.get("id")),
                parent_uuid=_str(b.obj.get("parentId")),
                source={"line": b.line},
                sidechain=bool(agent_id or parent_call),
                extra=extra,
                **fields,
            )
        )

    # -- session records ------------------------------------------------------------------
    def _context(self, data: dict[str, Any]) -> None:
        s = self.st.session
        ctx = data.get("context")
        if isinstance(ctx, dict):
            cwd = _str(ctx.get("cwd"))
            if cwd:
                s.cwd = cwd
                s.project = project_of(cwd)
            s.git_branch = _str(ctx.get("branch")) or s.git_branch
            if _str(ctx.get("repository")):
                s.extra["repository"] = ctx["repository"]
        self._model(_str(data.get("selectedModel")))

    def _model(self, model: str | None) -> None:
        if model and model not in self.st.session.models:
            self.st.session.models.append(model)

    def _start(self, b: _Base) -> Category:
        s = self.st.session
        s.id = _str(b.data.get("sessionId")) or s.id
        s.version = _str(b.data.get("copilotVersion")) or s.version
        start = norm_iso(b.data.get("startTime"))
        s.started, s.ended = widen(s.started, s.ended, start)
        producer = _str(b.data.get("producer"))
        if producer:
            s.extra["producer"] = producer
        self._context(b.data)
        return "metadata"

    def _resume(self, b: _Base) -> Category:
        self._context(b.data)
        self.st.outcome = None
        self._event(b, "system", subtype="session.resume", text="session resumed", extra=payload(b.data))
        return "events"

    def _model_change(self, b: _Base) -> Category:
        model = _str(b.data.get("newModel"))
        if not (b.obj.get("agentId") or b.data.get("parentToolCallId")):
            self._model(model)
        self._event(b, "system", subtype="session.model_change", model=model, text=f"model: {model}", extra=payload(b.data))
        return "events"

    def _error(self, b: _Base) -> Category:
        self.st.outcome = "error"
        self._event(
            b,
            "system",
            subtype="session.error",
            text=_str(b.data.get("message")),
            is_error=True,
            extra=payload(b.data, drop=("message",)),
        )
        return "events"

    def _abort(self, b: _Base) -> Category:
        self.st.outcome = "interrupted"
        self._event(b, "system", subtype="abort", text=_str(b.data.get("reason")) or "aborted", extra=payload(b.data))
        return "events"

    def _compaction(self, b: _Base) -> Category:
        if b.data.get("success") is not False:
            self.st.session.compactions += 1
        self._event(
            b,
            "summary",
            subtype="session.compaction_complete",
            text=_str(b.data.get("summaryContent")),
            extra=payload(b.data, drop=("summaryContent",)),
        )
        return "events"

    def _system(self, b: _Base, kind: str) -> Category:
        text = _str(b.data.get("message")) or _str(b.data.get("content"))
        self._event(b, "system", subtype=kind, text=text, extra=payload(b.data, drop=("message", "content")))
        return "events"

    def _system_message(self, b: _Base) -> Category:
        self._event(b, "system", role="system", subtype="system_prompt", text=_str(b.data.get("content")))
        return "events"

    def _hook(self, b: _Base) -> Category:
        raw_input = b.data.get("input")
        hinput: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        hook = HookInfo(event=_str(b.data.get("hookType")), tool=_str(hinput.get("toolName")))
        kind = str(b.obj.get("type"))
        self._event(b, "hook", subtype=kind, hook=hook, extra=payload(b.data))
        return "events"

    def _shutdown(self, b: _Base) -> Category:
        st = self.st
        st.shutdowns += 1
        st.session.extra["shutdown_type"] = b.data.get("shutdownType")
        if st.saw_usage_record:
            return "metadata"
        metrics = shutdown_metrics(b.data)
        if any(count < st.shutdown_requests.get(model, 0) for model, (count, _) in metrics.items()):
            st.shutdown_segment += 1
        for model, (count, usage) in metrics.items():
            st.shutdown_requests[model] = count
            key = f"shutdown:{st.shutdown_segment}:{model}"
            self.add_usage(UsageRecord(key=key, ts=b.ts, model=model, usage=usage))
            st.shutdown_usage[key] = usage
            self._model(model)
        return "metadata"

    def _usage_record(self, b: _Base) -> Category:
        raw = b.data.get("usage")
        usage = copilot_usage(raw)
        self.st.saw_usage_record = True
        if usage is None or not isinstance(raw, dict):
            return "metadata"
        raw_acct = raw.get("accounting")
        acct: dict[str, Any] = raw_acct if isinstance(raw_acct, dict) else {}
        key = _str(acct.get("usageId")) or _str(raw.get("apiCallId")) or _str(b.obj.get("id")) or f"line:{b.line}"
        model = _str(raw.get("model"))
        self.add_usage(UsageRecord(key=key, ts=b.ts, model=model, usage=usage))
        self.st.session.usage.add(usage)
        self.st.last_usage = usage
        if not (b.obj.get("agentId") or b.data.get("parentToolCallId")):
            self._model(model)
        return "metadata"

    # -- conversation -----------------------------------------------------------------------
    def _user(self, b: _Base) -> Category:
        st = self.st
        text = _str(b.data.get("content"))
        sub = bool(b.obj.get("agentId") or b.data.get("parentToolCallId"))
        source = _str(b.data.get("source"))
        extra = {k: b.data[k] for k in ("attachments", "source", "agentMode") if b.data.get(k)}
        self._event(b, "text", role="user", text=text, extra=extra)
        st.session.messages += 1
        if not sub and not (source or "").startswith("agent-"):
            st.outcome = None
            if st.title_prompt is None and text:
                st.title_prompt = text
                st.session.first_prompt = text
        return "events"

    def _assistant(self, b: _Base) -> Category:
        st = self.st
        d = b.data
        model = _str(d.get("model"))
        first: Event | None = None
        reasoning = _str(d.get("reasoningText"))
        if reasoning:
            first = self._event(b, "thinking", role="assistant", text=reasoning, model=model)
        text = _str(d.get("content"))
        if text:
            ev = self._event(b, "text", role="assistant", text=text, model=model)
            first = first or ev
        requests = d.get("toolRequests")
        for req in requests if isinstance(requests, list) else []:
            if not isinstance(req, dict):
                self._event(b, "unknown", role="assistant", raw=req)
                continue
            call_id = _str(req.get("toolCallId"))
            extra = {k: req[k] for k in ("intentionSummary", "toolTitle") if _str(req.get(k))}
            ev = self._event(
                b, "tool_use", role="assistant", model=model, tool=_str(req.get("name")),
                input=arguments(req.get("arguments")), tool_use_id=call_id, extra=extra,
            )
            first = first or ev
            if call_id:
                self._pend(call_id, ev)
        if first is None:
            first = self._event(b, "text", role="assistant", text=None, model=model, subtype="empty")
        if st.last_usage is not None:
            first.usage = st.last_usage
            st.last_usage = None
        for k in ("messageId", "outputTokens", "apiCallId"):
            if d.get(k) is not None:
                first.extra[k] = d[k]
        st.session.messages += 1
        if not first.sidechain:
            st.outcome = None
        return "events"

    def _reasoning(self, b: _Base) -> Category:
        self._event(b, "thinking", role="assistant", text=_str(b.data.get("content")))
        return "events"

    def _pend(self, call_id: str, ev: Event) -> None:
        pending = self.st.pending
        pending[call_id] = ev
        if len(pending) > MAX_PENDING:
            del pending[next(iter(pending))]

    def _tool_start(self, b: _Base) -> Category:
        call_id = _str(b.data.get("toolCallId"))
        call = self.st.pending.get(call_id) if call_id else None
        if call is not None:
            if call.input is None:
                call.input = arguments(b.data.get("arguments"))
            call.extra["started"] = b.ts
            self.emit(call)
            return "merged"
        ev = self._event(
            b, "tool_use", role="assistant", tool=_str(b.data.get("toolName")),
            input=arguments(b.data.get("arguments")), tool_use_id=call_id, model=_str(b.data.get("model")),
        )
        if call_id:
            self._pend(call_id, ev)
        return "events"

    def _tool_complete(self, b: _Base) -> Category:
        d = b.data
        call_id = _str(d.get("toolCallId"))
        result, is_error, extra = tool_outcome(d)
        call = self.st.pending.pop(call_id, None) if call_id else None
        if call is not None:
            call.result = result
            call.is_error = is_error
            call.extra.update(extra)
            call.extra["result_ts"] = b.ts
            self.emit(call)
            return "merged"
        self._event(b, "tool_result", role="tool", result=result, is_error=is_error, tool_use_id=call_id, extra=extra)
        return "events"

    def _subagent(self, b: _Base) -> Category:
        kind = str(b.obj.get("type"))
        agent_id, call_id = _str(b.obj.get("agentId")), _str(b.data.get("toolCallId"))
        if agent_id and call_id and len(self.st.agents) < MAX_PENDING:
            self.st.agents[agent_id] = call_id
        name = _str(b.data.get("agentDisplayName")) or _str(b.data.get("agentName"))
        ev = self._event(
            b, "system", subtype=kind, text=f"{kind}: {name}" if name else kind,
            tool_use_id=call_id, model=_str(b.data.get("model")), extra=payload(b.data),
        )
        ev.extra.setdefault("agent_id", agent_id)
        return "events"

    # -- summary ----------------------------------------------------------------------------
    def finish(self, *, settled: bool) -> Session:
        st = self.st
        s = st.session
        s.title = title_of(st.title_prompt)
        s.ending = st.outcome
        if s.ending is None and settled and any(not e.sidechain for e in st.pending.values()):
            s.ending = "interrupted"  # killed while a tool ran: no completion, no shutdown
        if st.shutdowns:
            s.extra["shutdowns"] = st.shutdowns
        if not st.saw_usage_record:
            total = Usage()
            for usage in st.shutdown_usage.values():
                total.add(usage)
            s.usage = total
        return s


class _Base:
    """One line's envelope, passed to the handlers."""

    __slots__ = ("data", "line", "obj", "ts")

    def __init__(self, line: int, ts: str | None, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self.line = line
        self.ts = ts
        self.obj = obj
        self.data = data


_HANDLERS: dict[str, Any] = {
    "session.start": CopilotParser._start,
    "session.resume": CopilotParser._resume,
    "session.model_change": CopilotParser._model_change,
    "session.error": CopilotParser._error,
    "session.compaction_complete": CopilotParser._compaction,
    "session.shutdown": CopilotParser._shutdown,
    "session.usage_record": CopilotParser._usage_record,
    "abort": CopilotParser._abort,
    "system.message": CopilotParser._system_message,
    "hook.start": CopilotParser._hook,
    "hook.end": CopilotParser._hook,
    "user.message": CopilotParser._user,
    "assistant.message": CopilotParser._assistant,
    "assistant.reasoning": CopilotParser._reasoning,
    "assistant.turn_start": lambda self, b: "skipped",
    "tool.execution_start": CopilotParser._tool_start,
    "tool.execution_complete": CopilotParser._tool_complete,
    "subagent.started": CopilotParser._subagent,
    "subagent.completed": CopilotParser._subagent,
    "subagent.failed": CopilotParser._subagent,
}
