"""Continue's ``ChatHistoryItem`` → agtail events (one item = one accounting record).

An item is ``{message, contextItems[], editorState?, toolCallStates?, reasoning?,
conversationSummary?, promptLogs?}``; ``message.role`` is ``user``, ``assistant``,
``thinking``, ``system`` or ``tool``; ``content`` a string or ``[{type:"text", text} |
{type:"imageUrl", …}]``. An assistant message carries OpenAI-style ``toolCalls`` (arguments
as a JSON string) and ``usage`` (OpenAI counts plus ``model`` and ``cost_cents``).

Tool results are not messages in the CLI: they sit in the assistant item's
``toolCallStates[]`` (``status`` ``done`` / ``errored`` / ``canceled`` …, ``output`` a list of
context items). The IDE may also write ``tool`` messages; those merge into their call.
Reasoning is stored only when the IDE keeps it (``reasoning.text``, ``startAt``/``endAt`` ms) —
``cn`` drops it and keeps only ``reasoning_tokens``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.model import Event, Usage, UsageRecord

#: toolCallStates statuses after which a call has its result.
_DONE = frozenset({"done"})
_FAILED = frozenset({"errored", "canceled", "cancelled"})
_decoder = msgspec.json.Decoder()


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(t for t in out if t)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def usage_of(usage: Any) -> Usage | None:
    """OpenAI counts (the prompt includes cached tokens; completion includes reasoning)."""
    if not isinstance(usage, dict):
        return None
    prompt = _count(usage.get("prompt_tokens"))
    prompt_details = usage.get("prompt_tokens_details")
    prompt_details = prompt_details if isinstance(prompt_details, dict) else {}
    completion_details = usage.get("completion_tokens_details")
    completion_details = completion_details if isinstance(completion_details, dict) else {}
    cached = _count(prompt_details.get("cached_tokens"))
    written = _count(prompt_details.get("cache_write_tokens"))
    out = Usage(
        input_tokens=max(prompt - cached - written, 0),
        output_tokens=_count(usage.get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=_count(completion_details.get("reasoning_tokens")),
    ).fix_total()
    return None if out.is_zero() else out


def _arguments(call: dict[str, Any], state: dict[str, Any] | None) -> Any:
    if state is not None and "parsedArgs" in state:
        return state["parsedArgs"]
    fn = _dict(call.get("function"))
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            return _decoder.decode(args)
        except msgspec.DecodeError:
            return args
    return args


def _output(output: Any) -> Any:
    """A tool's output context items → their text (one item: a string; several: a list)."""
    if not isinstance(output, list):
        return output
    texts = [o.get("content") for o in output if isinstance(o, dict) and isinstance(o.get("content"), str)]
    if len(texts) == len(output):
        return texts[0] if len(texts) == 1 else texts
    return output


class ItemMapper:
    """Walks one session's history items in order; the summary fields fill as it goes."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.models: list[str] = []
        self.messages = 0
        self.first_prompt: str | None = None
        self.compactions = 0
        #: The latest time an item records (``reasoning.startAt``/``endAt``): the session file
        #: has no other, and its mtime is only when the file was last written or copied.
        self.latest: str | None = None
        #: tool call id → its tool_use event still without a result.
        self._open: dict[str, Event] = {}
        self._calls: dict[str, Event] = {}

    @property
    def open_calls(self) -> bool:
        return bool(self._open)

    def item(self, item: Any, row: int) -> Category:
        msg = item.get("message") if isinstance(item, dict) else None
        if not isinstance(msg, dict):
            self._emit(Event(seq=-1, kind="unknown", raw=item), row)
            return "events"
        role = msg.get("role")
        category: Category = "events"
        if role == "user":
            self._user(item, msg, row)
        elif role == "assistant":
            self._assistant(item, msg, row)
        elif role == "thinking":
            self._emit(
                Event(seq=-1, kind="thinking", role="assistant", text=content_text(msg.get("content"))), row
            )
        elif role == "system":
            self._emit(
                Event(seq=-1, kind="system", role="system", text=content_text(msg.get("content"))), row
            )
        elif role == "tool":
            category = self._tool(msg, row)
        else:
            self._emit(Event(seq=-1, kind="unknown", raw=item), row)
        summary = item.get("conversationSummary")
        if isinstance(summary, str) and summary:
            self.compactions += 1
            self._emit(
                Event(seq=-1, kind="summary", role="system", subtype="conversation_summary", text=summary),
                row,
            )
            category = "events"
        return category

    def _emit(self, ev: Event, row: int) -> Event:
        ev.source = {"row": row}
        return self.book.emit(ev)

    def _user(self, item: dict[str, Any], msg: dict[str, Any], row: int) -> None:
        text = content_text(msg.get("content"))
        extra: dict[str, Any] = {}
        context = item.get("contextItems")
        if isinstance(context, list) and context:
            extra["context"] = [c.get("name") for c in context if isinstance(c, dict)]
        self._emit(Event(seq=-1, kind="text", role="user", text=text, extra=extra), row)
        self.messages += 1
        if self.first_prompt is None and text.strip():
            self.first_prompt = text

    def _assistant(self, item: dict[str, Any], msg: dict[str, Any], row: int) -> None:
        usage_raw = _dict(msg.get("usage"))
        model = usage_raw.get("model") if isinstance(usage_raw.get("model"), str) else None
        if model and model not in self.models:
            self.models.append(model)
        reasoning = item.get("reasoning")
        out: list[Event] = []
        if isinstance(reasoning, dict):
            for key in ("startAt", "endAt"):
                at = from_epoch(reasoning.get(key), unit="ms")
                if at and (self.latest is None or at > self.latest):
                    self.latest = at
        if isinstance(reasoning, dict) and isinstance(reasoning.get("text"), str) and reasoning["text"]:
            ts = from_epoch(reasoning.get("startAt"), unit="ms")
            out.append(
                Event(seq=-1, kind="thinking", ts=ts, role="assistant", text=reasoning["text"], model=model)
            )
        text = content_text(msg.get("content"))
        if text:
            out.append(Event(seq=-1, kind="text", role="assistant", text=text, model=model))
        states = {
            s["toolCallId"]: s
            for s in (item.get("toolCallStates") or [])
            if isinstance(s, dict) and isinstance(s.get("toolCallId"), str)
        }
        for call in msg.get("toolCalls") or []:
            if isinstance(call, dict):
                call_id = call.get("id") if isinstance(call.get("id"), str) else ""
                out.append(self._call(call, states.get(call_id), model))
        usage = usage_of(usage_raw)
        if usage is not None:
            if not out:
                out.append(Event(seq=-1, kind="text", role="assistant", text="", model=model))
            primary = next((e for e in out if e.kind == "text"), out[0])
            primary.usage = usage
            self.book.add_usage(UsageRecord(key=f"history:{row}", ts=None, model=model, usage=usage))
        if not out:
            out.append(Event(seq=-1, kind="text", role="assistant", text="", model=model))
        for ev in out:
            self._emit(ev, row)
        self.messages += 1

    def _call(self, call: dict[str, Any], state: dict[str, Any] | None, model: str | None) -> Event:
        fn = _dict(call.get("function"))
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        ev = Event(
            seq=-1,
            kind="tool_use",
            role="assistant",
            tool=fn.get("name") if isinstance(fn.get("name"), str) else None,
            input=_arguments(call, state),
            model=model,
            tool_use_id=call_id,
        )
        status = state.get("status") if state is not None else None
        if not isinstance(status, str):
            status = None
        else:
            ev.extra["status"] = status
        if state is not None and (status in _DONE or status in _FAILED or "output" in state):
            ev.result = _output(state.get("output"))
            ev.is_error = status in _FAILED
        elif call_id:
            self._open[call_id] = ev
        if call_id:
            self._calls[call_id] = ev
        return ev

    def _tool(self, msg: dict[str, Any], row: int) -> Category:
        call_id = msg.get("toolCallId") if isinstance(msg.get("toolCallId"), str) else None
        result = content_text(msg.get("content"))
        waiting = self._open.pop(call_id, None) if call_id else None
        if waiting is not None:
            waiting.result = result
            waiting.is_error = False
            self.book.emit(waiting)
            return "merged"
        if call_id and call_id in self._calls:
            return "merged"  # the call already holds this result (from its toolCallStates)
        self._emit(Event(seq=-1, kind="tool_result", role="user", result=result, tool_use_id=call_id), row)
        return "events"
