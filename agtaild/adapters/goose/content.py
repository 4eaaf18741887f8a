"""Goose messages (``role`` + a list of ``MessageContent``) → agtail events.

Content items (``crates/goose/src/conversation/message.rs``, serde ``type`` tags):
``text{text}``, ``thinking{thinking, signature}``, ``redactedThinking{data}``,
``toolRequest{id, toolCall: {status: "success", value: {name, arguments}} | {status:
"error", error}}``, ``toolResponse{id, toolResult: {status: "success", value: [content]} |
{status: "error", error}}``, ``frontendToolRequest``, ``image{data, mimeType}``,
``toolConfirmationRequest``, ``contextLengthExceeded``, ``summarizationRequested``,
``systemNotification{notificationType, msg}``. Tool responses arrive in ``user`` messages and
merge into their request. Shared by the SQLite store and the older JSONL files.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.model import Event

_NOTICES = frozenset({"contextLengthExceeded", "summarizationRequested", "systemNotification"})


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _result_text(value: Any) -> Any:
    """A tool result's content list → its text (one item: a string; several: a list)."""
    if not isinstance(value, list):
        return value
    texts = [v.get("text") for v in value if isinstance(v, dict) and isinstance(v.get("text"), str)]
    if texts and len(texts) == len(value):
        return texts[0] if len(texts) == 1 else texts
    return value


class MessageMapper:
    """Walks one session's messages in order; summary fields fill as it goes."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.messages = 0
        self.first_prompt: str | None = None
        self.compactions = 0
        self._open: dict[str, Event] = {}

    @property
    def open_calls(self) -> bool:
        return bool(self._open)

    def message(self, role: Any, content: Any, ts: str | None, number: int, raw: Any) -> Category:
        if not isinstance(content, list):
            self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=raw), number)
            return "events"
        who = role if role in ("user", "assistant") else None
        emitted = merged = 0
        texts = []
        for item in content:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "toolResponse" and self._merge(item):
                merged += 1
                continue
            ev = self._item(item, who, ts)
            if kind == "text" and ev.text:
                texts.append(ev.text)
            self._emit(ev, number)
            emitted += 1
        if texts and who is not None:
            self.messages += 1
            if who == "user" and self.first_prompt is None:
                self.first_prompt = "\n".join(texts)
        if emitted:
            return "events"
        if merged:
            return "merged"
        self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=raw), number)
        return "events"

    def _emit(self, ev: Event, number: int) -> None:
        ev.source = {"row": number}
        self.book.emit(ev)

    def _item(self, item: Any, who: str | None, ts: str | None) -> Event:
        if not isinstance(item, dict):
            return Event(seq=-1, kind="unknown", ts=ts, raw=item)
        kind = item.get("type") if isinstance(item.get("type"), str) else None
        if kind == "text":
            return Event(seq=-1, kind="text", ts=ts, role=who, text=str(item.get("text") or ""))
        if kind == "thinking":
            return Event(
                seq=-1, kind="thinking", ts=ts, role="assistant", text=str(item.get("thinking") or "")
            )
        if kind == "redactedThinking":
            return Event(seq=-1, kind="thinking", ts=ts, role="assistant", text="", extra={"redacted": True})
        if kind in ("toolRequest", "frontendToolRequest"):
            return self._request(item, ts)
        if kind == "toolResponse":
            result, is_error = _response(item)
            call_id = item.get("id") if isinstance(item.get("id"), str) else None
            return Event(
                seq=-1,
                kind="tool_result",
                ts=ts,
                role="user",
                result=result,
                is_error=is_error,
                tool_use_id=call_id,
            )
        if kind == "image":
            extra = {"attachment": {"mimeType": item.get("mimeType")}}
            return Event(seq=-1, kind="text", ts=ts, role=who, text="", extra=extra)
        if kind in _NOTICES:
            if kind == "summarizationRequested":
                self.compactions += 1
            text = item.get("msg") or kind
            return Event(
                seq=-1, kind="system", ts=ts, role="system", subtype=str(kind), text=str(text), raw=item
            )
        if kind == "toolConfirmationRequest":
            return Event(seq=-1, kind="system", ts=ts, role="system", subtype=str(kind), raw=item)
        return Event(seq=-1, kind="unknown", ts=ts, raw=item)

    def _request(self, item: dict[str, Any], ts: str | None) -> Event:
        call = _dict(item.get("toolCall"))
        value = _dict(call.get("value"))
        call_id = item.get("id") if isinstance(item.get("id"), str) else None
        ev = Event(
            seq=-1,
            kind="tool_use",
            ts=ts,
            role="assistant",
            tool=value.get("name") if isinstance(value.get("name"), str) else None,
            input=value.get("arguments"),
            tool_use_id=call_id,
        )
        if call.get("status") == "error":  # the model's call could not even be parsed
            ev.result, ev.is_error = call.get("error"), True
        elif call_id:
            self._open[call_id] = ev
        return ev

    def _merge(self, item: dict[str, Any]) -> bool:
        call_id = item.get("id") if isinstance(item.get("id"), str) else None
        waiting = self._open.pop(call_id, None) if call_id else None
        if waiting is None:
            return False
        waiting.result, waiting.is_error = _response(item)
        self.book.emit(waiting)
        return True


def _response(item: dict[str, Any]) -> tuple[Any, bool]:
    result = _dict(item.get("toolResult"))
    if result.get("status") == "error":
        return result.get("error"), True
    return _result_text(result.get("value")), False
