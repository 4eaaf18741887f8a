"""Qwen Code's JSONL chat records → agtail events.

Qwen Code (a Gemini CLI fork) writes ``projects/<cwd-slug>/chats/<sessionId>.jsonl``: a
Claude-Code-like envelope on every line (``uuid``, ``parentUuid``, ``sessionId``,
``timestamp``, ``type``, ``cwd``, ``version``, ``gitBranch``) around a Gemini ``Content``
body (``message.parts`` with ``text``, ``thought``, ``functionCall``, ``functionResponse``;
the part helpers are shared with the Gemini reader, :mod:`agtaild.adapters.gemini.messages`).

Record types: ``user`` (a prompt; ``subtype: notification`` is a background notice),
``assistant`` (``model``, ``usageMetadata``), ``tool_result`` (the response parts plus
``toolCallResult{callId, status, resultDisplay, error, errorType}``), and ``system`` with a
``subtype``: ``attribution_snapshot`` (bookkeeping), ``ui_telemetry`` (``qwen-code.api_response``
/ ``tool_call`` / ``api_error``), ``chat_compression`` and ``slash_command``.

A subagent (the ``agent`` tool) has no transcript of its own: its model calls and tool calls
exist only as telemetry records in the parent file (their ``prompt_id`` is
``<sessionId>#<subagent>-<rand>#<n>`` and they name ``subagent_name``). Those become
``sidechain`` events, and their token counts usage records — nothing else records that spend.
The main agent's telemetry repeats what the assistant and tool_result records already say,
so it is bookkeeping (``metadata``).
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.gemini.messages import parts_of, plain_text, response_result
from agtaild.adapters.kit.jsonl import Category, LineParser
from agtaild.adapters.kit.stamps import widen
from agtaild.adapters.qwen.records import (
    QwenState,
    as_dict,
    as_str,
    compressed_summary,
    is_hook_part,
    payload_text,
    result_extra,
    stamp,
    usage_metadata,
)
from agtaild.adapters.qwen.telemetry import telemetry
from agtaild.model import Event, Session, Usage, UsageRecord, project_of

#: Tool calls waiting for their result that the state keeps (the oldest are dropped).
MAX_PENDING = 500
#: The first prompt is kept whole up to this many characters.
FIRST_PROMPT_MAX = 10_000
TITLE_MAX = 200
#: System subtypes that are bookkeeping only.
_METADATA_SUBTYPES = frozenset({"attribution_snapshot"})
_COMPACTION_SUBTYPES = frozenset({"chat_compression", "compression"})


class QwenParser(LineParser[QwenState]):
    State = QwenState

    def new_state(self) -> QwenState:
        sid = self.unit.path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        return QwenState(session=Session(agent=self.adapter.id, id=sid, path=self.unit.path))

    # -- dispatch -----------------------------------------------------------------------
    def record(self, obj: Any, line: int, offset: int) -> Category:
        self.ts: str | None = None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            self.emit(Event(seq=-1, kind="unknown", raw=obj, source={"line": line}))
            return "events"
        self._envelope(obj)
        kind = obj["type"]
        if kind == "user":
            return self._user(obj, line)
        if kind == "assistant":
            return self._assistant(obj, line)
        if kind == "tool_result":
            return self._tool_result(obj, line)
        if kind == "system":
            return self._system(obj, line)
        self.emit(self.event(obj, line, "unknown", raw=obj))
        return "events"

    def _envelope(self, obj: dict[str, Any]) -> None:
        s = self.st.session
        if s.accounting.lines == 0 and as_str(obj.get("sessionId")):
            s.id = obj["sessionId"]
        s.cwd = as_str(obj.get("cwd")) or s.cwd
        s.git_branch = as_str(obj.get("gitBranch")) or s.git_branch
        s.version = as_str(obj.get("version")) or s.version
        self.ts = stamp(obj.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, self.ts)

    def event(self, obj: dict[str, Any], line: int, kind: str, **fields: Any) -> Event:
        fields.setdefault("ts", self.ts)
        return Event(
            seq=-1,
            kind=kind,
            uuid=as_str(obj.get("uuid")),
            parent_uuid=as_str(obj.get("parentUuid")),
            source={"line": line},
            **fields,
        )

    # -- records ------------------------------------------------------------------------
    def _user(self, obj: dict[str, Any], line: int) -> Category:
        msg = as_dict(obj.get("message"))
        parts = parts_of(msg.get("parts"))
        if obj.get("subtype") == "notification":
            self.emit(
                self.event(obj, line, "system", role="system", subtype="notification", text=plain_text(parts))
            )
            return "events"
        typed = [p for p in parts if not is_hook_part(p)]
        text = plain_text(typed)
        emitted = False
        if text:
            self.emit(self.event(obj, line, "text", role="user", text=text))
            self._prompt(text)
            emitted = True
        for part in parts:
            if is_hook_part(part):
                hook_text = part["text"]
                self.emit(
                    self.event(obj, line, "hook", role="system", subtype="prompt_context", text=hook_text)
                )
                emitted = True
        responses = self._responses(obj, line, parts)
        if responses is None and not emitted:
            return "merged"  # only results of waiting tool calls
        if not (emitted or responses):
            self.emit(self.event(obj, line, "unknown", raw=obj))
        return "events"

    def _prompt(self, text: str) -> None:
        st, s = self.st, self.st.session
        st.prompts += 1
        st.last = "prompt"
        if s.first_prompt is None:
            s.first_prompt = text[:FIRST_PROMPT_MAX]
            first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            s.title = first_line[:TITLE_MAX] or None

    def _assistant(self, obj: dict[str, Any], line: int) -> Category:
        st = self.st
        msg = as_dict(obj.get("message"))
        parts = parts_of(msg.get("parts"))
        model = as_str(obj.get("model"))
        if model and model not in st.models:
            st.models.append(model)
        out: list[Event] = []
        thinking = plain_text(parts, thoughts=True)
        if thinking:
            out.append(self.event(obj, line, "thinking", role="assistant", text=thinking, model=model))
        text = plain_text(parts)
        if text:
            out.append(self.event(obj, line, "text", role="assistant", text=text, model=model))
        calls = 0
        for part in parts:
            fc = part.get("functionCall") if isinstance(part, dict) else None
            if not isinstance(fc, dict):
                continue
            calls += 1
            ev = self.event(
                obj,
                line,
                "tool_use",
                role="assistant",
                tool=as_str(fc.get("name")),
                input=fc.get("args"),
                model=model,
                tool_use_id=as_str(fc.get("id")),
            )
            out.append(ev)
        usage = usage_metadata(obj.get("usageMetadata"))
        if usage is not None and out:
            primary = next((e for e in out if e.kind == "text"), out[0])
            primary.usage = usage
        if not out:
            out.append(self.event(obj, line, "unknown", raw=obj))
        for ev in out:
            self.emit(ev)
            if ev.kind == "tool_use" and ev.tool_use_id:
                self._wait(ev)
        key = as_str(obj.get("uuid"))
        if usage is not None and key:
            self.count_usage(key, self.ts, model, usage)
        st.replies += 1
        st.last = "calls" if calls else "reply"
        return "events"

    def _wait(self, ev: Event) -> None:
        pending = self.st.pending
        assert ev.tool_use_id is not None
        pending[ev.tool_use_id] = ev
        while len(pending) > MAX_PENDING:
            del pending[next(iter(pending))]

    def _tool_result(self, obj: dict[str, Any], line: int) -> Category:
        msg = as_dict(obj.get("message"))
        parts = parts_of(msg.get("parts"))
        merged = self._responses(obj, line, parts)
        self.st.last = "result" if not self.st.pending else "calls"
        if merged is None:
            return "merged"
        if not merged:
            self.emit(self.event(obj, line, "unknown", raw=obj))
        return "events"

    def _responses(self, obj: dict[str, Any], line: int, parts: list[Any]) -> bool | None:
        """Merge each functionResponse into its waiting tool_use (re-emitted), or emit it as
        a tool_result. None when every response was merged (the line is then ``merged``),
        else whether anything was emitted."""
        call_result = as_dict(obj.get("toolCallResult"))
        responses = [
            p["functionResponse"]
            for p in parts
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
        ]
        if not responses:
            return False
        all_merged = True
        for resp in responses:
            call_id = as_str(resp.get("id")) or as_str(call_result.get("callId"))
            result, is_error = response_result(resp)
            if call_result.get("callId") == call_id and call_result.get("status") == "error":
                is_error = True
            extra = result_extra(call_result) if call_result.get("callId") == call_id else {}
            waiting = self.st.pending.pop(call_id, None) if call_id else None
            if waiting is not None:
                waiting.result = result
                waiting.is_error = is_error
                waiting.extra.update(extra)
                self.emit(waiting)
                continue
            all_merged = False
            self.emit(
                self.event(
                    obj,
                    line,
                    "tool_result",
                    role="user",
                    tool=as_str(resp.get("name")),
                    result=result,
                    is_error=is_error,
                    tool_use_id=call_id,
                    extra=extra,
                )
            )
        return None if all_merged else True

    def _system(self, obj: dict[str, Any], line: int) -> Category:
        subtype = as_str(obj.get("subtype"))
        payload = as_dict(obj.get("systemPayload"))
        if subtype in _METADATA_SUBTYPES:
            return "metadata"
        if subtype == "ui_telemetry":
            return telemetry(self, obj, line, payload)
        if subtype == "custom_title":  # /rename or an auto title; re-appended, the last wins
            title = as_str(payload.get("customTitle"))
            if title:
                self.st.custom_title = title
            return "metadata"
        if subtype in _COMPACTION_SUBTYPES:
            # {info: {originalTokenCount, newTokenCount, …}, compressedHistory: [Content]}
            self.st.session.compactions += 1
            info = as_dict(payload.get("info"))
            text = compressed_summary(payload.get("compressedHistory")) or payload_text(payload)
            self.emit(
                self.event(obj, line, "summary", role="system", subtype=as_str(subtype), text=text, raw=info)
            )
            return "events"
        if subtype == "slash_command":  # {phase, rawCommand, outputHistoryItems}
            extra = {k: payload[k] for k in ("phase",) if k in payload}
            text = payload_text(payload)
            self.emit(
                self.event(
                    obj,
                    line,
                    "system",
                    role="user",
                    subtype="slash_command",
                    text=text,
                    raw=payload,
                    extra=extra,
                )
            )
            return "events"
        if subtype == "at_command":  # {filesRead, status, message, userText}
            files: list[Any] = payload["filesRead"] if isinstance(payload.get("filesRead"), list) else []
            failed = payload.get("status") == "error"
            text = as_str(payload.get("message")) if failed else None
            text = text or "@ read: " + ", ".join(str(f) for f in files)
            self.emit(
                self.event(
                    obj,
                    line,
                    "system",
                    role="user",
                    subtype="at_command",
                    text=text,
                    is_error=failed or None,
                    raw=payload,
                )
            )
            return "events"
        if subtype == "rewind":  # {truncatedCount}: the turns after the target were dropped
            extra = {k: payload[k] for k in ("truncatedCount",) if k in payload}
            self.emit(
                self.event(obj, line, "system", role="system", subtype="rewind", text="rewind", extra=extra)
            )
            return "events"
        self.emit(self.event(obj, line, "unknown", subtype=subtype, raw=obj))
        return "events"

    def count_usage(self, key: str, ts: str | None, model: str | None, usage: Usage) -> None:
        st = self.st
        self.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))
        if key not in st.usage_keys:
            st.usage_keys.add(key)
            st.usage_total.add(usage)

    # -- summary ------------------------------------------------------------------------
    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        s.models = list(st.models)
        s.usage = Usage(
            input_tokens=st.usage_total.input_tokens,
            output_tokens=st.usage_total.output_tokens,
            cache_read_tokens=st.usage_total.cache_read_tokens,
            cache_write_tokens=st.usage_total.cache_write_tokens,
            reasoning_tokens=st.usage_total.reasoning_tokens,
        ).fix_total()
        s.messages = st.prompts + st.replies
        if st.custom_title:
            s.title = st.custom_title
        s.project = project_of(s.cwd)
        s.ending = None
        if st.last == "error":
            s.ending = "error"
        elif settled and st.last in ("prompt", "calls", "result"):
            s.ending = "interrupted"
        if st.subagent_calls:
            s.extra["subagent_tool_calls"] = st.subagent_calls
        return s
