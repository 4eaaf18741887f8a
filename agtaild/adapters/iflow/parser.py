"""iFlow CLI's session lines → events and usage (the history writer of 0.5.19).

Every line is ``{uuid, parentUuid, sessionId, timestamp, type, isSidechain, userType, message}``;
user lines also carry ``cwd``, ``gitBranch`` and ``version`` (the CLI's):

* ``user`` with ``message.content`` text → ``text``; with ``isMeta`` → ``system`` ``meta``;
  with ``isCompactSummary`` (the ``/compress`` summary, ``compressionInfo`` beside it) →
  ``summary`` ``compact_summary``;
* ``user`` whose content is ``tool_result`` blocks: merged into the call. The block's
  ``content`` is the tool's response as Gemini CLI shapes it: ``{callId, responseParts:
  {functionResponse: {id, name, response: {output | error}}}, resultDisplay}`` (interactive)
  or ``{functionResponse: …}`` (``-p``). ``is_error`` for a ``response.error``, a
  ``toolUseResult.status`` other than ``success`` or a shell ``Exit Code:`` ≠ 0; edits from
  ``resultDisplay.fileDiff`` (else the call's old/new strings) → ``extra.edit``;
* ``assistant`` ``message`` (Anthropic shape: ``id``, ``content`` blocks, ``model``,
  ``usage``): ``text`` blocks → one ``text`` event (``-p`` writes each streamed chunk as its
  own block: they are joined as they came), ``tool_use`` → ``tool_use``. The interactive
  writer records a call as soon as it is requested and again with the next call or the final
  answer, so a ``tool_use`` id already seen is not emitted twice;
* anything else → ``unknown``.

Usage: ``message.usage`` of each assistant line (``input_tokens``, ``output_tokens``, and the
cache counts when the provider gave them), keyed by ``message.id``; all-zero usage (what the
interactive writer records) is no usage.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.tool_edits import gemini_edit
from agtaild.adapters.kit.values import num, sub, title_from_prompt
from agtaild.model import Event, Session, Usage, UsageRecord, project_of

MAX_PENDING = 500
#: Other working directories a session keeps (``extra.cwds``).
MAX_CWDS = 20
#: Call ids already emitted that the state remembers (the oldest are forgotten).
MAX_SEEN = 4096
_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)


class IflowState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    seen_calls: list[str] = msgspec.field(default_factory=list)
    #: "prompt" while the session waits on the model, "call" on a tool, or None.
    last: str | None = None


class IflowParser(LineParser[IflowState]):
    State = IflowState

    def new_state(self) -> IflowState:
        return IflowState(session=Session(agent="iflow", id=Path(self.unit.path).stem, path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, None, obj, "unknown", raw=obj)
            return "events"
        s = self.st.session
        ts = norm_iso(obj.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        self._context(obj)
        kind = obj.get("type")
        message = obj.get("message")
        if kind == "user" and isinstance(message, dict):
            return self._user(obj, message, line, ts)
        if kind == "assistant" and isinstance(message, dict):
            return self._assistant(obj, message, line, ts)
        self._event(line, ts, obj, "unknown", raw=obj)
        return "events"

    def _context(self, obj: dict[str, Any]) -> None:
        s = self.st.session
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd:
            if s.cwd is None:
                s.cwd, s.project = cwd, project_of(cwd)
            elif (
                cwd != s.cwd
                and cwd not in (others := s.extra.setdefault("cwds", []))
                and len(others) < MAX_CWDS
            ):
                others.append(cwd)
        if isinstance(obj.get("gitBranch"), str) and obj["gitBranch"]:
            s.git_branch = obj["gitBranch"]
        if isinstance(obj.get("version"), str) and obj["version"]:
            s.version = obj["version"]

    def _event(self, line: int, ts: str | None, obj: Any, kind: str, **fields: Any) -> Event:
        uuid = obj.get("uuid") if isinstance(obj, dict) and isinstance(obj.get("uuid"), str) else None
        parent = (
            obj.get("parentUuid")
            if isinstance(obj, dict) and isinstance(obj.get("parentUuid"), str)
            else None
        )
        side = bool(obj.get("isSidechain")) if isinstance(obj, dict) else False
        return self.emit(Event(seq=-1, kind=kind, ts=ts, uuid=uuid, parent_uuid=parent, sidechain=side,
                               source={"line": line}, **fields))  # fmt: skip

    # -- user lines ---------------------------------------------------------------------
    def _user(self, obj: dict[str, Any], message: dict[str, Any], line: int, ts: str | None) -> Category:
        s = self.st.session
        content = message.get("content")
        if obj.get("isCompactSummary"):
            info = obj.get("compressionInfo")
            self._event(line, ts, obj, "summary", role="user", text=_text(content), subtype="compact_summary",
                        extra={"compression": info} if isinstance(info, dict) else {})  # fmt: skip
            s.compactions += 1
            return "events"
        if obj.get("isMeta"):
            self._event(line, ts, obj, "system", role="user", text=_text(content), subtype="meta")
            return "events"
        if isinstance(content, str):
            self._prompt(obj, content, line, ts)
            return "events"
        if not isinstance(content, list):
            self._event(line, ts, obj, "unknown", raw=obj)
            return "events"
        merged = emitted = 0
        texts: list[str] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if self._result(obj, block, line, ts):
                    merged += 1
                else:
                    emitted += 1
            elif (
                isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            ):
                texts.append(block["text"])
            else:
                self._event(line, ts, obj, "unknown", raw=block)
                emitted += 1
        if texts:
            self._prompt(obj, "".join(texts), line, ts)
            emitted += 1
        return "merged" if merged and not emitted else "events"

    def _prompt(self, obj: dict[str, Any], text: str, line: int, ts: str | None) -> None:
        st, s = self.st, self.st.session
        self._event(line, ts, obj, "text", role="user", text=text)
        s.messages += 1
        st.last = "prompt"
        if s.first_prompt is None and text.strip():
            s.first_prompt = text

    def _result(self, obj: dict[str, Any], block: dict[str, Any], line: int, ts: str | None) -> bool:
        """Put a tool_result block on its call; True when the call was found (merged)."""
        st = self.st
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
        call = st.pending.pop(call_id, None) if call_id else None
        content = block.get("content")
        text, failed = _result_text(content)
        meta = sub(obj, "toolUseResult")
        status = meta.get("status")
        tool = call.tool if call is not None else _str(meta.get("toolName"))
        target = call or self._event(
            line, ts, obj, "tool_result", role="tool", tool=tool, tool_use_id=call_id
        )
        target.result = text
        found = _EXIT.search(text) if text and "Exit Code:" in text else None
        code = int(found.group(1)) if found else None
        target.is_error = failed or (isinstance(status, str) and status != "success") or bool(code)
        if code is not None:
            target.extra["exit_code"] = code
        if ts:
            target.extra["result_ts"] = ts
        if call is not None and isinstance(content, dict):
            edit = _edit(call.tool, call.input, content)
            if edit is not None:
                call.extra["edit"] = edit
        st.last = "call" if st.pending else None
        if call is None:
            return False
        self.emit(call)
        return True

    # -- assistant lines ----------------------------------------------------------------
    def _assistant(self, obj: dict[str, Any], message: dict[str, Any], line: int, ts: str | None) -> Category:
        st, s = self.st, self.st.session
        model = _str(message.get("model"))
        if model == "unknown":
            model = None
        if model and model not in s.models:
            s.models.append(model)
        self._count_usage(obj, message, model, ts)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self._event(line, ts, obj, "unknown", raw=obj)
            return "events"
        emitted = 0
        texts: list[str] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                continue
            emitted += self._flush_text(obj, texts, model, line, ts)
            texts = []
            if kind == "tool_use":
                emitted += self._call(obj, block, model, line, ts)
            else:
                self._event(line, ts, obj, "unknown", raw=block)
                emitted += 1
        emitted += self._flush_text(obj, texts, model, line, ts)
        st.last = "call" if st.pending else None
        return "events" if emitted else "skipped"

    def _flush_text(
        self, obj: dict[str, Any], texts: list[str], model: str | None, line: int, ts: str | None
    ) -> int:
        text = "".join(texts)
        if not text:
            return 0
        self._event(line, ts, obj, "text", role="assistant", text=text, model=model)
        self.st.session.messages += 1
        return 1

    def _call(
        self, obj: dict[str, Any], block: dict[str, Any], model: str | None, line: int, ts: str | None
    ) -> int:
        st = self.st
        call_id = _str(block.get("id"))
        if call_id is not None and call_id in st.seen_calls:
            return 0  # recorded again with the next call or the answer
        tool, args = _str(block.get("name")), block.get("input")
        ev = self._event(
            line,
            ts,
            obj,
            "tool_use",
            role="assistant",
            tool=tool,
            input=args,
            tool_use_id=call_id,
            model=model,
        )
        edit = _edit(tool, args, None)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id is not None:
            st.seen_calls = [*st.seen_calls, call_id][-MAX_SEEN:]
            st.pending[call_id] = ev
            if len(st.pending) > MAX_PENDING:
                del st.pending[next(iter(st.pending))]
        return 1

    def _count_usage(
        self, obj: dict[str, Any], message: dict[str, Any], model: str | None, ts: str | None
    ) -> None:
        doc = message.get("usage")
        if not isinstance(doc, dict):
            return
        usage = Usage(
            input_tokens=num(doc, "input_tokens"),
            output_tokens=num(doc, "output_tokens"),
            cache_read_tokens=num(doc, "cache_read_input_tokens"),
            cache_write_tokens=num(doc, "cache_creation_input_tokens"),
        ).fix_total()
        if usage.is_zero():
            return
        key = _str(message.get("id")) or _str(obj.get("uuid"))
        if key is None:
            return
        self.st.session.usage.add(usage)
        self.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))

    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        s.title = title_from_prompt(s.first_prompt)
        s.ending = None
        # A call without its result is not a sign of a cut: the interactive writer records
        # only successful results. A prompt left without an answer is.
        s.extra["waiting"] = st.last == "prompt"
        return s


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def _result_text(content: Any) -> tuple[str | None, bool]:
    """The text of a tool_result block's content and whether it reports an error."""
    if isinstance(content, str):
        return content, False
    if isinstance(content, list):
        return (_text(content) or json.dumps(content, ensure_ascii=False)), False
    if not isinstance(content, dict):
        return (None if content is None else json.dumps(content)), False
    parts = content.get("responseParts", content)
    if isinstance(parts, list):
        parts = next((p for p in parts if isinstance(p, dict) and "functionResponse" in p), {})
    response = sub(sub(parts, "functionResponse"), "response")
    error = response.get("error") or content.get("error")
    output = response.get("output")
    display = content.get("resultDisplay")
    if isinstance(output, str):
        text: str | None = output
    elif error is not None:
        text = (
            error
            if isinstance(error, str)
            else _str(sub(response, "error").get("message")) or json.dumps(error)
        )
    elif isinstance(display, str):
        text = display
    else:
        text = json.dumps(content, ensure_ascii=False)
    return text, bool(error)


def _edit(tool: str | None, args: Any, content: dict[str, Any] | None) -> dict[str, Any] | None:
    """``extra.edit`` of an edit tool's call: the result's diff when it has one, else the call's
    old/new strings; a ``write_file`` without a diff: its content, a new file when the result
    says it created one."""
    if not isinstance(args, dict):
        return None
    if tool == "multi_edit" and isinstance(args.get("edits"), list):
        return edits.edit_doc([edits.from_texts(args.get("file_path"), e.get("old_string"), e.get("new_string"))
                               for e in args["edits"] if isinstance(e, dict)])  # fmt: skip
    edit = gemini_edit(tool, args, content)
    if edit is not None or tool != "write_file" or content is None:
        return edit
    output, _ = _result_text(content)
    if output and output.startswith("Successfully created"):
        return edits.edit_doc([edits.from_texts(args.get("file_path"), "", args.get("content"), op="create")])
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
