"""Crush message rows → agtail events (one row = one accounting record).

``messages.parts`` is a JSON array of ``{type, data}`` (``internal/message/content.go``):
``text{text}``, ``reasoning{thinking, signature, started_at, finished_at}``,
``tool_call{id, name, input (a JSON string), finished}``,
``tool_result{tool_call_id, name, content, metadata, is_error}``,
``finish{reason, time, message, details}``, ``image_url{url, detail}``, ``binary{Path,
MIMEType, Data}``. Roles: ``user``, ``assistant``, ``system``, ``tool`` (tool results live in
``tool`` messages and merge into their call). ``is_summary_message = 1`` marks a summary.

A real database of mid-2025 (tests/corpus/crush/dbos-transact-golang) shows ``tool`` rows that
end with a ``finish{reason: "stop"}`` part after their results (folded: it says only that the
row is complete), results whose ``name`` is empty (the call names the tool), and the edit tools'
``metadata``: ``write`` carries ``{diff, additions, removals}`` (a unified diff with the file's
own line numbers), ``edit`` ``{old_content, new_content, additions, removals}`` (the whole file
before and after).
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.model import Event

#: finish reasons → Session.ending
ENDINGS = {"canceled": "interrupted", "cancelled": "interrupted", "error": "error", "max_tokens": "limit"}


def decode_parts(raw: Any) -> list[Any] | None:
    if isinstance(raw, bytes | bytearray | memoryview):
        raw = bytes(raw).decode("utf-8", "replace")
    if not isinstance(raw, str):
        return None
    try:
        value = json_value(raw)
    except BadJson:
        return None
    return value if isinstance(value, list) else None


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json_value(value)
        except BadJson:
            return value
    return value


class RowMapper:
    """Walks one session's message rows in order; summary fields fill as it goes."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.models: list[str] = []
        self.messages = 0
        self.first_prompt: str | None = None
        self.compactions = 0
        self.finish: str | None = None
        self.finish_message: str | None = None
        self._open: dict[str, Event] = {}

    @property
    def open_calls(self) -> bool:
        return bool(self._open)

    def row(self, row: dict[str, Any], number: int) -> Category:
        parts = decode_parts(row.get("parts"))
        role = row.get("role")
        ts = from_epoch(row.get("created_at"))
        model = row.get("model") if isinstance(row.get("model"), str) and row.get("model") else None
        if parts is None:
            self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=row), number)
            return "events"
        if model and model not in self.models:
            self.models.append(model)
        if row.get("is_summary_message"):
            self.compactions += 1
            text = "\n".join(_texts(parts))
            self._emit(Event(seq=-1, kind="summary", ts=ts, role="assistant", text=text, model=model), number)
            return "events"
        if role == "tool":
            return self._tool(parts, ts, number)
        emitted = 0
        for part in parts:
            ev = self._part(part, role, ts, model)
            if ev is not None:
                self._emit(ev, number)
                emitted += 1
        if role == "user":
            self.messages += 1
            text = "\n".join(_texts(parts))
            if self.first_prompt is None and text.strip():
                self.first_prompt = text
        elif role == "assistant":
            self.messages += 1
        if not emitted:
            self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=row), number)
        return "events"

    def _emit(self, ev: Event, number: int) -> None:
        ev.source = {"row": number}
        self.book.emit(ev)

    def _part(self, part: Any, role: Any, ts: str | None, model: str | None) -> Event | None:
        if not isinstance(part, dict):
            return Event(seq=-1, kind="unknown", ts=ts, raw=part)
        kind, data = part.get("type"), part.get("data")
        data = data if isinstance(data, dict) else {}
        who = role if role in ("user", "assistant", "system") else None
        if kind == "text":
            event_kind = "system" if role == "system" else "text"
            return Event(
                seq=-1, kind=event_kind, ts=ts, role=who, text=str(data.get("text") or ""), model=model
            )
        if kind == "reasoning":
            started = from_epoch(data.get("started_at")) or ts
            return Event(
                seq=-1, kind="thinking", ts=started, role="assistant", text=str(data.get("thinking") or "")
            )
        if kind == "tool_call":
            call_id = data.get("id") if isinstance(data.get("id"), str) else None
            ev = Event(
                seq=-1,
                kind="tool_use",
                ts=ts,
                role="assistant",
                tool=data.get("name") if isinstance(data.get("name"), str) else None,
                input=_json_or_text(data.get("input")),
                model=model,
                tool_use_id=call_id,
            )
            if call_id:
                self._open[call_id] = ev
            return ev
        if kind == "finish":
            reason = data.get("reason") if isinstance(data.get("reason"), str) else None
            self.finish = reason
            message = data.get("message") if isinstance(data.get("message"), str) else None
            self.finish_message = message
            if reason in ("error", "permission_denied", "content_filter") or message:
                text = message or reason
                return Event(
                    seq=-1,
                    kind="system",
                    ts=from_epoch(data.get("time")) or ts,
                    role="system",
                    subtype=f"finish:{reason}",
                    text=text,
                    is_error=reason == "error",
                    extra={k: data[k] for k in ("details",) if k in data},
                )
            return None  # a plain end of turn: it says only how the turn ended
        if kind in ("image_url", "binary"):
            extra = {"attachment": {k: v for k, v in data.items() if k not in ("Data", "data")}}
            return Event(seq=-1, kind="text", ts=ts, role=who, text="", extra=extra)
        return Event(seq=-1, kind="unknown", ts=ts, raw=part)

    def _tool(self, parts: list[Any], ts: str | None, number: int) -> Category:
        if not parts:
            self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=[]), number)
            return "events"
        merged_all = True
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "finish":
                continue  # the row is complete; a tool row's finish says nothing more
            data = part.get("data") if isinstance(part, dict) and part.get("type") == "tool_result" else None
            if not isinstance(data, dict):
                merged_all = False
                self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=part), number)
                continue
            call_id = data.get("tool_call_id") if isinstance(data.get("tool_call_id"), str) else None
            result = data.get("content")
            is_error = bool(data.get("is_error"))
            waiting = self._open.pop(call_id, None) if call_id else None
            if waiting is not None:
                waiting.result = result
                waiting.is_error = is_error
                if data.get("metadata"):
                    waiting.extra["metadata"] = _json_or_text(data["metadata"])
                    change = _edit_of(waiting.tool, waiting.input, waiting.extra["metadata"])
                    if change is not None:
                        waiting.extra["edit"] = change
                self.book.emit(waiting)
                continue
            merged_all = False
            name = data.get("name") if isinstance(data.get("name"), str) else None
            ev = Event(
                seq=-1, kind="tool_result", ts=ts, role="user", tool=name, result=result, is_error=is_error
            )
            ev.tool_use_id = call_id
            self._emit(ev, number)
        return "merged" if merged_all else "events"


#: Crush's file-changing tools, whose result metadata records the change as a unified diff.
EDIT_TOOLS = frozenset({"edit", "write", "multiedit"})


def _edit_of(tool: Any, inp: Any, metadata: Any) -> dict[str, Any] | None:
    """An edit tool's change, in the file's own line numbers: its result's ``metadata.diff``, else
    the whole file before and after (``old_content``/``new_content``)."""
    if tool not in EDIT_TOOLS or not isinstance(metadata, dict):
        return None
    path = inp.get("file_path") if isinstance(inp, dict) and isinstance(inp.get("file_path"), str) else None
    if isinstance(metadata.get("diff"), str):
        files = edits.from_unified(metadata["diff"], path=path)
        return edits.edit_doc(list(files)) if files else None
    return edits.edit_doc(
        [edits.from_texts(path, metadata.get("old_content"), metadata.get("new_content"), start=1)]
    )


def _texts(parts: list[Any]) -> list[str]:
    out = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("data"), dict):
            text = part["data"].get("text")
            if isinstance(text, str) and text:
                out.append(text)
    return out
