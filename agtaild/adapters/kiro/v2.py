"""Kiro CLI's "v2" session files: ``~/.kiro/sessions/cli/<id>.jsonl`` + ``<id>.json``.

The ``.jsonl`` is an append-only log of ``{"version":"v1","kind":…,"data":…}`` lines
(``Prompt``, ``AssistantMessage``, ``ToolResults``); it is read incrementally like any JSONL
session. The ``.json`` sidecar (id, cwd, title, times, model, parent) is rewritten every
turn and re-read on every read: it is metadata, outside the line accounting. Only the fields
used here are decoded, so a sidecar whose ``session_state`` runs to megabytes stays cheap.

Kiro keeps no token counts in these files (only a context-window percentage per turn), so
these sessions carry no usage.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import Category, JsonlAdapter, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch, norm_iso, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, ParentRef, Session, project_of

#: What kiro-cli ≤ 1.26.2 wrote instead of tool arguments it could not serialise.
CORRUPTED_INPUT = "SYSTEM NOTE: the actual tool use arguments were too complicated to be generated"
#: Tool calls still waiting for a result that the state keeps (the oldest are dropped).
MAX_PENDING = 500
#: sidecar session_created_reason values that make the session a child (not a fork).
_CHILD_REASONS = {"subagent"}


class _ModelInfo(msgspec.Struct):
    model_name: str | None = None
    model_id: str | None = None


class _RtsState(msgspec.Struct):
    model_info: _ModelInfo | None = None


class _SessionState(msgspec.Struct):
    rts_model_state: _RtsState | None = None
    model_info: _ModelInfo | None = None


class Sidecar(msgspec.Struct):
    """The fields of ``<id>.json`` agtail uses (all optional: shapes vary by version)."""

    session_id: str | None = None
    cwd: str | None = None
    title: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    parent_session_id: str | None = None
    session_created_reason: str | None = None
    session_state: _SessionState | None = None

    def model(self) -> str | None:
        state = self.session_state
        if state is None:
            return None
        for info in (state.model_info, state.rts_model_state.model_info if state.rts_model_state else None):
            if info is not None and (info.model_id or info.model_name):
                return info.model_id or info.model_name
        return None


_sidecar_decoder = msgspec.json.Decoder(Sidecar)


def read_sidecar(path: str) -> Sidecar | None:
    try:
        with open_regular(path) as fh:
            return _sidecar_decoder.decode(fh.read())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


class KiroV2State(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    last_ts: str | None = None


class KiroV2Parser(LineParser[KiroV2State]):
    State = KiroV2State

    def new_state(self) -> KiroV2State:
        stem = self.unit.path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".jsonl")
        return KiroV2State(session=Session(agent=self.adapter.id, id=stem, path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        kind = obj.get("kind") if isinstance(obj, dict) else None
        data = obj.get("data") if isinstance(obj, dict) else None
        if not isinstance(data, dict) or kind not in ("Prompt", "AssistantMessage", "ToolResults"):
            self._event(line, "unknown", raw=obj, subtype=kind if isinstance(kind, str) else None)
            return "events"
        blocks: list[Any] = data["content"] if isinstance(data.get("content"), list) else []
        uuid = data.get("message_id") if isinstance(data.get("message_id"), str) else None
        if kind == "Prompt":
            meta: dict[str, Any] = data["meta"] if isinstance(data.get("meta"), dict) else {}
            ts = from_epoch(meta.get("timestamp"), unit="s")
            if ts:
                self.st.last_ts = ts
                s = self.st.session
                s.started, s.ended = widen(s.started, s.ended, ts)
            return self._prompt(blocks, line, ts, uuid)
        if kind == "AssistantMessage":
            return self._assistant(blocks, line, uuid)
        return self._results(blocks, line, uuid)

    def _event(self, line: int, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, source={"line": line}, **fields))

    def _prompt(self, blocks: list[Any], line: int, ts: str | None, uuid: str | None) -> Category:
        text, images = _blocks_text(blocks)
        self._event(
            line, "text", role="user", text=text, ts=ts, uuid=uuid, extra={"images": images} if images else {}
        )
        s = self.st.session
        s.messages += 1
        if text and s.first_prompt is None:
            s.first_prompt = text
        return "events"

    def _assistant(self, blocks: list[Any], line: int, uuid: str | None) -> Category:
        emitted = 0
        for block in blocks:
            kind = block.get("kind") if isinstance(block, dict) else None
            data = block.get("data") if isinstance(block, dict) else None
            if kind == "text":
                if isinstance(data, str) and data:
                    self._event(line, "text", role="assistant", text=data, uuid=uuid)
                    emitted += 1
            elif kind == "thinking" and isinstance(data, dict):
                text = data.get("text") if isinstance(data.get("text"), str) else None
                redacted = bool(data.get("redactedContent"))
                if text or redacted:
                    extra = {"redacted": True} if redacted and not text else {}
                    self._event(line, "thinking", role="assistant", text=text or None, uuid=uuid, extra=extra)
                    emitted += 1
            elif kind == "toolUse" and isinstance(data, dict):
                self._tool_use(data, line, uuid)
                emitted += 1
            else:
                self._event(line, "unknown", role="assistant", raw=block, uuid=uuid)
                emitted += 1
        if emitted == 0:
            self._event(line, "system", role="assistant", subtype="empty_response", uuid=uuid)
        self.st.session.messages += 1
        return "events"

    def _tool_use(self, data: dict[str, Any], line: int, uuid: str | None) -> None:
        call_id = data.get("toolUseId") if isinstance(data.get("toolUseId"), str) else None
        tool_input = data.get("input")
        extra: dict[str, Any] = {}
        if isinstance(tool_input, dict) and isinstance(tool_input.get("__tool_use_purpose"), str):
            extra["purpose"] = tool_input["__tool_use_purpose"]
        if tool_input == CORRUPTED_INPUT or (
            isinstance(tool_input, dict) and CORRUPTED_INPUT in tool_input.values()
        ):
            extra["corrupted_input"] = True
        name = data.get("name")
        ev = self._event(
            line,
            "tool_use",
            role="assistant",
            tool=name if isinstance(name, str) else None,
            input=tool_input,
            tool_use_id=call_id,
            uuid=uuid,
            extra=extra,
        )
        if call_id:
            pending = self.st.pending
            pending[call_id] = ev
            if len(pending) > MAX_PENDING:  # calls that never got a result
                del pending[next(iter(pending))]

    def _results(self, blocks: list[Any], line: int, uuid: str | None) -> Category:
        """Tool results join their calls; anything else in the line (a user's "live
        steering" message typed during a tool call) is an event of its own."""
        if not blocks:
            self._event(line, "system", role="tool", subtype="empty_tool_results", uuid=uuid)
            return "events"
        new_events = 0
        for block in blocks:
            kind = block.get("kind") if isinstance(block, dict) else None
            data = block.get("data") if isinstance(block, dict) else None
            if kind == "toolResult" and isinstance(data, dict):
                call_id = data.get("toolUseId") if isinstance(data.get("toolUseId"), str) else None
                result = _result_text(data.get("content"))
                is_error = data.get("status") == "error"
                call = self.st.pending.pop(call_id, None) if call_id else None
                if call is not None:
                    call.result = result
                    call.is_error = is_error
                    call.extra["result_uuid"] = uuid
                    self.emit(call)
                    continue
                self._event(line, "tool_result", role="tool", result=result, is_error=is_error,
                            tool_use_id=call_id, uuid=uuid)  # fmt: skip
            elif kind == "text" and isinstance(data, str):
                self._event(line, "text", role="user", text=data, uuid=uuid, subtype="steering")
            else:
                self._event(line, "unknown", raw=block, uuid=uuid)
            new_events += 1
        return "events" if new_events else "merged"

    def finish(self, *, settled: bool) -> Session:
        s = self.st.session
        s.title = title_from_prompt(s.first_prompt)
        return s


class KiroV2Reader(JsonlAdapter):
    """The v2 JSONL reader; :class:`agtaild.adapters.kiro.adapter.KiroAdapter` dispatches to it."""

    id: ClassVar[str] = "kiro"
    Parser = KiroV2Parser

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        apply_sidecar(result.session, read_sidecar(unit.path.removesuffix(".jsonl") + ".json"), self.id)
        return result


def apply_sidecar(s: Session, side: Sidecar | None, agent: str) -> None:
    s.extra["store"] = "v2"
    if side is None:
        return
    if side.session_id:
        s.id = side.session_id
    if side.cwd:
        s.cwd = side.cwd
        s.project = project_of(side.cwd)
    if side.title:
        s.title = side.title
    # the sidecar's times are the session's own; prompt times only fill in without them
    created, updated = norm_iso(side.created_at), norm_iso(side.updated_at)
    if created:
        s.started = created
    if updated and (s.ended is None or updated > s.ended):
        s.ended = updated
    model = side.model()
    if model and model not in s.models:
        s.models.append(model)
    if side.parent_session_id:
        ref = ParentRef(agent=agent, id=side.parent_session_id)
        if side.session_created_reason in _CHILD_REASONS:
            s.parent = ref
        else:
            s.forked_from = ref
    if side.session_created_reason:
        s.extra["created_reason"] = side.session_created_reason


def _blocks_text(blocks: list[Any]) -> tuple[str | None, int]:
    texts: list[str] = []
    images = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("kind") == "text" and isinstance(block.get("data"), str):
            texts.append(block["data"])
        elif block.get("kind") == "image":
            images += 1
    return ("\n".join(texts) if texts else None), images


def _result_text(content: Any) -> str | None:
    """A tool result's content items: text as is, JSON compactly, images counted."""
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        kind, data = item.get("kind"), item.get("data")
        if kind == "text" and isinstance(data, str):
            parts.append(data)
        elif kind == "json":
            parts.append(json.dumps(data, ensure_ascii=False))
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(parts) if parts else None
