"""Cortex Code's history messages → agtail events (one message = one accounting record).

A message is ``{role, id, content[], user_sent_time?}``; its blocks are ``text`` (``text``,
``internalOnly``, ``is_user_prompt``), ``tool_use`` (``tool_use{tool_use_id, name, input}``) and
``tool_result`` (``tool_result{name, tool_use_id, content[text blocks], status}``). A result comes
in the next ``user`` message and is merged into its call. Text Cortex injects (``internalOnly``,
or wrapped in ``<system-reminder>``) is a ``system`` event, never a prompt. Cortex records no
token usage and no model in its conversation files.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.model import Event

#: tool_result statuses that mean the call failed.
_FAILED = frozenset({"error", "failed", "failure", "cancelled", "canceled", "denied", "rejected"})


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _internal(block: dict[str, Any]) -> bool:
    text = block.get("text")
    return block.get("internalOnly") is True or (isinstance(text, str) and "<system-reminder>" in text)


def result_text(content: Any) -> Any:
    """A result's text blocks as one text; anything else as it is."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if texts and len(texts) == len(content):
            return "\n".join(texts)
    return content


def edit_of(tool: str | None, args: Any) -> dict[str, Any] | None:
    """``edit`` (``file_path``, ``old_string``, ``new_string``) and ``write`` (``file_path``, ``content``)."""
    if not isinstance(args, dict):
        return None
    path = args.get("file_path") or args.get("path")
    if tool == "edit":
        return edits.edit_doc([edits.from_texts(path, args.get("old_string"), args.get("new_string"))])
    if tool == "write":
        return edits.edit_doc([edits.from_texts(path, "", args.get("content"), op="create")])
    return None


class MessageMapper:
    """Walks one conversation's messages in order; the summary fields fill as it goes."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.messages = 0
        self.first_prompt: str | None = None
        self.earliest: str | None = None
        self.latest: str | None = None
        self.calls: dict[str, Event] = {}
        #: ids of the calls still without a result.
        self.open: set[str] = set()
        #: the session ends waiting: on a prompt without an answer, or a call without its result.
        self.waiting = False

    def _emit(self, ev: Event, row: int, msg: dict[str, Any]) -> Event:
        ev.source = {"row": row}
        ev.uuid = _str(msg.get("id"))
        return self.book.emit(ev)

    def message(self, msg: Any, row: int) -> Category:
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            self.book.emit(Event(seq=-1, kind="unknown", raw=msg, source={"row": row}))
            return "events"
        role = msg.get("role")
        ts = norm_iso(msg.get("user_sent_time"))
        if ts and (self.earliest is None or ts < self.earliest):
            self.earliest = ts
        if ts and (self.latest is None or ts > self.latest):
            self.latest = ts
        if role not in ("user", "assistant"):
            self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=msg), row, msg)
            return "events"
        before, merged = self.book.next_seq, False
        prompt: list[str] = []
        answer: list[str] = []
        for block in msg["content"]:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                if _internal(block):
                    self._emit(
                        Event(
                            seq=-1,
                            kind="system",
                            ts=ts,
                            role="system",
                            subtype="internal",
                            text=block["text"],
                        ),
                        row,
                        msg,
                    )
                elif block["text"].strip():
                    (prompt if role == "user" else answer).append(block["text"])
            elif kind == "tool_use" and isinstance(block.get("tool_use"), dict):
                self._flush(answer, ts, row, msg)
                self._call(block["tool_use"], ts, row, msg)
            elif kind == "tool_result" and isinstance(block.get("tool_result"), dict):
                merged = self._result(block["tool_result"], ts, row, msg) or merged
            else:
                self._flush(answer, ts, row, msg)
                self._emit(Event(seq=-1, kind="unknown", ts=ts, raw=block), row, msg)
        self._flush(answer, ts, row, msg)
        if prompt:
            text = "".join(prompt) if len(prompt) == 1 else "\n".join(prompt)
            self._emit(Event(seq=-1, kind="text", ts=ts, role="user", text=text), row, msg)
            self.messages += 1
            self.waiting = True
            if self.first_prompt is None:
                self.first_prompt = text
        if self.book.next_seq > before:
            return "events"
        return "merged" if merged else "skipped"

    def _flush(self, answer: list[str], ts: str | None, row: int, msg: dict[str, Any]) -> None:
        if not answer:
            return
        self._emit(Event(seq=-1, kind="text", ts=ts, role="assistant", text="".join(answer)), row, msg)
        answer.clear()
        self.messages += 1
        self.waiting = bool(self.open)

    def _call(self, tool_use: dict[str, Any], ts: str | None, row: int, msg: dict[str, Any]) -> None:
        name = _str(tool_use.get("name"))
        args = tool_use.get("input")
        call_id = _str(tool_use.get("tool_use_id"))
        ev = self._emit(
            Event(
                seq=-1, kind="tool_use", ts=ts, role="assistant", tool=name, input=args, tool_use_id=call_id
            ),
            row,
            msg,
        )
        edit = edit_of(name, args)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id:
            self.calls[call_id] = ev
            self.open.add(call_id)
        self.waiting = True

    def _result(self, result: dict[str, Any], ts: str | None, row: int, msg: dict[str, Any]) -> bool:
        call_id = _str(result.get("tool_use_id"))
        status = _str(result.get("status"))
        failed = status is not None and status.lower() in _FAILED
        text = result_text(result.get("content"))
        call = self.calls.get(call_id) if call_id else None
        if call is None:
            self._emit(Event(seq=-1, kind="tool_result", ts=ts, role="tool", tool=_str(result.get("name")),
                             result=text, is_error=failed, tool_use_id=call_id), row, msg)  # fmt: skip
            return False
        self.open.discard(call_id or "")
        call.result = text
        call.is_error = failed
        if status:
            call.extra["status"] = status
        if ts:
            call.extra["result_ts"] = ts
        self.book.emit(call)
        self.waiting = True  # the model answers a result
        return True
