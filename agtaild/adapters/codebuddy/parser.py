"""CodeBuddy Code's session lines → events and usage (recorded from 2.163.0).

Every line carries ``type``, ``timestamp`` (epoch ms), ``sessionId``, ``cwd`` and, for model
output, ``providerData`` (``model``, ``messageId`` of the model request, ``usage``):

* ``message`` ``user`` (``content`` ``input_text`` blocks) / ``assistant`` (``output_text``)
  → ``text``; an assistant message with ``status: incomplete`` and ``providerData.error`` is
  the API's error → ``system`` ``error``;
* ``reasoning`` (``rawContent`` ``reasoning_text``) → ``thinking``;
* ``function_call`` (``callId``, ``name``, ``arguments`` as JSON text) → ``tool_use``; its
  ``function_call_result`` (``output``, ``status``, ``providerData.toolResult``) is merged:
  ``is_error`` for a status other than ``completed`` or a Bash ``Exit Code`` ≠ 0, a subagent's
  id (``toolResult.subAgent.sessionId``) as ``extra.subagent``; ``Write`` → ``extra.edit``;
* ``topic`` → the title; ``file-history-snapshot`` and ``session-meta`` → metadata;
  anything else → ``unknown``.

Usage: one record per model request (``providerData.messageId``), from the first line of that
request that carries ``providerData.usage`` (``inputTokens`` includes the cached part).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch_ms, norm_iso, widen
from agtaild.adapters.kit.values import num, sub, title_from_prompt
from agtaild.model import Event, Session, Usage, UsageRecord, project_of

MAX_PENDING = 500
#: Requests already counted that the state remembers (the oldest are forgotten).
MAX_SEEN = 4096
_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)
_METADATA = frozenset({"file-history-snapshot", "session-meta"})


class CodeBuddyState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    counted: list[str] = msgspec.field(default_factory=list)
    topic: str | None = None
    #: "prompt" / "call" while the session waits on the model or a tool, "error", or None.
    last: str | None = None


def _blocks_text(content: Any, kinds: tuple[str, ...]) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") in kinds and isinstance(b.get("text"), str)]
    return "\n".join(parts) if parts else None


class CodeBuddyParser(LineParser[CodeBuddyState]):
    State = CodeBuddyState

    def new_state(self) -> CodeBuddyState:
        return CodeBuddyState(session=Session(agent="codebuddy", id=Path(self.unit.path).stem, path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, None, obj, "unknown", raw=obj)
            return "events"
        s = self.st.session
        stamp = obj.get("timestamp")
        ts = norm_iso(stamp) if isinstance(stamp, str) else from_epoch_ms(stamp)
        s.started, s.ended = widen(s.started, s.ended, ts)
        if s.cwd is None and isinstance(obj.get("cwd"), str) and obj["cwd"]:
            s.cwd = obj["cwd"]
            s.project = project_of(s.cwd)
        kind = obj.get("type")
        provider = sub(obj, "providerData")
        self._count_usage(provider, ts)
        if kind == "message":
            return self._message(obj, provider, line, ts)
        if kind == "reasoning":
            text = _blocks_text(obj.get("rawContent"), ("reasoning_text",)) or _blocks_text(obj.get("content"), ("reasoning_text", "output_text"))
            if text:
                self._event(line, ts, obj, "thinking", role="assistant", text=text, model=_str(provider.get("model")))
                return "events"
            return "skipped"
        if kind == "function_call":
            self._call(obj, provider, line, ts)
            return "events"
        if kind == "function_call_result":
            return self._result(obj, provider, line, ts)
        if kind == "topic":
            topic = obj.get("topic") or obj.get("title") or _blocks_text(obj.get("content"), ("output_text", "input_text", "text"))
            if isinstance(topic, str) and topic.strip():
                self.st.topic = topic.strip()
            return "metadata"
        if kind in _METADATA:
            if kind == "session-meta" and isinstance(obj.get("meta"), dict):
                s.extra["meta"] = obj["meta"]
            return "metadata"
        self._event(line, ts, obj, "unknown", raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, obj: Any, kind: str, **fields: Any) -> Event:
        uuid = obj.get("id") if isinstance(obj, dict) and isinstance(obj.get("id"), str) else None
        parent = obj.get("parentId") if isinstance(obj, dict) and isinstance(obj.get("parentId"), str) else None
        return self.emit(Event(seq=-1, kind=kind, ts=ts, uuid=uuid, parent_uuid=parent, source={"line": line}, **fields))

    def _message(self, obj: dict[str, Any], provider: dict[str, Any], line: int, ts: str | None) -> Category:
        st, s = self.st, self.st.session
        role = obj.get("role")
        text = _blocks_text(obj.get("content"), ("input_text", "output_text", "text"))
        model = _str(provider.get("model"))
        if role == "assistant" and obj.get("status") == "incomplete" and isinstance(provider.get("error"), dict):
            error = provider["error"]
            self._event(line, ts, obj, "system", role="assistant", text=text or _str(error.get("message")),
                        subtype="error", is_error=True, extra={"error": error})  # fmt: skip
            st.last = "error"
            return "events"
        if role not in ("user", "assistant"):
            self._event(line, ts, obj, "unknown", raw=obj)
            return "events"
        self._event(line, ts, obj, "text", role=role, text=text, model=model)
        s.messages += 1
        if model and model not in s.models:
            s.models.append(model)
        if role == "user":
            st.last = "prompt"
            if s.first_prompt is None and text:
                s.first_prompt = text
        else:
            st.last = None if not st.pending else "call"
        return "events"

    def _call(self, obj: dict[str, Any], provider: dict[str, Any], line: int, ts: str | None) -> None:
        st = self.st
        raw = obj.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError):
            args = raw
        call_id = _str(obj.get("callId"))
        ev = self._event(line, ts, obj, "tool_use", role="assistant", tool=_str(obj.get("name")), input=args,
                         tool_use_id=call_id, model=_str(provider.get("model")))  # fmt: skip
        if ev.tool == "Write" and isinstance(args, dict) and isinstance(args.get("content"), str):
            edit = edits.edit_doc([edits.from_texts(args.get("file_path"), "", args["content"], op="create")])
            if edit is not None:
                ev.extra["edit"] = edit
        if call_id:
            st.pending[call_id] = ev
            if len(st.pending) > MAX_PENDING:
                del st.pending[next(iter(st.pending))]
        st.last = "call"

    def _result(self, obj: dict[str, Any], provider: dict[str, Any], line: int, ts: str | None) -> Category:
        st = self.st
        output = obj.get("output")
        text = output.get("text") if isinstance(output, dict) else output
        text = text if isinstance(text, str) else (json.dumps(output) if output is not None else None)
        call_id = _str(obj.get("callId"))
        call = st.pending.pop(call_id, None) if call_id else None
        target = call or self._event(line, ts, obj, "tool_result", role="tool", tool=_str(obj.get("name")), tool_use_id=call_id)
        target.result = text
        status = obj.get("status")
        found = _EXIT.search(text) if text and "Exit Code:" in text else None
        code = int(found.group(1)) if found else None
        target.is_error = (isinstance(status, str) and status != "completed") or (code is not None and code != 0)
        if code is not None:
            target.extra["exit_code"] = code
        tool_result = sub(provider, "toolResult")
        child = sub(tool_result, "subAgent").get("sessionId")
        if isinstance(child, str) and child:
            target.extra["subagent"] = child
        if ts:
            target.extra["result_ts"] = ts
        st.last = "call" if st.pending else None
        if call is None:
            return "events"
        self.emit(call)
        return "merged"

    def _count_usage(self, provider: dict[str, Any], ts: str | None) -> None:
        usage_doc = provider.get("usage")
        key = provider.get("messageId")
        if not isinstance(usage_doc, dict) or not isinstance(key, str) or key in self.st.counted:
            return
        details = usage_doc.get("inputTokensDetails")
        cached = num(details[0], "cached_tokens") if isinstance(details, list) and details else 0
        out_details = usage_doc.get("outputTokensDetails")
        reasoning = num(out_details[0], "reasoning_tokens") if isinstance(out_details, list) and out_details else 0
        usage = Usage(
            input_tokens=max(num(usage_doc, "inputTokens") - cached, 0),
            output_tokens=num(usage_doc, "outputTokens"),
            cache_read_tokens=cached,
            reasoning_tokens=reasoning,
        ).fix_total()
        self.st.counted = [*self.st.counted, key][-MAX_SEEN:]
        if usage.is_zero():
            return
        self.st.session.usage.add(usage)
        self.add_usage(UsageRecord(key=key, ts=ts, model=_str(provider.get("model")), usage=usage))

    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        s.title = st.topic or title_from_prompt(s.first_prompt)
        s.ending = "error" if st.last == "error" else None
        s.extra["waiting"] = st.last in ("prompt", "call")
        return s


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
