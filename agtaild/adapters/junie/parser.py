"""Junie's ``events.jsonl`` lines → events and usage.

Every line is ``{kind, timestampMs?, …}``:

* ``UserPromptEvent`` (``prompt``, ``requestId``) and ``UserResponseEvent`` (an answer to a
  question or a choice) → ``text`` ``user``;
* ``SessionA2uxEvent`` wraps one ``event.agentEvent`` (with ``event.state``, the task's state,
  and ``agentEvent.agent`` ``{kind, id, name, type}``): the blocks (agtaild.adapters.junie.steps)
  → one event per ``stepId``; ``LlmResponseMetadataEvent`` → usage (its ``modelUsage`` rows);
  ``AgentFailureEvent`` → ``system`` ``error``; ``AgentPatchCreatedEvent`` → ``system``
  ``patch`` (its unified diff is the edit only when no FileChanges block recorded the task's
  edits); ``AgentPlanUpdatedEvent`` / ``SuggestPlanEvent`` → ``system`` ``plan``;
  ``AgentStartedEvent`` → ``system``; ``CurrentDirectoryUpdatedEvent`` → the cwd;
  ``AgentTaskNameUpdatedEvent`` → the title; status, environment (never kept: it holds the
  user's process environment), context-window, tip, suggestion, pull-request, authorization
  and plan-progress updates and ``AgentStateUpdatedEvent`` (the agent's whole state as a JSON
  text, for Junie's own restore) → metadata; an event of another agent than the main one is a
  ``sidechain`` with ``extra.subagent`` = its id;
* ``SystemMessageEvent`` → ``system``; ``CancelAgentEvent`` / ``TaskContinueStopped`` →
  ``system`` (the session ``interrupted`` when it ends so); ``SessionTitleSetEvent`` → the
  title; ``TaskStartedEvent``, ``TaskState``, ``UserMessagesCommittedToHistory``,
  ``SendToAgentEvent``, ``SkillsStatusEvent``, ``UserAsyncResponseEvent`` and
  ``SessionCostTrajectorySnapshotEvent`` → metadata;
* anything else → ``unknown``.

Usage: one record per ``modelUsage`` row, keyed by the line's time, the row's place and its
counters, so that a usage line Junie writes again is counted once. ``inputTokens`` is already
net of ``cacheInputTokens`` (the cache read); ``cacheCreateTokens`` is the cache write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.junie.steps import BLOCKS, new_step, update_step
from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch_ms, widen
from agtaild.adapters.kit.values import num, title_from_prompt
from agtaild.model import Event, Session, Usage, UsageRecord, project_of

#: Steps whose event the state keeps for later updates (the oldest are forgotten).
MAX_STEPS = 2000
#: Usage keys the state remembers to drop replays (the oldest are forgotten).
MAX_SEEN = 8192
_METADATA_TOP = frozenset({
    "TaskStartedEvent", "UserMessagesCommittedToHistory", "SendToAgentEvent", "SkillsStatusEvent",
    "UserAsyncResponseEvent", "SessionCostTrajectorySnapshotEvent",
})  # fmt: skip
_METADATA_AGENT = frozenset({
    "AgentCurrentStatusUpdatedEvent", "EnvironmentVariablesUpdatedEvent", "ContextWindowReportEvent",
    "TipSuggestionCreatedEvent", "NextPromptSuggestionEvent", "AvailablePullRequestsEvent",
    "AuthorizationAvailabilityEvent", "ShowPlanProgressEvent", "AgentStateUpdatedEvent",
})  # fmt: skip


class JunieState(ParserState):
    steps: dict[str, Event] = msgspec.field(default_factory=dict)
    seen: list[str] = msgspec.field(default_factory=list)
    task_name: str | None = None
    title: str | None = None
    #: "error" / "cancelled" / "done" / "prompt" / None: how the log ends so far.
    last: str | None = None
    task_state: str | None = None
    file_edits: bool = False
    #: The step of a question or choice the user has not answered yet.
    open_ask: str | None = None
    task_costs: dict[str, float] = msgspec.field(default_factory=dict)
    reported_cost: float = 0.0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class JunieParser(LineParser[JunieState]):
    State = JunieState

    def new_state(self) -> JunieState:
        return JunieState(
            session=Session(agent="junie", id=Path(self.unit.path).parent.name, path=self.unit.path)
        )

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, None, "unknown", raw=obj)
            return "events"
        s = self.st.session
        ts = from_epoch_ms(obj.get("timestampMs"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        kind = _str(obj.get("kind"))
        if kind == "SessionA2uxEvent":
            return self._a2ux(obj, line, ts)
        if kind in ("UserPromptEvent", "UserResponseEvent"):
            text = _str(obj.get("prompt")) or _str(obj.get("presentablePrompt"))
            extra = {"choice": True} if obj.get("isChoice") is True else {}
            self._event(
                line, ts, "text", role="user", text=text, uuid=_str(obj.get("requestId")), extra=extra
            )
            self._answer(text, ts)
            s.messages += 1
            if kind == "UserPromptEvent":
                self.st.last = "prompt"
                if s.first_prompt is None and text and text.strip():
                    s.first_prompt = text.strip()
            return "events"
        if kind == "SystemMessageEvent":
            self._event(line, ts, "system", text=_str(obj.get("text")), subtype="message",
                        extra={"details": obj["details"]} if _str(obj.get("details")) else {})  # fmt: skip
            return "events"
        if kind in ("CancelAgentEvent", "TaskContinueStopped"):
            self._event(
                line, ts, "system", subtype="cancelled" if kind == "CancelAgentEvent" else "continue_stopped"
            )
            self.st.last = "cancelled"
            return "events"
        if kind == "SessionTitleSetEvent":
            self.st.title = _str(obj.get("name")) or self.st.title
            return "metadata"
        if kind == "TaskState":
            self.st.task_state = _str(obj.get("state"))
            if self.st.task_state == "COMPLETED" and self.st.last != "error":
                self.st.last = "done"
            return "metadata"
        if kind in _METADATA_TOP:
            return "metadata"
        self._event(line, ts, "unknown", raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, ts=ts, source={"line": line}, **fields))

    def _a2ux(self, obj: dict[str, Any], line: int, ts: str | None) -> Category:
        st, s = self.st, self.st.session
        wrapper = _dict(obj.get("event"))
        ae = wrapper.get("agentEvent")
        if not isinstance(ae, dict):
            self._event(line, ts, "unknown", raw=obj)
            return "events"
        kind = _str(ae.get("kind"))
        agent = _dict(ae.get("agent"))
        side: dict[str, Any] = {}
        agent_id = _str(agent.get("id"))
        if agent and (agent.get("kind") not in (None, "MainAgent") or agent_id not in (None, "main")):
            side = {"sidechain": True, "extra": {"subagent": agent_id or _str(agent.get("name"))}}
        if kind is not None and kind in BLOCKS:
            return self._step(kind, ae, obj, line, ts, side)
        if kind == "LlmResponseMetadataEvent":
            self._count_usage(ae, obj, ts)
            return "metadata"
        if kind == "CurrentDirectoryUpdatedEvent":
            cwd = _str(ae.get("currentDirectory")) or _str(ae.get("directory"))
            if cwd and not side:
                s.cwd, s.project = cwd, project_of(cwd)
            return "metadata"
        if kind == "AgentTaskNameUpdatedEvent":
            st.task_name = _str(ae.get("name")) or st.task_name
            return "metadata"
        if kind in _METADATA_AGENT:
            return "metadata"
        if kind == "AgentFailureEvent":
            self._event(line, ts, "system", role="assistant", text=_str(ae.get("message")), subtype="error",
                        is_error=True, **_with(side, {"error_code": ae.get("errorCode")}))  # fmt: skip
            st.last = "error"
            return "events"
        if kind == "AgentPatchCreatedEvent":
            patch = _str(ae.get("patch"))
            if not patch:
                return "skipped"  # Junie writes an empty patch when nothing changed
            extra: dict[str, Any] = {}
            if not st.file_edits:
                found = edits.edit_doc(list(edits.from_unified(patch)))
                if found is not None:
                    extra["edit"] = found
            self._event(
                line, ts, "system", role="assistant", text=patch, subtype="patch", **_with(side, extra)
            )
            return "events"
        if kind in ("AgentPlanUpdatedEvent", "SuggestPlanEvent"):
            plan = ae.get("plan")
            text = plan if isinstance(plan, str) else None
            self._event(line, ts, "system", role="assistant", text=text, subtype="plan",
                        **_with(side, {"plan": plan if text is None else None, "items": ae.get("items") or ae.get("sections")}))  # fmt: skip
            return "events"
        if kind == "AgentStartedEvent":
            self._event(line, ts, "system", role="assistant", subtype="agent_started", text=_str(ae.get("agent")),
                        **_with(side, {"agent_id": ae.get("agentId"), "agent_type": ae.get("agentType")}))  # fmt: skip
            return "events"
        self._event(line, ts, "unknown", raw=obj, **side)
        return "events"

    def _step(self, kind: str, ae: dict[str, Any], obj: dict[str, Any], line: int, ts: str | None,
              side: dict[str, Any]) -> Category:  # fmt: skip
        st = self.st
        step = _str(ae.get("stepId"))
        if kind == "FileChangesBlockUpdatedEvent":
            st.file_edits = True
        if kind == "ResultBlockUpdatedEvent":
            self._completion(obj)
            st.last = "cancelled" if ae.get("cancelled") is True else "result"
        if BLOCKS[kind][1] == "ask_user" and step:
            st.open_ask = step
        existing = st.steps.get(step) if step else None
        if existing is not None:
            update_step(existing, kind, ae)
            if existing.is_error is not None and ts and "result_ts" not in existing.extra:
                existing.extra["result_ts"] = ts
            self.emit(existing)
            return "merged"
        fields: dict[str, Any] = {"ts": ts, "source": {"line": line}}
        if side:
            fields["sidechain"] = True
        ev = self.emit(new_step(kind, ae, **fields))
        if side:
            ev.extra.update(side["extra"])
        if ev.kind == "text":
            self.st.session.messages += 1
        if step:
            st.steps[step] = ev
            if len(st.steps) > MAX_STEPS:
                del st.steps[next(iter(st.steps))]
        return "events"

    def _answer(self, text: str | None, ts: str | None) -> None:
        """The user's reply answers the question or choice still open, if any."""
        ask = self.st.steps.get(self.st.open_ask or "")
        self.st.open_ask = None
        if ask is None or ask.is_error is not None:
            return
        ask.result, ask.is_error = text, False
        if ts:
            ask.extra["result_ts"] = ts
        self.emit(ask)

    def _completion(self, obj: dict[str, Any]) -> None:
        done = obj.get("completion")
        task = _str(obj.get("taskId")) or ""
        if isinstance(done, dict) and isinstance(done.get("taskCostUsd"), int | float):
            self.st.task_costs[task] = float(done["taskCostUsd"])

    def _count_usage(self, ae: dict[str, Any], obj: dict[str, Any], ts: str | None) -> None:
        rows = ae.get("modelUsage")
        if not isinstance(rows, list):
            return
        s = self.st.session
        stamp = obj.get("timestampMs")
        for index, row in enumerate(rows):
            if not isinstance(row, dict):
                continue
            model = _str(row.get("model"))
            usage = Usage(
                input_tokens=num(row, "inputTokens"),
                output_tokens=num(row, "outputTokens"),
                cache_read_tokens=num(row, "cacheInputTokens"),
                cache_write_tokens=num(row, "cacheCreateTokens"),
                reasoning_tokens=num(row, "reasoningTokens"),
            ).fix_total()
            if usage.is_zero():
                continue
            key = (f"{stamp}:{index}:{model}:{usage.input_tokens}:{usage.output_tokens}:"
                   f"{usage.cache_read_tokens}:{usage.cache_write_tokens}:{usage.reasoning_tokens}")  # fmt: skip
            if key in self.st.seen:
                continue
            self.st.seen = [*self.st.seen, key][-MAX_SEEN:]
            cost = row.get("cost")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
                self.st.reported_cost += float(cost)
            s.usage.add(usage)
            if model and model not in s.models:
                s.models.append(model)
            self.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))

    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        s.title = st.title or st.task_name or title_from_prompt(s.first_prompt)
        s.ending = {"error": "error", "cancelled": "interrupted"}.get(st.last or "")
        if st.reported_cost:
            s.extra["reported_cost_usd"] = round(st.reported_cost, 10)
        if st.task_costs:
            s.extra["task_cost_usd"] = round(sum(st.task_costs.values()), 10)
        if st.task_state:
            s.extra["task_state"] = st.task_state
        return s


def _with(side: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Event fields: a subagent's marks plus ``extra`` (None values left out)."""
    kept = {k: v for k, v in extra.items() if v is not None}
    if side:
        return {"sidechain": True, "extra": {**side["extra"], **kept}}
    return {"extra": kept}
