"""OpenHands event files (software-agent-sdk ``Event`` subclasses, one JSON file each) → events.

Every event has ``kind``, ``id``, ``timestamp`` (naive ISO, taken as UTC) and ``source``
(user / agent / environment). Mapped here:

* ``SystemPromptEvent`` → metadata (the system prompt and tool specs).
* ``MessageEvent`` → ``text`` (user or assistant), its ``reasoning_content`` and
  ``thinking_blocks`` → ``thinking``.
* ``ActionEvent`` → ``thought`` text and ``reasoning_content`` first, then the call: a
  ``tool_use`` (tool = ``tool_name``, input = the ``action`` without its ``kind``); a
  ``FinishAction`` is the turn's answer (assistant ``text``, subtype ``finish``), a
  ``ThinkAction`` a ``thinking``.
* ``ObservationEvent`` (and ``UserRejectObservation``, ``AgentErrorEvent`` for a call) →
  merged into its call by ``tool_call_id`` (``is_error`` = the observation's ``is_error`` or a
  non-zero ``exit_code``).
* ``ConversationErrorEvent`` / ``AgentErrorEvent`` without a call → ``system`` error.
* ``Condensation*`` → ``summary`` (a compaction); ``PauseEvent`` → ``system``.
* Anything else → ``unknown`` with the raw JSON.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import sub
from agtaild.model import Event


def content_text(content: Any) -> str:
    """The text of an OpenHands ``content`` list (``TextContent`` items), or a plain string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
    return ""


class EventWalk:
    """Feeds one conversation's event files, in order, into a RecordBook."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.calls: dict[str, Event] = {}
        self.first_prompt: str | None = None
        self.messages = 0
        self.error = False
        self.paused = False
        self.open_call = False
        self.task_calls: list[Event] = []
        self.last_ts: str | None = None
        self._ts: str | None = None

    def _emit(self, kind: str, obj: dict[str, Any], number: int, **kw: Any) -> Event:
        ev = Event(seq=-1, kind=kind, ts=self._ts, uuid=_str(obj, "id"),
                   source={"file": number}, **kw)
        return self.book.emit(ev)

    def feed(self, number: int, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.book.bad(number)
            return
        kind = obj.get("kind")
        ts = self._ts = norm_iso(obj.get("timestamp"))  # every event emitted for obj has its time
        if ts:
            self.last_ts = ts
        if kind == "SystemPromptEvent":
            self.book.count("metadata")
        elif kind == "MessageEvent":
            self._message(obj, number)
        elif kind == "ActionEvent":
            self._action(obj, number)
        elif kind in ("ObservationEvent", "UserRejectObservation") or (
            kind == "AgentErrorEvent" and _str(obj, "tool_call_id") in self.calls
        ):
            self._observation(obj, number, kind)
        elif kind in ("ConversationErrorEvent", "AgentErrorEvent"):
            self.error = True
            text = _str(obj, "detail") or _str(obj, "error") or _str(obj, "code") or kind
            self._emit("system", obj, number, role="system", text=text, is_error=True, subtype=_str(obj, "code") or kind)
            self.book.count("events")
        elif isinstance(kind, str) and kind.startswith("Condensation"):
            summary = _str(obj, "summary") or content_text(obj.get("content"))
            self._emit("summary", obj, number, role="system", text=summary, subtype=kind)
            if kind != "CondensationRequest":
                self.book.session.compactions += 1
            self.book.count("events")
        elif kind == "PauseEvent":
            self.paused = True
            self._emit("system", obj, number, role="system", text="paused", subtype=kind)
            self.book.count("events")
        else:
            self._emit("unknown", obj, number, raw=obj, subtype=kind if isinstance(kind, str) else None)
            self.book.count("events")

    def _message(self, obj: dict[str, Any], number: int) -> None:
        msg = sub(obj, "llm_message")
        role = "user" if obj.get("source") == "user" else "assistant"
        self._thinking(msg, obj, number)
        text = content_text(msg.get("content"))
        extended = content_text(obj.get("extended_content"))
        if role == "user":
            self.first_prompt = self.first_prompt or text
        self._emit("text", obj, number, role=role, text=text,
                   extra={"extended_content": extended} if extended else {})
        self.messages += 1
        self.book.count("events")

    def _thinking(self, holder: dict[str, Any], obj: dict[str, Any], number: int) -> None:
        reasoning = holder.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self._emit("thinking", obj, number, role="assistant", text=reasoning)
        blocks = holder.get("thinking_blocks")
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, dict):
                text = block.get("thinking") or block.get("data") or ""
                self._emit("thinking", obj, number, role="assistant", text=str(text),
                           extra={"redacted": True} if block.get("type") == "redacted_thinking" else {})

    def _action(self, obj: dict[str, Any], number: int) -> None:
        self._thinking(obj, obj, number)
        thought = content_text(obj.get("thought"))
        if thought:
            self._emit("text", obj, number, role="assistant", text=thought)
            self.messages += 1
        action = sub(obj, "action")
        akind = action.get("kind")
        call_id = _str(obj, "tool_call_id")
        if akind == "FinishAction":
            ev = self._emit("text", obj, number, role="assistant", text=_str(action, "message") or "",
                            subtype="finish", tool_use_id=call_id)
            self.messages += 1
        elif akind == "ThinkAction":
            ev = self._emit("thinking", obj, number, role="assistant", text=_str(action, "thought") or "",
                            tool_use_id=call_id)
        else:
            args = {k: v for k, v in action.items() if k != "kind"}
            ev = self._emit("tool_use", obj, number, role="assistant", tool=_str(obj, "tool_name") or str(akind or ""),
                            input=args, tool_use_id=call_id,
                            extra={"action": akind, "summary": obj.get("summary")} if akind else {})
            self.open_call = True
            if akind == "TaskAction":
                self.task_calls.append(ev)
        if call_id:
            self.calls[call_id] = ev
        self.book.count("events")

    def _observation(self, obj: dict[str, Any], number: int, kind: str) -> None:
        obs = sub(obj, "observation")
        call = self.calls.get(_str(obj, "tool_call_id") or "")
        text = content_text(obs.get("content")) or _str(obj, "rejection_reason") or _str(obj, "error") or ""
        exit_code = obs.get("exit_code")
        failed = bool(obs.get("is_error")) or kind != "ObservationEvent"
        if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code not in (0, -1):
            failed = True
        self.open_call = False
        if call is None:
            self._emit("tool_result", obj, number, role="tool", tool=_str(obj, "tool_name"), result=text,
                       is_error=failed, tool_use_id=_str(obj, "tool_call_id"))
            self.book.count("events")
            return
        if call.kind == "tool_use":
            call.result = text
            call.is_error = failed
            if isinstance(exit_code, int):
                call.extra["exit_code"] = exit_code
            if obs.get("kind") == "TaskObservation":
                call.extra.update({k: obs[k] for k in ("task_id", "subagent", "status") if k in obs})
        self.book.count("merged")


def _str(d: dict[str, Any], key: str) -> str | None:
    value = d.get(key)
    return value if isinstance(value, str) and value else None
