"""gptme's ``conversation.jsonl`` lines → events and usage.

A line is one message ``{role: system|user|assistant, content, timestamp, hide?, pinned?,
call_id?, metadata?, files?}``. ``timestamp`` is a naive local time (read as UTC, as every
naive time is here). What each becomes:

* ``user`` → ``text``; the ``<system>No tool call detected…</system>`` nudges gptme's
  autonomous mode writes as user lines → ``system`` (``subtype: auto_prompt``), never a prompt;
* ``assistant`` → ``thinking`` (``<think>``), ``text``, and one ``tool_use`` per call written
  into the text (agtaild.adapters.gptme.content); ``metadata.usage`` / ``model`` → one usage
  record per message; a text ending in ``^C Interrupted`` was cut off by Ctrl-C
  (``extra.interrupted``; the session's ending when nothing came after it);
* ``system`` with the ``call_id`` of a call → that call's result (``merged``; ``is_error`` when
  the output says ``Return code: N`` ≠ 0); in the markdown tool format results carry no id and
  go to the oldest call still waiting; ``metadata.error`` → ``system`` ``error``; hidden ones
  (the system prompt, workspace context) → ``system`` ``context``; other notices → ``system``.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.gptme.content import edit_of, exit_code, markdown_calls, native_calls, split_thinking
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import num, sub, title_from_prompt
from agtaild.model import Event, ParentRef, Session, Usage, UsageRecord, project_of

#: Calls waiting for their result that the state keeps (the oldest are dropped).
MAX_PENDING = 200
_VERSION = re.compile(r"You are gptme v(\d[\w.+-]*)")
_INTERRUPTED = "^C Interrupted"
#: How a subagent's result names the child's log folder ("Full log: <logs>/<child id>").
_FULL_LOG = re.compile(r"Full log: (/[^\s'\"]+)")
#: The most of a parent's log read to find the call that started a subagent.
MAX_PARENT_SCAN = 64 * 1024 * 1024
_WORKDIR = re.compile(r"^\*\*Working Directory:\*\* (/.*?)\s*$", re.M)


class GptmeState(ParserState):
    tool_format: str | None = None
    #: call id → its tool_use event, until the result line comes.
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    #: markdown-format calls (no ids), oldest first.
    queue: list[Event] = msgspec.field(default_factory=list)
    last: str | None = None


#: At most this much of a side file (config.toml, subagent-meta.json) is read.
MAX_SIDE_FILE = 1 << 20


def read_config(folder: Path) -> dict[str, Any]:
    """``config.toml``'s ``[chat]`` table ({} when missing or unreadable)."""
    try:
        doc = tomllib.loads(read_regular(folder / "config.toml", MAX_SIDE_FILE).decode("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError):
        return {}
    return sub(doc, "chat")


def read_meta(folder: Path) -> dict[str, Any]:
    """A subagent's ``subagent-meta.json`` ({} when there is none)."""
    try:
        value = json.loads(read_regular(folder / "subagent-meta.json", MAX_SIDE_FILE))
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


class GptmeParser(LineParser[GptmeState]):
    State = GptmeState

    def new_state(self) -> GptmeState:
        folder = Path(self.unit.path).parent
        fmt = read_config(folder).get("tool_format")
        return GptmeState(
            session=Session(agent="gptme", id=folder.name, path=self.unit.path),
            tool_format=fmt if isinstance(fmt, str) else None,
        )

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self._event(line, None, "unknown", raw=obj)
            return "events"
        s = self.st.session
        ts = norm_iso(obj.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        role, content = obj.get("role"), obj.get("content")
        if not isinstance(content, str):
            self._event(line, ts, "unknown", raw=obj)
            return "events"
        if role == "system":
            return self._system(obj, content, line, ts)
        if role == "user":
            self._user(content, line, ts)
            return "events"
        if role == "assistant":
            self._assistant(obj, content, line, ts)
            return "events"
        self._event(line, ts, "unknown", raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, ts=ts, source={"line": line}, **fields))

    def _user(self, content: str, line: int, ts: str | None) -> None:
        s = self.st.session
        stripped = content.strip()
        if stripped.startswith("<system>") and stripped.endswith("</system>"):
            self._event(line, ts, "system", role="user", text=content, subtype="auto_prompt")
            return
        self._event(line, ts, "text", role="user", text=content)
        s.messages += 1
        self.st.last = None
        if s.first_prompt is None and stripped:
            s.first_prompt = content

    def _assistant(self, obj: dict[str, Any], content: str, line: int, ts: str | None) -> None:
        st, s = self.st, self.st.session
        meta = sub(obj, "metadata")
        model = meta.get("model") if isinstance(meta.get("model"), str) else None
        if model and model not in s.models:
            s.models.append(model)
        thinking, rest = split_thinking(content)
        if thinking:
            self._event(line, ts, "thinking", role="assistant", text=thinking, model=model)
        text, calls = native_calls(rest)
        if not calls and st.tool_format not in (None, "tool"):
            text, calls = markdown_calls(rest)
        first: Event | None = None
        cut_off = content.rstrip().endswith(_INTERRUPTED)
        if text:
            first = self._event(line, ts, "text", role="assistant", text=text, model=model)
            s.messages += 1
            if cut_off:
                first.extra["interrupted"] = True
        for call in calls:
            ev = self._event(
                line, ts, "tool_use", role="assistant", model=model, tool=call.tool, input=call.args,
                tool_use_id=call.call_id,
            )  # fmt: skip
            edit = edit_of(call.tool, call.args)
            if edit is not None:
                ev.extra["edit"] = edit
            if call.call_id:
                st.pending[call.call_id] = ev
                if len(st.pending) > MAX_PENDING:
                    del st.pending[next(iter(st.pending))]
            else:
                st.queue = [*st.queue, ev][-MAX_PENDING:]
            first = first or ev
        if first is None:  # an empty reply still carries its usage
            first = self._event(line, ts, "system", role="assistant", model=model, subtype="empty_response")
        st.last = "interrupted" if cut_off else None
        usage_doc = sub(meta, "usage")
        usage = Usage(
            input_tokens=num(usage_doc, "input_tokens"),
            output_tokens=num(usage_doc, "output_tokens"),
            cache_read_tokens=num(usage_doc, "cache_read_tokens") or num(usage_doc, "cache_read_input_tokens"),
            cache_write_tokens=num(usage_doc, "cache_creation_tokens")
            or num(usage_doc, "cache_creation_input_tokens"),
        ).fix_total()
        if not usage.is_zero():
            first.usage = usage
            s.usage.add(usage)
            self.add_usage(UsageRecord(key=f"line:{line}", ts=ts, model=model, usage=usage))

    def _system(self, obj: dict[str, Any], content: str, line: int, ts: str | None) -> Category:
        st, s = self.st, self.st.session
        meta = sub(obj, "metadata")
        call_id = obj.get("call_id")
        call = st.pending.pop(call_id, None) if isinstance(call_id, str) else None
        if call is None and not isinstance(call_id, str) and st.queue and not obj.get("hide"):
            call, st.queue = st.queue[0], st.queue[1:]
        if call is not None:
            call.result = content
            code = exit_code(content)
            call.is_error = meta.get("error") is True or (code is not None and code != 0)
            if code is not None:
                call.extra["exit_code"] = code
            if ts:
                call.extra["result_ts"] = ts
            children = sorted({os.path.basename(m.rstrip("/")) for m in _FULL_LOG.findall(content)})
            if children:
                call.extra["subagent"] = children[0] if len(children) == 1 else children
            self.emit(call)
            return "merged"
        if s.version is None:
            found = _VERSION.search(content[:400])
            if found:
                s.version = found.group(1)
        if meta.get("error") is True:
            self._event(line, ts, "system", role="system", text=content, subtype="error", is_error=True,
                        extra={k: meta[k] for k in ("error_class", "exit_code") if k in meta})  # fmt: skip
            st.last = "error"
            return "events"
        if obj.get("hide") and s.cwd is None and "Working Directory" in content:
            found = _WORKDIR.search(content)
            s.cwd = found.group(1) if found else None
        subtype = "context" if obj.get("hide") else None
        self._event(line, ts, "system", role="system", text=content, subtype=subtype)
        return "events"

    def finish(self, *, settled: bool) -> Session:
        s = self.st.session
        folder = Path(self.unit.path).parent
        chat = read_config(folder)
        name = chat.get("name")
        s.title = name.strip() if isinstance(name, str) and name.strip() else title_from_prompt(s.first_prompt)
        meta = read_meta(folder)
        s.cwd = _workspace(folder, chat, meta) or s.cwd
        s.project = project_of(s.cwd)
        s.ending = self.st.last
        parent = meta.get("parent_logdir")
        if isinstance(parent, str) and parent.strip("/"):
            parent_id = os.path.basename(parent.rstrip("/"))
            s.parent = ParentRef(agent="gptme", id=parent_id, tool_use_id=_spawning_call(folder, parent_id))
            s.extra["subagent"] = {k: meta[k] for k in ("agent_id", "execution_mode", "model") if k in meta}
        return s


def _spawning_call(folder: Path, parent_id: str) -> str | None:
    """The call of the parent (a sibling folder) whose result names this child's log folder."""
    log = folder.parent / parent_id / "conversation.jsonl"
    needle = f"/{folder.name}".encode()
    try:
        data = read_regular(log, MAX_PARENT_SCAN)
    except OSError:
        return None
    for raw in data.splitlines():
        if needle not in raw or b'"call_id"' not in raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        content = obj.get("content") if isinstance(obj, dict) else None
        if isinstance(content, str) and any(os.path.basename(m.rstrip("/")) == folder.name for m in _FULL_LOG.findall(content)):
            call_id = obj.get("call_id")
            return call_id if isinstance(call_id, str) else None
    return None


def _workspace(folder: Path, chat: dict[str, Any], meta: dict[str, Any]) -> str | None:
    """The working directory: the ``workspace`` link's target, else a subagent's ``workdir``,
    else the config's ``workspace`` (absolute paths only: the config writes ``~/…``, and whose
    home that was is not known), else the "Working Directory" of the context (parser)."""
    try:
        target = os.readlink(folder / "workspace")
    except OSError:
        target = None
    if target and os.path.isabs(target):
        return target
    for value in (meta.get("workdir"), chat.get("workspace")):
        if isinstance(value, str) and os.path.isabs(value):
            return value
    return None
