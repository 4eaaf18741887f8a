"""Grok Build's ``updates.jsonl``: ACP ``session/update`` envelopes turned into events.

The agent streams: a message arrives as many ``agent_message_chunk`` lines, reasoning as
``agent_thought_chunk`` lines, a tool call as one ``tool_call`` and later
``tool_call_update`` lines with its status and output. Consecutive chunks of one kind (and
one prompt) are one event — the first line counts as the event, the rest as merged; tool
call updates are merged into their call by ``toolCallId``. Usage comes once per turn
(``turn_completed``), split by model. ``rewind_marker`` drops prompts ≥ its target from the
conversation: their events stay, marked ``extra["branch"] == "inactive"``.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.stamps import from_epoch, widen
from agtaild.model import Event, HookInfo, Usage, UsageRecord

#: 1 USD in Grok's cost ticks.
TICKS_PER_USD = 1e10
#: ACP stop reasons → Session.ending
ENDINGS = {"cancelled": "interrupted", "max_tokens": "limit", "max_turn_requests": "limit"}
_CHUNKS = {
    "user_message_chunk": ("text", "user"),
    "agent_message_chunk": ("text", "assistant"),
    "agent_thought_chunk": ("thinking", "assistant"),
}
_SUMMARIES = {"session_summary_generated", "last_turn_summary", "session_recap", "compaction_checkpoint"}
#: Known kinds with nothing to index (UI state re-sent on every change).
_SKIPPED = {"available_commands_update"}
_SYSTEM = {
    "plan",
    "current_mode_update",
    "rewind_marker",
    "auto_compact_started",
    "auto_compact_completed",
    "auto_compact_failed",
    "auto_compact_cancelled",
    "subagent_spawned",
    "subagent_finished",
    "task_backgrounded",
    "task_completed",
    "goal_updated",
    "workflow_updated",
    "retry_state",
    "diff_review",
    "response_started",
    "response_completed",
}


class UpdatesReader:
    """Feeds ``updates.jsonl`` records into a RecordBook; keeps what the summary needs."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.session = book.session
        self.emitted: list[Event] = []
        self.calls: dict[str, Event] = {}
        self._run: tuple[str, Any, Event] | None = None
        self.prompt_index: int | None = None
        self.first_prompt: str | None = None
        self.summary_title: str | None = None
        self.last_stop: str | None = None
        self.recorded_cost = 0.0
        self.models: list[str] = []

    # -- helpers --------------------------------------------------------------------------
    def emit(self, kind: str, line: int, ts: str | None, **fields: Any) -> Event:
        extra = fields.pop("extra", {})
        extra.setdefault("branch", "active")
        if self.prompt_index is not None:
            extra.setdefault("prompt_index", self.prompt_index)
        ev = self.book.emit(Event(seq=-1, kind=kind, ts=ts, source={"line": line}, extra=extra, **fields))
        self.emitted.append(ev)
        return ev

    def add_model(self, model: Any) -> None:
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)

    def first_user_text(self) -> str | None:
        """The first user message (chunks joined), for first_prompt and the fallback title."""
        if self.first_prompt is None:
            self.first_prompt = next(
                (e.text for e in self.emitted if e.kind == "text" and e.role == "user" and e.text), None
            )
        return self.first_prompt

    # -- records --------------------------------------------------------------------------
    def feed(self, line: int, obj: Any) -> None:
        params = _dict(obj.get("params")) if isinstance(obj, dict) else {}
        update = params.get("update")
        if not isinstance(update, dict) or not isinstance(update.get("sessionUpdate"), str):
            self._run = None
            self.emit("unknown", line, None, raw=obj)
            self.book.count("events")
            return
        meta = _dict(params.get("_meta"))
        ts = from_epoch(meta.get("agentTimestampMs"), unit="ms") or from_epoch(obj.get("timestamp"), unit="s")
        s = self.session
        s.started, s.ended = widen(s.started, s.ended, ts)
        kind: str = update["sessionUpdate"]
        if kind in _CHUNKS:
            self.book.count(self._chunk(kind, update, meta, line, ts))
            return
        self._run = None
        if kind == "tool_call":
            self.book.count(self._tool_call(update, meta, line, ts))
        elif kind == "tool_call_update":
            self.book.count(self._tool_update(update, line, ts))
        elif kind == "turn_completed":
            self._turn_completed(update, meta, line, ts)
            self.book.count("events")
        elif kind in ("hook_execution", "hook_annotation"):
            self._hook(kind, update, line, ts)
            self.book.count("events")
        elif kind in _SUMMARIES:
            self._summary(kind, update, line, ts)
            self.book.count("events")
        elif kind in _SKIPPED:
            self.book.count("skipped")
        elif kind in _SYSTEM:
            self._system(kind, update, line, ts)
            self.book.count("events")
        else:
            self.emit("unknown", line, ts, subtype=kind, raw=obj)
            self.book.count("events")

    def _chunk(
        self, kind: str, update: dict[str, Any], meta: dict[str, Any], line: int, ts: str | None
    ) -> Any:
        content = update.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        text = text if isinstance(text, str) else ""
        umeta = _dict(update.get("_meta"))
        if kind == "user_message_chunk":
            index = umeta.get("promptIndex")
            if isinstance(index, int):
                self.prompt_index = index
            self.add_model(umeta.get("modelId"))
            group = ("user", self.prompt_index)
        else:
            group = (kind, meta.get("promptId"))
        if self._run is not None and self._run[0] == kind and self._run[1] == group:
            ev = self._run[2]
            ev.text = (ev.text or "") + text
            return "merged"
        ev_kind, role = _CHUNKS[kind]
        extra: dict[str, Any] = {}
        if isinstance(content, dict) and content.get("type") not in (None, "text"):
            extra["content_type"] = content.get("type")
        ev = self.emit(ev_kind, line, ts, role=role, text=text, uuid=_str(meta.get("eventId")), extra=extra)
        if kind != "agent_thought_chunk":
            self.session.messages += 1
        self._run = (kind, group, ev)
        return "events"

    def _tool_call(self, update: dict[str, Any], meta: dict[str, Any], line: int, ts: str | None) -> Any:
        call_id = update.get("toolCallId") if isinstance(update.get("toolCallId"), str) else None
        tool = _dict(_dict(update.get("_meta")).get("x.ai/tool"))
        name = tool.get("name") if isinstance(tool.get("name"), str) else update.get("title")
        known = self.calls.get(call_id) if call_id else None
        if known is not None:  # the call re-sent: keep the first, take newer fields
            if update.get("rawInput") is not None:
                known.input = update["rawInput"]
            return "merged"
        extra = {"title": update.get("title"), "status": update.get("status")}
        extra.update({k: tool[k] for k in ("kind", "namespace", "label") if k in tool})
        ev = self.emit(
            "tool_use",
            line,
            ts,
            role="assistant",
            tool=name if isinstance(name, str) else None,
            input=update.get("rawInput"),
            tool_use_id=call_id,
            uuid=_str(meta.get("eventId")),
            extra={k: v for k, v in extra.items() if v is not None},
        )
        if call_id:
            self.calls[call_id] = ev
        return "events"

    def _tool_update(self, update: dict[str, Any], line: int, ts: str | None) -> Any:
        call_id = update.get("toolCallId") if isinstance(update.get("toolCallId"), str) else None
        ev = self.calls.get(call_id) if call_id else None
        category = "merged"
        if ev is None:
            ev = self.emit("tool_result", line, ts, role="tool", tool_use_id=call_id)
            if call_id:
                self.calls[call_id] = ev
            category = "events"
        status = update.get("status")
        if isinstance(status, str):
            ev.extra["status"] = status
            if status in ("completed", "failed"):
                ev.is_error = status == "failed"
                ev.extra["result_ts"] = ts
        if isinstance(update.get("title"), str):
            ev.extra["title"] = update["title"]
        if ev.input is None and update.get("rawInput") is not None:
            ev.input = update["rawInput"]
        text, diffs = _tool_content(update.get("content"))
        if diffs:
            ev.extra["diffs"] = diffs
        if update.get("rawOutput") is not None:
            ev.extra["raw_output"] = update["rawOutput"]
            text = text or _output_text(update["rawOutput"])
        if text is None and diffs:
            text = "\n".join(f"edited {d.get('path')}" for d in diffs)
        if text is not None:
            ev.result = text
        return category

    def _turn_completed(
        self, update: dict[str, Any], meta: dict[str, Any], line: int, ts: str | None
    ) -> None:
        stop = update.get("stop_reason") if isinstance(update.get("stop_reason"), str) else None
        self.last_stop = stop
        raw = _dict(update.get("usage"))
        turn = update.get("prompt_id") or meta.get("eventId") or f"line:{line}"
        by_model = _dict(raw.get("modelUsage"))
        parts: list[tuple[str | None, dict[str, Any]]] = [
            (str(m), u) for m, u in by_model.items() if isinstance(u, dict)
        ] or [(None, raw)]
        total = Usage()
        for model, part in parts:
            usage = grok_usage(part)
            self.add_model(model)
            total.add(usage)
            if not usage.is_zero():
                self.book.add_usage(UsageRecord(key=f"{turn}:{model or ''}", ts=ts, model=model, usage=usage))
        ticks = raw.get("costUsdTicks")
        extra: dict[str, Any] = {"prompt_id": update.get("prompt_id")}
        if isinstance(ticks, int | float) and not isinstance(ticks, bool):
            self.recorded_cost += ticks / TICKS_PER_USD
            extra["recorded_cost_usd"] = ticks / TICKS_PER_USD
        for key in ("numTurns", "modelCalls", "apiDurationMs"):
            if key in raw:
                extra[key] = raw[key]
        self.emit(
            "system",
            line,
            ts,
            subtype="turn_completed",
            text=stop,
            model=parts[0][0] if len(parts) == 1 else None,
            usage=total.fix_total() if not total.is_zero() else None,
            extra=extra,
        )

    def _hook(self, kind: str, update: dict[str, Any], line: int, ts: str | None) -> None:
        if kind == "hook_annotation":
            msg = update.get("message")
            self.emit(
                "hook", line, ts, hook=HookInfo(text=msg if isinstance(msg, str) else None), subtype=kind
            )
            return
        runs = update.get("runs") if isinstance(update.get("runs"), list) else []
        lines = []
        for run in runs or []:
            if not isinstance(run, dict):
                continue
            status = _dict(run.get("status"))
            ms = status.get("elapsed_ms")
            took = f" ({ms} ms)" if ms is not None else ""
            lines.append(f"{run.get('name')}: {status.get('status')}{took}")
        event = update.get("event_name")
        tool = update.get("tool_name")
        hook = HookInfo(
            event=event if isinstance(event, str) else None,
            tool=tool if isinstance(tool, str) else None,
            text="\n".join(lines) or None,
        )
        self.emit(
            "hook",
            line,
            ts,
            hook=hook,
            subtype=kind,
            extra={"runs": runs, "prompt_id": update.get("prompt_id")},
        )

    def _summary(self, kind: str, update: dict[str, Any], line: int, ts: str | None) -> None:
        text = next(
            (update[k] for k in ("session_summary", "summary", "recap") if isinstance(update.get(k), str)),
            None,
        )
        if kind == "session_summary_generated" and text:
            self.summary_title = text
        if kind == "compaction_checkpoint":
            self.session.compactions += 1
        extra = {
            k: v
            for k, v in update.items()
            if k not in ("sessionUpdate", "session_summary", "summary", "recap")
        }
        self.emit("summary", line, ts, subtype=kind, text=text, extra=extra)

    def _system(self, kind: str, update: dict[str, Any], line: int, ts: str | None) -> None:
        extra = {k: v for k, v in update.items() if k != "sessionUpdate"}
        text: str | None = None
        if kind == "plan" and isinstance(update.get("entries"), list):
            text = "\n".join(
                f"[{e.get('status')}] {e.get('content')}" for e in update["entries"] if isinstance(e, dict)
            )
            extra.pop("entries", None)
            extra["plan"] = update["entries"]
        elif kind == "rewind_marker" and isinstance(update.get("target_prompt_index"), int):
            target = update["target_prompt_index"]
            for ev in self.emitted:
                index = ev.extra.get("prompt_index")
                if isinstance(index, int) and index >= target:
                    ev.extra["branch"] = "inactive"
            text = f"rewound to prompt {target}"
        elif isinstance(update.get("mode"), str):
            text = update["mode"]
        self.emit("system", line, ts, subtype=kind, text=text, extra=extra)


def grok_usage(raw: dict[str, Any]) -> Usage:
    """One turn's (or one model's) usage in the Anthropic convention.

    Grok's ``inputTokens`` includes the cached part (``totalTokens`` = input + output in the
    real capture), so the cache read is taken out; ``outputTokens`` includes reasoning.
    """
    cached = _int(raw.get("cachedReadTokens"))
    return Usage(
        input_tokens=max(_int(raw.get("inputTokens")) - cached, 0),
        output_tokens=_int(raw.get("outputTokens")),
        cache_read_tokens=cached,
        cache_write_tokens=_int(raw.get("cacheCreationTokens")),
        reasoning_tokens=_int(raw.get("reasoningTokens")),
    ).fix_total()


def _tool_content(content: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """Text parts and diffs of a tool_call_update's ``content`` list."""
    if not isinstance(content, list):
        return None, []
    texts: list[str] = []
    diffs: list[dict[str, Any]] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "diff":
            diffs.append({k: item.get(k) for k in ("path", "oldText", "newText")})
        elif item.get("type") == "content" and isinstance(item.get("content"), dict):
            inner = item["content"]
            if isinstance(inner.get("text"), str):
                texts.append(inner["text"])
    return ("\n".join(texts) if texts else None), diffs


def _output_text(raw: Any) -> str | None:
    """The text Grok showed the model for a tool's raw output, where it says so."""
    if not isinstance(raw, dict):
        return None
    for value in raw.values():
        if isinstance(value, dict) and isinstance(value.get("tool_output_for_prompt"), str):
            return str(value["tool_output_for_prompt"])
    for key in ("stdout", "output", "text"):
        if isinstance(raw.get(key), str):
            return str(raw[key])
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
