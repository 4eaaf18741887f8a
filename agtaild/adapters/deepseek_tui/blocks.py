"""DeepSeek TUI's saved messages → agtail events (one message = one accounting record).

``Message{role, content: [ContentBlock]}`` (``crates/tui/src/models.rs`` @ 0.8.40); the blocks are
serde-tagged by ``type``: ``text{text}``, ``thinking{thinking}``, ``tool_use{id, name, input,
caller?}``, ``tool_result{tool_use_id, content (a string), is_error?, content_blocks?}``,
``server_tool_use{id, name, input}``, ``tool_search_tool_result`` / ``code_execution_tool_result
{tool_use_id, content}``. A result comes in a later (``user``) message and is merged into its
call. A user text may start with ``<turn_meta>{…}</turn_meta>``, which the TUI strips from the
prompt it shows (``extract_user_prompt``); so does this. Messages carry no time and no usage.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.model import Event

_RESULTS = frozenset({"tool_result", "tool_search_tool_result", "code_execution_tool_result"})
_CALLS = frozenset({"tool_use", "server_tool_use"})
#: exec_shell's failure text: "Command failed (exit code: Some(1))".
_EXIT = re.compile(r"exit code: Some\((-?\d+)\)")
_TURN_META = "<turn_meta>"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def split_turn_meta(text: str) -> tuple[str, str | None]:
    """(the prompt, the ``<turn_meta>`` payload or None), as ``extract_user_prompt`` cuts it."""
    trimmed = text.lstrip()
    if not trimmed.startswith(_TURN_META):
        return text, None
    rest = trimmed[len(_TURN_META) :]
    end = rest.find("</turn_meta>")
    if end < 0:
        return rest.lstrip(), None
    return rest[end + len("</turn_meta>") :].lstrip(), rest[:end]


def edit_of(tool: str | None, args: Any) -> dict[str, Any] | None:
    """``edit_file`` (``path``, ``search``, ``replace``), ``write_file`` (``path``, ``content``) and
    ``apply_patch`` (``patch``: a unified diff, ``path`` overriding its file name)."""
    if not isinstance(args, dict):
        return None
    path = args.get("path")
    if tool == "edit_file":
        return edits.edit_doc([edits.from_texts(path, args.get("search"), args.get("replace"))])
    if tool == "write_file":
        return edits.edit_doc([edits.from_texts(path, "", args.get("content"), op="create")])
    if tool == "apply_patch" and isinstance(args.get("patch"), str):
        return edits.edit_doc(
            list(edits.from_unified(args["patch"], path=path if isinstance(path, str) else None))
        )
    return None


class MessageMapper:
    """Walks one session's messages in order; the summary fields fill as it goes."""

    def __init__(self, book: RecordBook, model: str | None) -> None:
        self.book = book
        self.model = model
        self.messages = 0
        self.first_prompt: str | None = None
        self.calls: dict[str, Event] = {}
        #: ids of the calls still without a result.
        self.open: set[str] = set()
        self.waiting = False

    def _emit(self, ev: Event, row: int) -> Event:
        ev.source = {"row": row}
        return self.book.emit(ev)

    def message(self, msg: Any, row: int) -> Category:
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            self._emit(Event(seq=-1, kind="unknown", raw=msg), row)
            return "events"
        role = msg.get("role")
        if role not in ("user", "assistant", "system"):
            self._emit(Event(seq=-1, kind="unknown", raw=msg), row)
            return "events"
        before, merged, spoke = self.book.next_seq, False, False
        for block in msg["content"]:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                spoke = self._text(role, block["text"], row) or spoke
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                self._emit(
                    Event(
                        seq=-1, kind="thinking", role="assistant", text=block["thinking"], model=self.model
                    ),
                    row,
                )
                spoke = True
            elif kind in _CALLS:
                self._call(block, row, server=kind == "server_tool_use")
                spoke = True
            elif kind in _RESULTS:
                merged = self._result(block, row) or merged
            else:
                self._emit(Event(seq=-1, kind="unknown", raw=block), row)
        if spoke and role == "assistant":
            self.messages += 1
        if self.book.next_seq > before:
            return "events"
        return "merged" if merged else "skipped"

    def _text(self, role: str, text: str, row: int) -> bool:
        if not text.strip():
            return False
        if role == "system":
            self._emit(Event(seq=-1, kind="system", role="system", text=text), row)
            return False
        if role == "assistant":
            self._emit(Event(seq=-1, kind="text", role="assistant", text=text, model=self.model), row)
            self.waiting = bool(self.open)
            return True
        prompt, meta = split_turn_meta(text)
        ev = self._emit(Event(seq=-1, kind="text", role="user", text=prompt), row)
        if meta is not None:
            ev.extra["turn_meta"] = meta
        self.messages += 1
        self.waiting = True
        if self.first_prompt is None and prompt.strip():
            self.first_prompt = prompt
        return True

    def _call(self, block: dict[str, Any], row: int, *, server: bool) -> None:
        name = _str(block.get("name"))
        call_id = _str(block.get("id"))
        args = block.get("input")
        ev = self._emit(
            Event(
                seq=-1,
                kind="tool_use",
                role="assistant",
                tool=name,
                input=args,
                model=self.model,
                tool_use_id=call_id,
            ),
            row,
        )
        if server:
            ev.subtype = "server_tool_use"
        if isinstance(block.get("caller"), dict):
            ev.extra["caller"] = block["caller"]
        edit = edit_of(name, args)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id:
            self.calls[call_id] = ev
            self.open.add(call_id)
        self.waiting = True

    def _result(self, block: dict[str, Any], row: int) -> bool:
        call_id = _str(block.get("tool_use_id"))
        content = block.get("content")
        failed = block.get("is_error") is True
        code = None
        if isinstance(content, str) and "exit code: Some(" in content:
            found = _EXIT.search(content)
            code = int(found.group(1)) if found else None
        call = self.calls.get(call_id) if call_id else None
        if call is None:
            self._emit(
                Event(
                    seq=-1,
                    kind="tool_result",
                    role="tool",
                    result=content,
                    is_error=failed,
                    tool_use_id=call_id,
                ),
                row,
            )
            return False
        self.open.discard(call_id or "")
        call.result = content
        call.is_error = failed or (code is not None and code != 0)
        if code is not None:
            call.extra["exit_code"] = code
        if isinstance(block.get("content_blocks"), list):
            call.extra["content_blocks"] = len(block["content_blocks"])
        self.book.emit(call)
        self.waiting = True  # the model answers a result
        return True
