"""Amazon Q's ``ConversationState`` JSON → events.

The shapes (``crates/chat-cli/src/cli/chat/conversation.rs`` and ``message.rs``, serde's
externally tagged enums)::

    {"conversation_id", "next_message": UserMessage | null, "history": [HistoryEntry, …],
     "valid_history_range": [start, end], "transcript": [str, …], "tools", "context_manager",
     "context_message_length", "latest_summary": [summary, RequestMetadata] | null,
     "model": str (≤ 1.13.3), "model_info": {"model_name", "model_id", …}, "file_line_tracker",
     "checkpoint_manager", "mcp_enabled", "tangent_state"}
    HistoryEntry = {"user": UserMessage, "assistant": AssistantMessage, "request_metadata": {…}}
    UserMessage = {"additional_context", "env_context": {"env_state": {"operating_system",
                   "current_working_directory", …}}, "content": {"Prompt": {"prompt"}} |
                   {"ToolUseResults": {"tool_use_results": [r]}} |
                   {"CancelledToolUses": {"prompt", "tool_use_results": [r]}},
                   "timestamp": RFC 3339, "images": [{"format", "source"}] | null}
    r = {"tool_use_id", "content": [{"Text": s} | {"Json": value}], "status": "Success"|"Error"}
    AssistantMessage = {"Response": {"message_id", "content"}} |
                       {"ToolUse": {"message_id", "content", "tool_uses": [{"id", "name",
                                    "orig_name", "args", "orig_args"}]}}
    RequestMetadata = {"request_id", "message_id", "request_start_timestamp_ms",
                       "stream_end_timestamp_ms", "model_id", "user_prompt_length",
                       "response_size", "chat_conversation_type", "tool_use_ids_and_names", …}

Q keeps no token counts (only the sizes in bytes of the prompt and the response), so its
sessions have no usage records.
"""

from __future__ import annotations

import json
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import from_epoch, norm_iso, widen
from agtaild.model import Event

#: Tool calls waiting for their result (the oldest are dropped).
MAX_PENDING = 500


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tagged(value: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(value, dict) and len(value) == 1:
        ((tag, body),) = value.items()
        return str(tag), _dict(body)
    return "", {}


class HistoryReader:
    """One ConversationState into ``book``: every history entry's user and assistant message is
    one record; a ``latest_summary`` and a ``next_message`` one record each."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.pending: dict[str, Event] = {}
        #: Calls of the ``thinking`` tool (a thought, shown as ``thinking``): their empty
        #: results are merged into nothing.
        self.thoughts: set[str] = set()
        self.record = 0
        self.model: str | None = None
        #: Every event emitted, in order.
        self.log: list[Event] = []

    def _emit(self, kind: str, **fields: Any) -> Event:
        ev = self.book.emit(Event(seq=-1, kind=kind, source={"record": self.record}, **fields))
        self.log.append(ev)
        return ev

    def read(self, doc: dict[str, Any]) -> None:
        s = self.book.session
        info = _dict(doc.get("model_info"))
        self.model = _str(info.get("model_id")) or _str(doc.get("model"))
        summary = doc.get("latest_summary")
        if summary:
            self.record += 1
            text = summary[0] if isinstance(summary, list) and summary else summary
            meta = _dict(summary[1]) if isinstance(summary, list) and len(summary) > 1 else {}
            ts = from_epoch(meta.get("stream_end_timestamp_ms"), unit="ms")
            self._emit("summary", role="assistant", subtype="compact_summary", ts=ts,
                       text=text if isinstance(text, str) else None, raw=None if isinstance(text, str) else summary)  # fmt: skip
            s.compactions += 1
            s.started, s.ended = widen(s.started, s.ended, ts)
            self.book.count("events")
        history = doc.get("history")
        window = doc.get("valid_history_range")
        start = window[0] if isinstance(window, list) and window and isinstance(window[0], int) else 0
        for index, entry in enumerate(history if isinstance(history, list) else []):
            if not isinstance(entry, dict):
                self.record += 1
                self._emit("unknown", raw=entry)
                self.book.count("events")
                continue
            before = len(self.log)
            meta = _dict(entry.get("request_metadata"))
            self.record += 1
            self.book.count(self._user(entry.get("user")))
            self.record += 1
            self.book.count(self._assistant(entry.get("assistant"), meta))
            if index < start:  # kept but no longer sent to the model
                for ev in self.log[before:]:
                    ev.extra["outside_context"] = True
        if isinstance(doc.get("next_message"), dict):
            self.record += 1
            self.book.count(self._user(doc["next_message"], unsent=True))
        if self.model and self.model not in s.models:
            s.models.append(self.model)

    def _user(self, user: Any, *, unsent: bool = False) -> Category:
        s = self.book.session
        if not isinstance(user, dict):
            self._emit("unknown", role="user", raw=user)
            return "events"
        ts = norm_iso(user.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        cwd = _dict(_dict(user.get("env_context")).get("env_state")).get("current_working_directory")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd = cwd
        tag, body = _tagged(user.get("content"))
        emitted = False
        extra: dict[str, Any] = {"unsent": True} if unsent else {}
        images = user.get("images")
        if isinstance(images, list) and images:
            extra["media"] = [{"type": _str(_dict(i).get("format"))} for i in images]
        if tag in ("Prompt", "CancelledToolUses") and isinstance(body.get("prompt"), str):
            text = body["prompt"]
            self._emit("text", role="user", text=text, ts=ts, extra=extra)
            s.messages += 1
            if s.first_prompt is None and text:
                s.first_prompt = text
            emitted = True
        if tag in ("ToolUseResults", "CancelledToolUses"):
            results = body.get("tool_use_results")
            for result in results if isinstance(results, list) else []:
                emitted = (
                    self._result(result, ts, cancelled=tag == "CancelledToolUses", unsent=unsent) or emitted
                )
            return "events" if emitted else "merged"
        if tag != "Prompt":
            self._emit("unknown", role="user", ts=ts, raw=user)
            return "events"
        return "events"

    def _result(self, result: Any, ts: str | None, *, cancelled: bool, unsent: bool) -> bool:
        """Merge a result into its call; True when it had to become an event of its own."""
        if not isinstance(result, dict):
            self._emit("unknown", role="tool", raw=result, ts=ts)
            return True
        call_id = _str(result.get("tool_use_id"))
        if call_id in self.thoughts:
            return False
        texts: list[str] = []
        details: dict[str, Any] = {}
        content = result.get("content")
        for block in content if isinstance(content, list) else []:
            tag, _ = _tagged(block)
            value = block.get(tag) if isinstance(block, dict) else None
            if tag == "Text" and isinstance(value, str):
                texts.append(value)
            elif tag == "Json":
                if isinstance(value, dict) and "exit_status" in value:  # execute_bash
                    details = value
                    texts.extend(
                        v for v in (value.get("stdout"), value.get("stderr")) if isinstance(v, str) and v
                    )
                else:
                    texts.append(json.dumps(value, ensure_ascii=False))
        is_error = result.get("status") == "Error" or cancelled
        code = _exit_code(details.get("exit_status")) if details else None
        call = self.pending.pop(call_id, None) if call_id else None
        ev = call or self._emit("tool_result", role="tool", ts=ts, tool_use_id=call_id)
        ev.result = "\n".join(texts)
        ev.is_error = is_error or (code is not None and code != 0)
        if code is not None:
            ev.extra["exit_code"] = code
        if cancelled:
            ev.extra["cancelled"] = True
        if unsent:
            ev.extra["result_unsent"] = True
        if ts:
            ev.extra["result_ts"] = ts
        return call is None

    def _assistant(self, assistant: Any, meta: dict[str, Any]) -> Category:
        s = self.book.session
        model = _str(meta.get("model_id")) or self.model
        if model and model not in s.models:
            s.models.append(model)
        ts = from_epoch(meta.get("request_start_timestamp_ms"), unit="ms")
        s.started, s.ended = widen(s.started, s.ended, ts)
        s.started, s.ended = widen(
            s.started, s.ended, from_epoch(meta.get("stream_end_timestamp_ms"), unit="ms")
        )
        tag, body = _tagged(assistant)
        if tag not in ("Response", "ToolUse"):
            self._emit("unknown", role="assistant", ts=ts, raw=assistant)
            return "events"
        uuid = _str(body.get("message_id"))
        extra = {"request_id": meta["request_id"]} if _str(meta.get("request_id")) else {}
        content = _str(body.get("content"))
        if content:
            self._emit("text", role="assistant", text=content, ts=ts, model=model, uuid=uuid, extra=extra)
            s.messages += 1
        uses = body.get("tool_uses")
        for use in uses if isinstance(uses, list) else []:
            if not isinstance(use, dict):
                self._emit("unknown", role="assistant", ts=ts, raw=use)
                continue
            self._tool_use(use, ts, model, uuid)
        if not content and not uses:
            self._emit("text", role="assistant", text="", ts=ts, model=model, uuid=uuid, extra=extra)
        return "events"

    def _tool_use(self, use: dict[str, Any], ts: str | None, model: str | None, uuid: str | None) -> None:
        name, call_id, args = _str(use.get("name")), _str(use.get("id")), use.get("args")
        thought = _dict(args).get("thought")
        if name == "thinking" and isinstance(thought, str):
            self._emit("thinking", role="assistant", text=thought, ts=ts, model=model, uuid=uuid,
                       tool_use_id=call_id)  # fmt: skip
            if call_id:
                self.thoughts.add(call_id)
            return
        ev = self._emit("tool_use", role="assistant", tool=name, input=args, ts=ts, model=model, uuid=uuid,
                        tool_use_id=call_id)  # fmt: skip
        orig = _str(use.get("orig_name"))
        if orig and orig != name:
            ev.extra["orig_name"] = orig
        edit = fs_write_edit(name, args)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id:
            self.pending[call_id] = ev
            if len(self.pending) > MAX_PENDING:
                del self.pending[next(iter(self.pending))]


def _exit_code(value: Any) -> int | None:
    """``exit_status`` is written as a string (``"0"``); older builds may have a number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def fs_write_edit(tool: str | None, args: Any) -> dict[str, Any] | None:
    """``fs_write`` (``tools/fs_write.rs``, tagged by ``command``): ``create`` (``file_text``, else
    ``new_str``), ``str_replace`` (``old_str`` → ``new_str``), ``insert`` (``new_str`` after
    line ``insert_line``), ``append`` (``new_str`` at the end)."""
    if tool != "fs_write" or not isinstance(args, dict):
        return None
    path, command = args.get("path"), args.get("command")
    new = args.get("new_str")
    if command == "create":
        text = args.get("file_text") if isinstance(args.get("file_text"), str) else new
        return edits.edit_doc([edits.from_texts(path, "", text, op="create")])
    if command == "str_replace":
        return edits.edit_doc([edits.from_texts(path, args.get("old_str"), new)])
    if command == "insert" and isinstance(new, str):
        line = args.get("insert_line")
        after = line if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None
        hunk = {
            "old_start": (after or 0) + 1,
            "new_start": (after or 0) + 1,
            "lines": ["+" + x for x in new.splitlines()],
        }
        return edits.edit_doc([edits.file_change(path, [hunk], numbered=after is not None)])
    if command == "append" and isinstance(new, str):
        hunk = {"old_start": 1, "new_start": 1, "lines": ["+" + x for x in new.splitlines()]}
        return edits.edit_doc([edits.file_change(path, [hunk])])
    return None
