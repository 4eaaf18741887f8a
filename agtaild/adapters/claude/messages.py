"""Claude Code ``user`` and ``assistant`` lines → text, thinking and tool events.

One API response is spread over several ``assistant`` lines sharing ``message.id`` (one
content block per line): each block becomes its own event, and the usage is counted once per
response (:mod:`agtaild.adapters.claude.usage`). Tool results arrive in a later ``user`` line: the result is
merged into its ``tool_use`` event (re-emitted under the same seq, so the index upserts it),
with the line-level ``toolUseResult`` in ``extra``; a result whose call is not in this file
becomes a ``tool_result`` event. Injected user text (commands, reminders, ``isMeta``) becomes
a ``system`` event, so titles and message counts see only what a person typed.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.claude.frames import FramedMap
from agtaild.adapters.claude.state import (
    FIRST_PROMPT_MAX,
    MAX_PENDING,
    MAX_TOOL_NAMES,
    TOOL_NAME_SPILL,
    ClaudeState,
    remember,
    storable,
)
from agtaild.adapters.claude.text import (
    command_text,
    flatten_content,
    injected_subtype,
    media_in,
    media_placeholder,
)
from agtaild.adapters.claude.usage import UsageBook
from agtaild.adapters.kit.jsonl import Category, LineParser
from agtaild.model import Event

_API_ERROR_FIELDS = ("apiErrorStatus", "error", "errorDetails")


class MessageParser(LineParser[ClaudeState]):
    """The conversation half of the Claude parser (see :class:`claude_parser.ClaudeParser`)."""

    def __init__(self, adapter: Adapter, unit: Unit, state: ClaudeState | None) -> None:
        super().__init__(adapter, unit, state)
        self.usage = UsageBook(self.st.usage)
        spill = TOOL_NAME_SPILL
        self.tool_names = FramedMap(self.st.tool_names, spill=spill, frames=MAX_TOOL_NAMES // spill)
        #: The current line's timestamp, normalised once (set by the router for every line).
        self.line_ts: str | None = None

    # -- emitting -------------------------------------------------------------------------
    def new(self, kind: str, obj: dict[str, Any], line: int, offset: int, **fields: Any) -> Event:
        """Emit a new event for this line, with its envelope (time, uuids, source, sidechain)."""
        uuid = obj.get("uuid")
        parent = obj.get("parentUuid")
        ev = Event(
            -1,
            kind,
            self.line_ts,
            uuid=uuid if uuid is None or type(uuid) is str else None,
            parent_uuid=parent if parent is None or type(parent) is str else None,
            source={"line": line, "offset": offset},
            sidechain=obj.get("isSidechain") is True,
            **fields,
        )
        if kind == "text" and ev.role in ("user", "assistant"):
            self.st.session.messages += 1
        return self.emit(ev)

    def unknown(self, obj: Any, line: int, offset: int) -> Category:
        envelope = obj if type(obj) is dict else {}
        self.new("unknown", envelope, line, offset, raw=obj)
        return "events"

    # -- assistant ------------------------------------------------------------------------
    def assistant(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            return self.unknown(obj, line, offset)
        st = self.st
        model = msg.get("model") if type(msg.get("model")) is str else None
        content = msg.get("content")
        api_error = obj.get("isApiErrorMessage") is True
        if api_error or model == "<synthetic>":
            extra = {k: obj[k] for k in _API_ERROR_FIELDS if k in obj}
            self.new("system", obj, line, offset, role="assistant", text=flatten_content(content) or None,
                     subtype="api_error" if api_error else "synthetic", extra=extra)  # fmt: skip
            st.ended_in_error = api_error
            return "events"
        if model and model not in st.session.models:
            st.session.models.append(model)
        st.interrupted = st.ended_in_error = False
        message_id = msg.get("id") if type(msg.get("id")) is str else f"line:{line}"
        st.last_assistant_id = message_id
        if msg.get("stop_reason") == "max_tokens":
            st.limit_message_id = message_id
        uuid = obj.get("uuid")
        record = self.usage.offer(obj, msg, uuid if type(uuid) is str else f"{st.session.id}:{line}", self.line_ts)
        if record is not None:
            self.add_usage(record)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif not isinstance(content, list):
            return "skipped" if content is None else self.unknown(obj, line, offset)
        added = merged = False
        for block in content:
            if type(block) is not dict:
                self.new("unknown", obj, line, offset, role="assistant", raw=block)
                added = True
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if type(text) is str and text:
                    self.new("text", obj, line, offset, role="assistant", text=text, model=model)
                    added = True
            elif btype == "thinking":
                text = block.get("thinking")
                if type(text) is str and text:
                    self.new("thinking", obj, line, offset, role="assistant", text=text, model=model)
                    added = True
            elif btype == "redacted_thinking":
                self.new("thinking", obj, line, offset, role="assistant", model=model, subtype="redacted")
                added = True
            elif btype == "tool_use" or btype == "server_tool_use" or btype == "mcp_tool_use":
                self.tool_use(block, btype, obj, line, offset, model)
                added = True
            elif type(btype) is str and btype.endswith("_tool_result"):
                if self.tool_result(block, obj, line, offset, None, role="assistant"):
                    merged = True
                else:
                    added = True
            else:
                self.new("unknown", obj, line, offset, role="assistant", raw=block)
                added = True
        return "events" if added else "merged" if merged else "skipped"

    def tool_use(self, block: dict[str, Any], btype: str, obj: dict[str, Any], line: int, offset: int,
                 model: str | None) -> None:  # fmt: skip
        tool_id = block.get("id") if type(block.get("id")) is str else None
        name = block.get("name") if type(block.get("name")) is str else None
        ev = self.new("tool_use", obj, line, offset, role="assistant", tool=name, input=block.get("input"),
                      tool_use_id=tool_id, model=model, subtype=None if btype == "tool_use" else btype)  # fmt: skip
        if tool_id is not None:
            remember(self.st.pending, tool_id, storable(ev), MAX_PENDING)
            if name:
                self.tool_names.set(tool_id, name)

    def tool_result(self, block: dict[str, Any], obj: dict[str, Any], line: int, offset: int,
                    tool_use_result: Any, role: str = "tool") -> bool:  # fmt: skip
        """Merge a result into its pending tool_use (True), or emit it on its own (False)."""
        st = self.st
        tool_id = block.get("tool_use_id") if type(block.get("tool_use_id")) is str else None
        content = block.get("content")
        text = flatten_content(content)
        is_error = block.get("is_error") is True
        media = media_in(content)
        call = st.pending.pop(tool_id, None) if tool_id is not None else None
        if call is not None:
            call.result = text
            call.is_error = is_error
            extra = call.extra
            if self.line_ts:
                extra["result_ts"] = self.line_ts
            if isinstance(obj.get("uuid"), str):
                extra["result_uuid"] = obj["uuid"]
            if media:
                extra["result_media"] = media
            if tool_use_result is not None:
                extra["tool_use_result"] = tool_use_result
                agent_id = tool_use_result.get("agentId") if isinstance(tool_use_result, dict) else None
                if type(agent_id) is str:
                    extra["agent_id"] = agent_id
                    extra["subagent"] = f"agent-{agent_id}"
            self.emit(call)
            return True
        extra = {"media": media} if media else {}
        if tool_use_result is not None:
            extra["tool_use_result"] = tool_use_result
        self.new("tool_result", obj, line, offset, role=role, result=text, is_error=is_error,
                 tool=self.tool_names.get(tool_id) if tool_id else None, tool_use_id=tool_id,
                 extra=extra)  # fmt: skip
        return False

    def note_subagent(self, agent_id: Any, tool_use_id: Any) -> Category:
        """A parent's ``agent_progress`` line: tag the spawning tool use with the subagent id."""
        if type(agent_id) is str and type(tool_use_id) is str:
            call = self.st.pending.get(tool_use_id)
            if call is not None and call.extra.get("agent_id") != agent_id:
                call.extra["agent_id"] = agent_id
                call.extra["subagent"] = f"agent-{agent_id}"
                self.emit(call)
                return "merged"
        return "skipped"

    # -- user -----------------------------------------------------------------------------
    def user(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            return self.unknown(obj, line, offset)
        content = msg.get("content")
        if obj.get("isCompactSummary") is True:
            self.st.compact_summaries += 1
            self.new("summary", obj, line, offset, role="user", text=flatten_content(content),
                     subtype="compact_summary")  # fmt: skip
            return "events"
        meta = obj.get("isMeta") is True
        if isinstance(content, str):
            return "events" if self.user_text(content, obj, line, offset, meta) else "skipped"
        if not isinstance(content, list):
            return "skipped" if content is None else self.unknown(obj, line, offset)
        tool_use_result = obj.get("toolUseResult")
        if tool_use_result is not None and len(content) > 1:  # whose result is it? only if just one
            results = [b for b in content if type(b) is dict and b.get("type") == "tool_result"]
            tool_use_result = tool_use_result if len(results) == 1 else None
        added = merged = False
        for block in content:
            btype = block.get("type") if type(block) is dict and type(block.get("type")) is str else None
            if btype == "tool_result":
                if self.tool_result(block, obj, line, offset, tool_use_result):
                    merged = True
                else:
                    added = True
            elif btype == "text":
                added = self.user_text(str(block.get("text") or ""), obj, line, offset, meta) or added
            elif btype in ("image", "document"):
                label, media = media_placeholder(block)
                self.new("text", obj, line, offset, role="user", text=label, subtype=btype, extra={"media": media})
                added = True
            else:
                self.new("unknown", obj, line, offset, role="user", raw=block)
                added = True
        return "events" if added else "merged" if merged else "skipped"

    def user_text(self, text: str, obj: dict[str, Any], line: int, offset: int, meta: bool,
                  subtype: str | None = None) -> bool:  # fmt: skip
        """A text a person typed → ``text``; injected text → ``system``. False when empty."""
        if not text.strip():
            return False
        st = self.st
        injected = "meta" if meta else injected_subtype(text)
        if injected is None:
            self.new("text", obj, line, offset, role="user", text=text, subtype=subtype)
            st.interrupted = False
            s = st.session
            if s.first_prompt is None and (st.subagent or obj.get("isSidechain") is not True):
                s.first_prompt = text[:FIRST_PROMPT_MAX]
            return True
        if injected == "command":
            text = command_text(text)
            if st.first_command is None and obj.get("isSidechain") is not True:
                st.first_command = text[:200]
        if injected == "interrupted":
            st.interrupted = True
        self.new("system", obj, line, offset, role="user", text=text, subtype=injected)
        return True

    def queued_command(self, att: dict[str, Any], obj: dict[str, Any], line: int, offset: int) -> Category:
        """Input typed while a turn ran (``attachment/queued_command``)."""
        prompt = att.get("prompt")
        text = prompt if isinstance(prompt, str) else flatten_content(prompt)
        return "events" if self.user_text(text, obj, line, offset, False, subtype="queued") else "metadata"
