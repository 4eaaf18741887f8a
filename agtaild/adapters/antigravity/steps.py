"""The Antigravity CLI's step log → events.

Every line is a step ``{step_index, source (USER_EXPLICIT | MODEL | SYSTEM), type, status (DONE |
RUNNING | ERROR …), created_at, content?, thinking?, tool_calls?, truncated_fields?}``:

* ``USER_INPUT`` → ``text`` (user): the ``<USER_REQUEST>`` block; the other blocks the CLI adds
  (``<ADDITIONAL_METADATA>``, ``<USER_SETTINGS_CHANGE>``) go to ``extra.context``; a ``Model
  Selection`` change names the model of the answers that follow;
* ``PLANNER_RESPONSE`` → ``thinking`` and ``text`` (assistant) and one ``tool_use`` per
  ``tool_calls`` entry (``args`` values are often JSON text themselves: decoded);
* the step that carries a call's outcome (``RUN_COMMAND``, ``VIEW_FILE``, ``LIST_DIRECTORY``,
  ``CODE_ACTION``, ``GREP_SEARCH``, ``SEARCH_WEB``, ``BROWSER_*``, ``GENERIC`` …: any other
  ``MODEL`` step) is merged into the oldest call still waiting (the log names no call ids; the
  CLI runs them in order): ``is_error`` for ``status: ERROR``, ``extra.running`` for a call left
  running in the background, a ``CODE_ACTION`` that created a file → ``extra.edit``;
* ``CHECKPOINT`` → ``summary`` ``checkpoint`` (a compaction), ``SYSTEM_MESSAGE`` → ``system``,
  ``CONVERSATION_HISTORY`` → metadata; a line that is not an object → ``unknown``.

No usage is written to the log (the CLI reports tokens only to its status line).
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
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, Session

MAX_PENDING = 500
_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.S)
_BLOCK = re.compile(r"<([A-Z_]+)>\s*(.*?)\s*</\1>", re.S)
_MODEL = re.compile(r"setting `Model Selection` from .*? to (.+?)(?:\.\s|\.$|\n|$)")
_CREATED = re.compile(r"^Created file (\S+) with", re.M)
_STAMPS = re.compile(r"\A(?:(?:Created|Completed) At: [^\n]*\n)+")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_METADATA = frozenset({"CONVERSATION_HISTORY"})


class StepState(ParserState):
    pending: list[Event] = msgspec.field(default_factory=list)
    model: str | None = None
    #: "prompt" while the conversation waits on the model, "call" on a tool, or None.
    last: str | None = None


def _arg(value: Any) -> Any:
    """A call argument: the CLI writes most as JSON text (``"\\"/tmp/repo\\""``, ``"true"``, ``"2000"``)."""
    if isinstance(value, str) and (
        value[:1] in ('"', "{", "[") or value in ("true", "false", "null") or _NUMBER.match(value)
    ):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class StepParser(LineParser[StepState]):
    State = StepState

    def new_state(self) -> StepState:
        sid = self.unit.hints.get("id") or Path(self.unit.path).stem
        return StepState(session=Session(agent="antigravity", id=str(sid), path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, None, obj, "unknown", raw=obj)
            return "events"
        s = self.st.session
        ts = norm_iso(obj.get("created_at"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        kind = obj.get("type")
        if kind == "USER_INPUT":
            self._user(obj, line, ts)
        elif kind == "PLANNER_RESPONSE":
            self._planner(obj, line, ts)
        elif kind == "CHECKPOINT":
            self._event(line, ts, obj, "summary", text=_str(obj.get("content")), subtype="checkpoint")
            s.compactions += 1
        elif kind == "SYSTEM_MESSAGE":
            self._event(line, ts, obj, "system", text=_str(obj.get("content")), subtype="system_message")
        elif kind in _METADATA:
            return "metadata"
        elif isinstance(kind, str) and obj.get("source") != "SYSTEM":
            return self._outcome(obj, kind, line, ts)
        else:
            self._event(line, ts, obj, "unknown", raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, obj: Any, kind: str, **fields: Any) -> Event:
        source: dict[str, Any] = {"line": line}
        if isinstance(obj, dict) and isinstance(obj.get("step_index"), int):
            source["step"] = obj["step_index"]
        if isinstance(obj, dict) and obj.get("truncated_fields"):
            fields.setdefault("extra", {})["truncated_fields"] = obj["truncated_fields"]
        return self.emit(Event(seq=-1, kind=kind, ts=ts, source=source, **fields))

    def _user(self, obj: dict[str, Any], line: int, ts: str | None) -> None:
        st, s = self.st, self.st.session
        content = _str(obj.get("content")) or ""
        found = _REQUEST.search(content)
        text = found.group(1) if found else content
        context = {tag: body for tag, body in _BLOCK.findall(content) if tag != "USER_REQUEST"}
        model = _MODEL.search(context.get("USER_SETTINGS_CHANGE", ""))
        if model:
            st.model = model.group(1).strip()
        self._event(
            line, ts, obj, "text", role="user", text=text, extra={"context": context} if context else {}
        )
        s.messages += 1
        st.last = "prompt"
        if s.first_prompt is None and text.strip():
            s.first_prompt = text

    def _planner(self, obj: dict[str, Any], line: int, ts: str | None) -> None:
        st, s = self.st, self.st.session
        model = st.model
        if model and model not in s.models:
            s.models.append(model)
        thinking = _str(obj.get("thinking"))
        if thinking:
            self._event(line, ts, obj, "thinking", role="assistant", text=thinking.strip(), model=model)
        content = _str(obj.get("content"))
        if content:
            self._event(line, ts, obj, "text", role="assistant", text=content, model=model)
            s.messages += 1
        calls = obj.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                self._event(line, ts, obj, "unknown", raw=call)
                continue
            args = call.get("args")
            decoded = {k: _arg(v) for k, v in args.items()} if isinstance(args, dict) else args
            ev = self._event(
                line,
                ts,
                obj,
                "tool_use",
                role="assistant",
                tool=_str(call.get("name")),
                input=decoded,
                model=model,
            )
            st.pending.append(ev)
            if len(st.pending) > MAX_PENDING:
                st.pending.pop(0)
        st.last = "call" if st.pending else None

    def _outcome(self, obj: dict[str, Any], kind: str, line: int, ts: str | None) -> Category:
        st = self.st
        call = st.pending.pop(0) if st.pending else None
        raw = obj.get("content")
        text = _STAMPS.sub("", raw) if isinstance(raw, str) else (None if raw is None else json.dumps(raw))
        target = call or self._event(line, ts, obj, "tool_result", role="tool", tool=kind.lower())
        target.result = text
        status = obj.get("status")
        target.is_error = status == "ERROR"
        target.extra["step_type"] = kind
        if status == "RUNNING":
            target.extra["running"] = True
        if ts:
            target.extra["result_ts"] = ts
        if kind == "CODE_ACTION" and text:
            created = _CREATED.search(text)
            if created:
                path = created.group(1).removeprefix("file://")
                target.extra["edit"] = edits.edit_doc([edits.file_change(path, [], op="create")])
        st.last = "call" if st.pending else None
        if call is None:
            return "events"
        self.emit(call)
        return "merged"

    def finish(self, *, settled: bool) -> Session:
        st, s = self.st, self.st.session
        s.title = title_from_prompt(s.first_prompt)
        s.extra["waiting"] = st.last == "prompt"
        return s


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
