"""One Zed agent thread (the decoded ``threads.data`` JSON) → events and usage.

Zed's ``DbThread`` (``crates/agent/src/db.rs``, ``version: "0.3.0"``) serialises its messages
with serde's external tagging: ``{"User": {id, content: [{"Text": s} | {"Mention": {uri,
content}} | {"Image": …}]}}``, ``{"Agent": {content: [{"Text": s} | {"Thinking": {text,
signature}} | {"RedactedThinking": s} | {"ToolUse": {id, name, raw_input, input, …}}],
tool_results: {<tool use id>: {tool_use_id, tool_name, is_error, content, output}}}}`` and the
bare string ``"Resume"``. Token usage is kept per user message (``request_token_usage``:
``{<user message id>: {input_tokens, output_tokens, cache_creation_input_tokens,
cache_read_input_tokens}}``) and in total (``cumulative_token_usage``).

A thread without ``version`` is the first agent's ``SerializedThread`` (Zed upgrades it on
load): ``messages[{role, segments[{type: text|thinking|redacted_thinking, text}], tool_uses,
tool_results, context}]`` with ``request_token_usage`` a list by message index. Both shapes
are read here. Messages carry no time of their own.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.values import num, sub
from agtaild.model import Event, Usage, UsageRecord


def usage_of(u: Any) -> Usage:
    return Usage(
        input_tokens=num(u, "input_tokens"),
        output_tokens=num(u, "output_tokens"),
        cache_read_tokens=num(u, "cache_read_input_tokens"),
        cache_write_tokens=num(u, "cache_creation_input_tokens"),
    ).fix_total()


def _text(value: Any) -> str:
    """Tool-result content in any of its serialised forms (string, {"Text": s}, lists)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, dict):
        for key in ("Text", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return ""


class ThreadWalk:
    def __init__(self, book: RecordBook, model: str | None) -> None:
        self.book = book
        self.model = model
        self.first_prompt: str | None = None
        self.messages = 0
        self.user_ids: list[str] = []

    def _emit(self, kind: str, number: int, **kw: Any) -> Event:
        return self.book.emit(Event(seq=-1, kind=kind, source={"message": number}, **kw))

    def walk(self, doc: dict[str, Any]) -> None:
        legacy = not isinstance(doc.get("version"), str)
        messages = doc.get("messages")
        for number, msg in enumerate(messages if isinstance(messages, list) else [], start=1):
            if legacy:
                self._legacy(number, msg)
            else:
                self._current(number, msg)

    # -- DbThread 0.3 --------------------------------------------------------------------
    def _current(self, number: int, msg: Any) -> None:
        if msg == "Resume":
            self._emit("system", number, role="system", text="resumed", subtype="resume")
            self.book.count("events")
            return
        if isinstance(msg, dict) and isinstance(msg.get("User"), dict):
            user = msg["User"]
            if isinstance(user.get("id"), str):
                self.user_ids.append(user["id"])
            parts = [self._user_part(p) for p in user.get("content") or [] if isinstance(user.get("content"), list)]
            self._user_text("\n".join(p for p in parts if p), number, user.get("id"))
            return
        if isinstance(msg, dict) and isinstance(msg.get("Agent"), dict):
            agent = msg["Agent"]
            results = agent.get("tool_results") if isinstance(agent.get("tool_results"), dict) else {}
            content = agent.get("content")
            for part in content if isinstance(content, list) else []:
                self._agent_part(part, results, number)
            self.book.count("events")
            return
        self._emit("unknown", number, raw=msg)
        self.book.count("events")

    @staticmethod
    def _user_part(part: Any) -> str:
        if isinstance(part, dict):
            if isinstance(part.get("Text"), str):
                return str(part["Text"])
            mention = part.get("Mention")
            if isinstance(mention, dict):
                return f"@{mention.get('uri')}" if not isinstance(mention.get("content"), str) else str(mention["content"])
        return ""

    def _user_text(self, text: str, number: int, uid: Any) -> None:
        self.first_prompt = self.first_prompt or text
        self._emit("text", number, role="user", text=text, uuid=uid if isinstance(uid, str) else None)
        self.messages += 1
        self.book.count("events")

    def _agent_part(self, part: Any, results: dict[str, Any], number: int) -> None:
        if not isinstance(part, dict):
            self._emit("unknown", number, raw=part)
            return
        if isinstance(part.get("Text"), str):
            self._emit("text", number, role="assistant", text=part["Text"], model=self.model)
            self.messages += 1
        elif isinstance(part.get("Thinking"), dict):
            self._emit("thinking", number, role="assistant", text=str(part["Thinking"].get("text") or ""),
                       model=self.model)
        elif "RedactedThinking" in part:
            self._emit("thinking", number, role="assistant", text="", model=self.model, extra={"redacted": True})
        elif isinstance(part.get("ToolUse"), dict):
            use = part["ToolUse"]
            call_id = use.get("id") if isinstance(use.get("id"), str) else None
            result = results.get(call_id) if call_id else None
            ev = self._emit("tool_use", number, role="assistant", tool=str(use.get("name") or ""),
                            input=use.get("input", use.get("raw_input")), model=self.model, tool_use_id=call_id)
            if isinstance(result, dict):
                ev.result = _text(result.get("content")) or _text(result.get("output"))
                ev.is_error = bool(result.get("is_error"))
        else:
            self._emit("unknown", number, raw=part)

    # -- the first agent's SerializedThread ----------------------------------------------
    def _legacy(self, number: int, msg: Any) -> None:
        if not isinstance(msg, dict):
            self._emit("unknown", number, raw=msg)
            self.book.count("events")
            return
        role = msg.get("role")
        raw_segments = msg.get("segments")
        segments: list[Any] = raw_segments if isinstance(raw_segments, list) else []
        if role == "user":
            text = "\n".join(str(s.get("text") or "") for s in segments if isinstance(s, dict)) or str(msg.get("context") or "")
            self._user_text(text, number, None)
            return
        if role != "assistant":
            self.book.count("skipped" if role == "system" else "events")
            if role != "system":
                self._emit("unknown", number, raw=msg)
            return
        for seg in segments:
            if not isinstance(seg, dict):
                continue
            if seg.get("type") == "text":
                self._emit("text", number, role="assistant", text=str(seg.get("text") or ""), model=self.model)
                self.messages += 1
            elif seg.get("type") in ("thinking", "redacted_thinking"):
                self._emit("thinking", number, role="assistant", text=str(seg.get("text") or ""), model=self.model)
        listed = msg.get("tool_results")
        results = {r.get("tool_use_id"): r for r in listed if isinstance(r, dict)} if isinstance(listed, list) else {}
        uses = msg.get("tool_uses")
        for use in uses if isinstance(uses, list) else []:
            if not isinstance(use, dict):
                continue
            ev = self._emit("tool_use", number, role="assistant", tool=str(use.get("name") or ""),
                            input=use.get("input"), model=self.model, tool_use_id=use.get("id") if isinstance(use.get("id"), str) else None)
            result = results.get(use.get("id"))
            if result is not None:
                ev.result = _text(result.get("content")) or _text(result.get("output"))
                ev.is_error = bool(result.get("is_error"))
        self.book.count("events")


def usage_records(doc: dict[str, Any], model: str | None) -> list[UsageRecord]:
    """One record per request: the per-user-message map (0.3) or the per-index list (legacy)."""
    per = doc.get("request_token_usage")
    out: list[UsageRecord] = []
    if isinstance(per, dict):
        items: list[tuple[str, Any]] = [(str(k), v) for k, v in per.items()]
    elif isinstance(per, list):
        items = [(str(i), v) for i, v in enumerate(per)]
    else:
        items = []
    for key, u in items:
        if isinstance(u, dict):
            usage = usage_of(u)
            if not usage.is_zero():
                out.append(UsageRecord(key=f"request:{key}", ts=None, model=model, usage=usage))
    return out


def model_of(doc: dict[str, Any]) -> str | None:
    model = sub(doc, "model").get("model")
    return model if isinstance(model, str) and model else None
