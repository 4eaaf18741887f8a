"""Forge's ``context`` JSON → events and usage records.

The column holds Forge's ``ContextRecord`` (``forge_repo`` ``conversation_record.rs``)::

    {"conversation_id", "initiator": "agent" (a subagent's), "messages": [entry, …], "tools", …}

An entry is ``{"message": value, "usage": usage}`` (since the per-message usage) or the bare
value (older rows). A value is externally tagged:

* ``{"text": {"role": "System"|"User"|"Assistant", "content", "raw_content": {"Text": prompt} |
  {"Command": {…}}, "tool_calls": [{"name", "call_id", "arguments"}], "model",
  "reasoning_details": [{"text", "signature", …}], "droppable"}}``;
* ``{"tool": {"name", "call_id", "output": {"is_error", "values": [{"text": s} |
  {"aI": {"value", "conversation_id"}} | {"image": {…}} | "empty" | legacy {"markdown": s} |
  {"fileDiff": {…}} | {"pair": [a, b]}]}}}``;
* ``{"image": {"url", "mime_type"}}``.

Usage is ``{"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"}``, each
``{"actual": n}`` or ``{"approx": n}`` (older rows: ``Actual``/``Approx``), plus ``cost``.
``prompt_tokens`` counts every input token, cache reads included (``cached_tokens``).

Mapping: System → ``system`` (the first one with ``<current_working_directory>`` gives the
cwd); User → ``text`` (the prompt as typed, from ``raw_content``; a ``droppable`` message is an
attachment Forge added → ``system`` ``attachment``; a compaction's summary frame → ``summary``);
Assistant → ``thinking`` per reasoning detail with text, ``text``, a ``tool_use`` per call
(``patch``/``multi_patch``/``write``/``remove`` → ``extra.edit``); a tool result → merged into
its call (``is_error`` from the output, or a shell's non-zero ``exit_code``; an agent's result
names the child conversation in ``extra.subagent``). Anything else → ``unknown`` with its JSON.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.model import Event, Usage, UsageRecord

#: The start of the user message a compaction leaves in place of the messages it summarised
#: (Forge's ``forge-partial-summary-frame.md``).
SUMMARY_FRAME = "Use the following summary frames as the authoritative reference"
_CWD = re.compile(r"<current_working_directory>([^<\n]+)</current_working_directory>")
_EXIT = re.compile(r'<shell_output\b[^>]*?\bexit_code="(-?\d+)"')
_TASK = re.compile(r"\A<task>(.*?)</task>", re.S)
#: Tool calls waiting for their result (the oldest are dropped).
MAX_PENDING = 500


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _tagged(value: Any) -> tuple[str, Any]:
    """An externally tagged serde value → (lower-case tag, content); a bare string is a unit
    variant (``"empty"``)."""
    if isinstance(value, str):
        return value.lower(), None
    if isinstance(value, dict) and len(value) == 1:
        ((tag, content),) = value.items()
        return str(tag).lower(), content
    return "", value


def _count(value: Any) -> int:
    """A TokenCount (``{"actual": n}`` / ``{"approx": n}``, or a bare number)."""
    if isinstance(value, dict) and len(value) == 1:
        (value,) = value.values()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def usage_of(doc: Any) -> Usage | None:
    if not isinstance(doc, dict):
        return None
    prompt, cached = _count(doc.get("prompt_tokens")), _count(doc.get("cached_tokens"))
    usage = Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=_count(doc.get("completion_tokens")),
        cache_read_tokens=cached,
    ).fix_total()
    return None if usage.is_zero() else usage


def prompt_text(message: dict[str, Any]) -> str | None:
    """What the user typed: ``raw_content.Text``, else the content's ``<task>`` (Forge wraps
    the prompt in ``<task>…</task>`` and the date), else the content."""
    tag, raw = _tagged(message.get("raw_content"))
    if tag == "text" and _str(raw):
        return str(raw)
    content = _str(message.get("content"))
    m = _TASK.match(content or "")
    return m.group(1) if m else content


class ContextReader:
    """One conversation's context entries, in order, into ``book``."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.pending: dict[str, Event] = {}
        self.last_role: str | None = None
        #: The child conversations named by agent results (call id → conversation id).
        self.children: dict[str, str] = {}

    def entry(self, entry: Any, number: int) -> None:
        book = self.book
        usage: Any = None
        value = entry
        if isinstance(entry, dict) and "message" in entry:
            value, usage = entry.get("message"), entry.get("usage")
        tag, body = _tagged(value)
        source = {"message": number}
        if tag == "text" and isinstance(body, dict):
            self._text(body, source, number, usage)
        elif tag == "tool" and isinstance(body, dict):
            call_id = _str(body.get("call_id"))
            call = self.pending.pop(call_id, None) if call_id else None
            if call is not None:
                self._result(call, body)
                book.count("merged")
                return
            ev = Event(
                seq=-1,
                kind="tool_result",
                role="tool",
                tool=_str(body.get("name")),
                tool_use_id=call_id,
                source=source,
            )
            self._result(ev, body)
            book.emit(ev)
        elif tag == "image" and isinstance(body, dict):
            mime = _str(body.get("mime_type"))
            book.emit(Event(seq=-1, kind="text", role="user", subtype="image", text=f"[image: {mime or 'image'}]",
                            source=source, extra={"media": {"type": mime}}))  # fmt: skip
        else:
            book.emit(Event(seq=-1, kind="unknown", raw=entry, source=source))
        book.count("events")

    def _text(self, msg: dict[str, Any], source: dict[str, Any], number: int, usage: Any) -> None:
        book, s = self.book, self.book.session
        role = msg.get("role")
        content = _str(msg.get("content"))
        model = _str(msg.get("model"))
        if role == "System":
            m = _CWD.search(content or "") if s.cwd is None else None
            if m:
                s.cwd = m.group(1).strip()
            book.emit(Event(seq=-1, kind="system", role="system", text=content, source=source))
            return
        if role == "User":
            if content and content.startswith(SUMMARY_FRAME):
                book.emit(
                    Event(
                        seq=-1,
                        kind="summary",
                        role="user",
                        subtype="compact_summary",
                        text=content,
                        source=source,
                    )
                )
                s.compactions += 1
                return
            if msg.get("droppable") is True:
                book.emit(
                    Event(
                        seq=-1, kind="system", role="user", subtype="attachment", text=content, source=source
                    )
                )
                return
            tag, raw = _tagged(msg.get("raw_content"))
            text = prompt_text(msg)
            extra: dict[str, Any] = {"command": raw} if tag == "command" else {}
            if text != content and content:
                extra["sent"] = content  # what the model got: the prompt in Forge's frame
            book.emit(
                Event(seq=-1, kind="text", role="user", text=text, model=model, source=source, extra=extra)
            )
            s.messages += 1
            if s.first_prompt is None and text:
                s.first_prompt = text
            self.last_role = "user"
            return
        if role != "Assistant":
            book.emit(Event(seq=-1, kind="unknown", role=_str(role), raw=msg, source=source))
            return
        if model and model not in s.models:
            s.models.append(model)
        reasoning = msg.get("reasoning_details")
        for detail in reasoning if isinstance(reasoning, list) else []:
            text = _str(detail.get("text")) if isinstance(detail, dict) else None
            if text:
                book.emit(
                    Event(seq=-1, kind="thinking", role="assistant", text=text, model=model, source=source)
                )
            elif isinstance(detail, dict) and (detail.get("data") or detail.get("signature")):
                book.emit(
                    Event(
                        seq=-1,
                        kind="thinking",
                        role="assistant",
                        subtype="redacted",
                        model=model,
                        source=source,
                    )
                )
        if content:
            book.emit(Event(seq=-1, kind="text", role="assistant", text=content, model=model, source=source))
            s.messages += 1
        calls = msg.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                book.emit(Event(seq=-1, kind="unknown", role="assistant", raw=call, source=source))
                continue
            self._call(call, model, source)
        parsed = usage_of(usage)
        if parsed is not None:
            book.add_usage(UsageRecord(key=f"message:{number}", ts=None, model=model, usage=parsed))
        self.last_role = "assistant"

    def _call(self, call: dict[str, Any], model: str | None, source: dict[str, Any]) -> None:
        args = call.get("arguments")
        if isinstance(args, str):  # an unparsed argument string Forge could not read as JSON
            args = {"_raw": args}
        tool = _str(call.get("name"))
        call_id = _str(call.get("call_id"))
        ev = self.book.emit(Event(seq=-1, kind="tool_use", role="assistant", tool=tool, input=args, model=model,
                                  tool_use_id=call_id, source=source))  # fmt: skip
        edit = edit_of(tool, args)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id:
            self.pending[call_id] = ev
            if len(self.pending) > MAX_PENDING:
                del self.pending[next(iter(self.pending))]

    def _result(self, ev: Event, body: dict[str, Any]) -> None:
        output = body.get("output")
        output = output if isinstance(output, dict) else {}
        texts: list[str] = []
        values = output.get("values")
        for value in values if isinstance(values, list) else []:
            self._value(ev, value, texts)
        ev.result = "\n".join(texts)
        ev.is_error = output.get("is_error") is True
        m = _EXIT.search(ev.result) if ev.tool == "shell" else None
        if m:
            code = int(m.group(1))
            ev.extra["exit_code"] = code
            ev.is_error = ev.is_error or code != 0
        if ev.is_error and "edit" in ev.extra:
            ev.extra["edit_failed"] = True

    def _value(self, ev: Event, value: Any, texts: list[str]) -> None:
        tag, body = _tagged(value)
        if tag in ("text", "markdown") and isinstance(body, str):
            texts.append(body)
        elif tag == "ai" and isinstance(body, dict):
            if isinstance(body.get("value"), str):
                texts.append(body["value"])
            child = _str(body.get("conversation_id"))
            if child:
                ev.extra["subagent"] = child
                if ev.tool_use_id:
                    self.children[ev.tool_use_id] = child
        elif tag == "image" and isinstance(body, dict):
            texts.append(f"[image: {body.get('mime_type') or 'image'}]")
        elif tag == "pair" and isinstance(body, list) and body:
            self._value(ev, body[0], texts)
        elif tag == "filediff" and isinstance(body, dict):
            texts.append(f"[File diff: {body.get('path')}]")
        elif tag != "empty":
            ev.extra.setdefault("unknown_values", []).append(value)


def edit_of(tool: str | None, args: Any) -> dict[str, Any] | None:
    """Forge's file tools (``forge_domain`` ``ToolCatalog``) → the common edit shape: ``patch``
    (``file_path``/``path``, ``old_string``/``search``, ``new_string``/``content``, and in older
    releases an ``operation``: replace, replace_all, append, prepend, swap), ``multi_patch``
    (``edits``), ``write`` (``file_path``/``path``, ``content``) and ``remove`` (``path``)."""
    if not isinstance(args, dict):
        return None
    path = args.get("file_path") or args.get("path")
    if tool == "patch":
        old = args.get("old_string", args.get("search"))
        new = args.get("new_string", args.get("content"))
        op = args.get("operation")
        if isinstance(old, str) and isinstance(new, str):
            if op == "append":
                new = old + new
            elif op == "prepend":
                new = new + old
        return edits.edit_doc([edits.from_texts(path, old, new)])
    if tool == "multi_patch" and isinstance(args.get("edits"), list):
        hunks: list[dict[str, Any]] = []
        for one in args["edits"]:
            change = (
                edits.from_texts(path, one.get("old_string"), one.get("new_string"))
                if isinstance(one, dict)
                else None
            )
            hunks += change["hunks"] if change else []
        return edits.edit_doc([edits.file_change(path, hunks)])
    if tool == "write" and isinstance(args.get("content"), str):
        op = "update" if args.get("overwrite") is True else "create"
        return edits.edit_doc([edits.from_texts(path, "", args["content"], op=op)])
    if tool == "remove" and isinstance(path, str):
        return edits.edit_doc([edits.file_change(path, [], op="delete")])
    return None
