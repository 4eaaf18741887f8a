"""The Claude.ai adapter: one exported conversation per file of the import store.

Each of ``chat_messages`` is one record. A message ``{uuid, sender: human|assistant, text,
content: [...], attachments: [{file_name, extracted_content, …}], files: [{file_name}],
created_at, parent_message_uuid?}`` becomes:

* ``human`` → ``text`` (``content``'s text blocks, else ``text``); each attachment with
  ``extracted_content`` → a ``text`` event of its own (``subtype: attachment``, the file
  name first) so that what was pasted is searchable; ``files`` (uploads without extracted
  text) → ``extra.files``;
* ``assistant`` → per content block: ``text`` → ``text``, ``thinking`` → ``thinking``,
  ``tool_use`` → ``tool_use`` (its ``id``, ``name``, ``input``), ``tool_result`` → the result
  of the call with its ``tool_use_id`` (``merged`` into it; ``is_error``), else
  ``tool_result``; a message without ``content`` → its ``text``.

Where messages carry ``parent_message_uuid`` (exports since 2025) the events follow the
tree and the branch marks come from the path ``current_leaf_message_uuid`` (else the last
message) → root (agtaild.adapters.kit.branch_marks); otherwise the array order stands.
The export records neither the model (unless the conversation says ``model``) nor token
usage. Never resumable: the conversation lives on claude.ai.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit
from agtaild.adapters.kit.branch_marks import branch_marks, mark_extra, tree_order
from agtaild.adapters.kit.export_docs import conversation_units
from agtaild.adapters.kit.export_zip import ExportError
from agtaild.adapters.kit.jsondoc import Category, JsonDocAdapter, RecordBook
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, Session

MARKER = b'"chat_messages"'


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


class ClaudeAiAdapter(JsonDocAdapter):
    id: ClassVar[str] = "claude-ai"
    name: ClassVar[str] = "Claude.ai (data export)"
    root_help: ClassVar[str] = "a folder of conversations `agtail import claude-ai` split from an export"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "Claude.ai data export (hand-made from the documented schema)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("claude-ai/synthetic-agtail/store",)
    export_service: ClassVar[str | None] = "claude-ai"

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from conversation_units(self.id, root, MARKER)

    def split_export(self, export: Any) -> list[tuple[str, Any]]:
        names = sorted(
            export.find(lambda p: p.name == "conversations.json"), key=lambda n: len(PurePosixPath(n).parts)
        )
        if not names:
            raise ExportError(f"{export.path} holds no conversations.json: not a Claude.ai export")
        doc = export.read_json(names[0])
        if not isinstance(doc, list):
            raise ExportError(f"{export.path}: {names[0]} is not an array of conversations")
        out: list[tuple[str, Any]] = []
        for i, conv in enumerate(doc):
            uuid = _str(conv.get("uuid")) if isinstance(conv, dict) else None
            if uuid is None or not isinstance(conv.get("chat_messages"), list):
                raise ExportError(
                    f"{export.path}: {names[0]}[{i}] is not a Claude.ai conversation (no uuid or chat_messages)"
                )
            out.append((uuid, conv))
        return out

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        s = book.session
        if not isinstance(doc, dict) or not isinstance(doc.get("chat_messages"), list):
            book.bad(1)
            return
        title = _str(doc.get("name"))
        s.title = title.strip() if title and title.strip() else None
        for key in ("created_at", "updated_at"):
            s.started, s.ended = widen(s.started, s.ended, norm_iso(doc.get(key)))
        model = _str(doc.get("model"))
        if model:
            s.models.append(model)
        if isinstance(doc.get("project_uuid"), str):
            s.extra["project_uuid"] = doc["project_uuid"]
        messages: list[Any] = doc["chat_messages"]
        ids = [_str(m.get("uuid")) if isinstance(m, dict) else None for m in messages]
        by_id = {u: i for i, u in enumerate(ids) if u is not None}
        pairs = [
            (u, _str(messages[i].get("parent_message_uuid"))) for i, u in enumerate(ids) if u is not None
        ]
        order = list(range(len(messages)))
        marks: dict[str, Any] = {}
        if any(p is not None for _, p in pairs):
            leaf = _str(doc.get("current_leaf_message_uuid")) or next((u for u in reversed(ids) if u), None)
            marks, forks = branch_marks(pairs, leaf)
            if forks:
                s.extra["forks"] = forks
            tree = [by_id[u] for u in tree_order(pairs)]
            order = tree + [i for i, u in enumerate(ids) if u is None]
        calls: dict[str, Event] = {}
        for i in order:
            msg = messages[i]
            if not isinstance(msg, dict):
                book.bad(i + 1)
                continue
            extra = mark_extra(marks.get(ids[i] or ""))
            book.count(self._message(msg, i, book, calls, model, extra))

    def _message(self, msg: dict[str, Any], i: int, book: RecordBook, calls: dict[str, Event], model: str | None,
                 marks: dict[str, Any]) -> Category:  # fmt: skip
        s = book.session
        ts = norm_iso(msg.get("created_at"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        sender = msg.get("sender")
        base: dict[str, Any] = {"ts": ts, "uuid": _str(msg.get("uuid")),
                                "parent_uuid": _str(msg.get("parent_message_uuid")), "source": {"message": i}}  # fmt: skip
        blocks = (
            [b for b in msg.get("content") or () if isinstance(b, dict)]
            if isinstance(msg.get("content"), list)
            else []
        )
        emitted = merged = 0

        def emit(kind: str, **fields: Any) -> Event:
            nonlocal emitted
            emitted += 1
            return book.emit(Event(seq=-1, kind=kind, extra=dict(marks), **base, **fields))

        if sender == "human":
            text = "\n".join(
                str(b["text"]) for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
            )
            if not text and isinstance(msg.get("text"), str):
                text = msg["text"]
            ev = emit("text", role="user", text=text)
            s.messages += 1
            if s.first_prompt is None and text.strip():
                s.first_prompt = text
            files = [
                f.get("file_name")
                for f in msg.get("files") or ()
                if isinstance(f, dict) and _str(f.get("file_name"))
            ]
            if files:
                ev.extra["files"] = files
            for att in msg.get("attachments") or ():
                if not isinstance(att, dict):
                    continue
                name = _str(att.get("file_name")) or "attachment"
                body = att.get("extracted_content")
                if isinstance(body, str) and body:
                    emit("text", role="user", text=f"{name}\n\n{body}", subtype="attachment",
                         input={k: att[k] for k in ("file_name", "file_type", "file_size") if k in att})  # fmt: skip
            return "events"
        if sender != "assistant":
            emit("unknown", raw=msg)
            return "events"
        if not blocks and isinstance(msg.get("text"), str) and msg["text"]:
            blocks = [{"type": "text", "text": msg["text"]}]
        said = False
        for b in blocks:
            kind = b.get("type")
            if kind == "text" and isinstance(b.get("text"), str):
                if b["text"].strip():
                    emit("text", role="assistant", text=b["text"], model=model)
                    said = True
            elif kind == "thinking":
                thought = b.get("thinking") if isinstance(b.get("thinking"), str) else b.get("text")
                if isinstance(thought, str) and thought.strip():
                    emit("thinking", role="assistant", text=thought, model=model)
            elif kind == "tool_use":
                call_id = _str(b.get("id"))
                ev = emit("tool_use", role="assistant", tool=_str(b.get("name")), input=b.get("input"), model=model,
                          tool_use_id=call_id)  # fmt: skip
                if call_id:
                    calls[call_id] = ev
            elif kind == "tool_result":
                call = calls.pop(_str(b.get("tool_use_id")) or "", None)
                text = _result_text(b.get("content"))
                if call is not None:
                    call.result = text
                    call.is_error = b.get("is_error") is True
                    merged += 1
                else:
                    emit("tool_result", role="tool", tool=_str(b.get("name")), text=text, result=text,
                         is_error=b.get("is_error") is True, tool_use_id=_str(b.get("tool_use_id")))  # fmt: skip
            else:
                emit("unknown", raw=b)
        if said:
            s.messages += 1
        if emitted:
            return "events"
        return "merged" if merged else "skipped"

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        s.resumable = False
        if not s.title:
            s.title = title_from_prompt(s.first_prompt)
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        return None  # the conversation lives on claude.ai; nothing on this machine resumes it
