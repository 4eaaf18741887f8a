"""The line parser for Cursor's agent transcripts (``projects/<slug>/agent-transcripts/``).

Each line is ``{"role": "user"|"assistant", "message": {"content": [blocks]}}`` with
Anthropic-style blocks (``text``, ``tool_use``, sometimes ``thinking``/``tool_result``); status
lines such as ``{"type": "turn_ended", "status": …}`` sit between them. There are no ids, no
timestamps and (in the files seen) no tool results. User text is wrapped in
``<user_query>…</user_query>``, sometimes after a ``<timestamp>…</timestamp>`` line: the query
is what the event shows; the wrapper stays in ``extra.raw_text``.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.model import Event, Session

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)


class CursorTranscriptState(ParserState):
    last_status: str | None = None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def user_query(text: str) -> str:
    """The user's own words inside Cursor's ``<user_query>`` wrapper (the text if none)."""
    found = _QUERY.search(text)
    return found.group(1) if found else text


class CursorTranscriptParser(LineParser[CursorTranscriptState]):
    State = CursorTranscriptState

    def new_state(self) -> CursorTranscriptState:
        return CursorTranscriptState(
            session=Session(agent=self.adapter.id, id=self.unit.hints.get("id", ""), path=self.unit.path)
        )

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, "unknown", raw=obj)
            return "events"
        role = _str(obj.get("role"))
        msg = obj.get("message")
        if role in ("user", "assistant") and isinstance(msg, dict):
            return self._message(role, msg, line, obj)
        if obj.get("type") == "turn_ended":
            self.st.last_status = _str(obj.get("status"))
            return "metadata"
        self._event(line, "unknown", raw=obj)
        return "events"

    def _event(self, line: int, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, source={"line": line}, **fields))

    def _message(self, role: str, msg: dict[str, Any], line: int, obj: dict[str, Any]) -> Category:
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self._event(line, "unknown", role=role, raw=obj)
            return "events"
        emitted = 0
        for block in content:
            emitted += self._block(role, block, line)
        if emitted:
            self.st.session.messages += 1
            self.st.last_status = None
            return "events"
        return "skipped"

    def _block(self, role: str, block: Any, line: int) -> int:
        if not isinstance(block, dict):
            self._event(line, "unknown", role=role, raw=block)
            return 1
        btype = block.get("type")
        if btype == "text":
            text = _str(block.get("text"))
            if text is None:
                return 0
            extra: dict[str, Any] = {}
            if role == "user":
                query = user_query(text)
                if query != text:
                    extra["raw_text"] = text
                text = query
                if self.st.session.first_prompt is None:
                    self.st.session.first_prompt = text
            self._event(line, "text", role=role, text=text, extra=extra)
            return 1
        if btype == "thinking":
            self._event(
                line, "thinking", role=role, text=_str(block.get("thinking")) or _str(block.get("text"))
            )
            return 1
        if btype == "tool_use":
            self._event(
                line,
                "tool_use",
                role=role,
                tool=_str(block.get("name")),
                input=block.get("input"),
                tool_use_id=_str(block.get("id")),
            )
            return 1
        if btype == "tool_result":
            self._event(
                line,
                "tool_result",
                role="tool",
                result=block.get("content"),
                is_error=bool(block.get("is_error")),
                tool_use_id=_str(block.get("tool_use_id")),
            )
            return 1
        self._event(line, "unknown", role=role, raw=block)
        return 1

    def finish(self, *, settled: bool) -> Session:
        s = self.st.session
        status = self.st.last_status
        if status and status not in ("success", "completed"):
            s.ending = "interrupted" if status in ("aborted", "cancelled", "canceled") else "error"
        else:
            s.ending = None
        return s
