"""The ChatGPT adapter: one exported conversation per file of the import store.

A conversation's ``mapping`` is read as a tree: every node is one record (accounting), the
events follow the tree depth first (each alternative's continuation after it), and the
branch marks come from the path ``current_node`` → root (agtaild.adapters.kit.branch_marks).
What each node becomes:

* no ``message`` (the root) → skipped; ``system`` messages, custom instructions and memory
  (and any message with ``metadata.is_visually_hidden_from_conversation``) → ``system``
  ``context`` (skipped when empty);
* ``user`` → ``text`` (the prompt);
* ``assistant`` to ``recipient`` ``all`` → ``text`` (model = ``metadata.model_slug``, else the
  conversation's ``default_model_slug``); ``thoughts`` → ``thinking``; ``reasoning_recap`` →
  metadata; to any other recipient (``python``, ``web.run``, ``dalle.text2im``, …) →
  ``tool_use`` (tool = the recipient, input = the text, decoded when it is a JSON object);
* ``tool`` → the result of the nearest call above it still waiting (``merged``;
  ``is_error`` for ``system_error`` or a failed ``aggregate_result``), else ``tool_result``.

The export records no token usage. Never resumable: the conversation lives on the service.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

import msgspec

from agtaild.adapters.base import ResumeCommand, Unit
from agtaild.adapters.chatgpt.messages import content_text
from agtaild.adapters.kit.branch_marks import branch_marks, mark_extra, tree_order
from agtaild.adapters.kit.export_docs import conversation_units
from agtaild.adapters.kit.export_zip import ExportError
from agtaild.adapters.kit.jsondoc import Category, JsonDocAdapter, RecordBook
from agtaild.adapters.kit.stamps import from_epoch, widen
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.model import Event, Session

#: The key discovery looks for in a stored conversation's first bytes.
MARKER = b'"mapping"'
#: How far up the tree a tool message looks for the call it answers.
MAX_CALL_DISTANCE = 8


def conversation_id(conv: Any) -> str | None:
    for key in ("conversation_id", "id"):
        value = conv.get(key) if isinstance(conv, dict) else None
        if isinstance(value, str) and value.strip():
            return value
    return None


class ChatGptAdapter(JsonDocAdapter):
    id: ClassVar[str] = "chatgpt"
    name: ClassVar[str] = "ChatGPT (data export)"
    root_help: ClassVar[str] = "a folder of conversations `agtail import chatgpt` split from an export"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "ChatGPT data export (hand-made from the documented schema)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("chatgpt/synthetic-agtail/store",)
    export_service: ClassVar[str | None] = "chatgpt"

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from conversation_units(self.id, root, MARKER)

    def split_export(self, export: Any) -> list[tuple[str, Any]]:
        names = export.find(lambda p: p.name == "conversations.json")
        if not names:
            raise ExportError(f"{export.path} holds no conversations.json: not a ChatGPT export")
        out: list[tuple[str, Any]] = []
        for name in sorted(names, key=lambda n: len(PurePosixPath(n).parts)):
            doc = export.read_json(name)
            if not isinstance(doc, list):
                raise ExportError(f"{export.path}: {name} is not an array of conversations")
            for i, conv in enumerate(doc):
                cid = conversation_id(conv)
                if cid is None or not isinstance(conv.get("mapping"), dict):
                    raise ExportError(
                        f"{export.path}: {name}[{i}] is not a ChatGPT conversation (no id or mapping)"
                    )
                out.append((cid, conv))
            break  # the shallowest conversations.json is the export's own
        return out

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        s = book.session
        if not isinstance(doc, dict) or not isinstance(doc.get("mapping"), dict):
            book.bad(1)
            return
        title = doc.get("title")
        if isinstance(title, str) and title.strip():
            s.title = title.strip()
        s.started, s.ended = widen(s.started, s.ended, from_epoch(doc.get("create_time")))
        s.started, s.ended = widen(s.started, s.ended, from_epoch(doc.get("update_time")))
        default_model = (
            doc.get("default_model_slug") if isinstance(doc.get("default_model_slug"), str) else None
        )
        mapping: dict[str, Any] = doc["mapping"]
        pairs = [(str(k), _parent(v)) for k, v in mapping.items()]
        leaf = doc.get("current_node") if isinstance(doc.get("current_node"), str) else None
        marks, forks = branch_marks(pairs, leaf)
        if forks:
            s.extra["forks"] = forks
        if leaf:
            s.extra["leaf"] = leaf
        calls: dict[str, Event] = {}
        parents = dict(pairs)
        for node_id in tree_order(pairs):
            node = mapping.get(node_id)
            category = self._node(
                node, node_id, parents, calls, book, default_model, mark_extra(marks.get(node_id))
            )
            if category == "bad":
                book.bad(len(book.events) + 1)
            else:
                book.count(category)
        for key in ("gizmo_id", "conversation_template_id", "is_archived"):
            if doc.get(key) is not None:
                s.extra[key] = doc[key]

    def _node(
        self, node: Any, node_id: str, parents: dict[str, str | None], calls: dict[str, Event], book: RecordBook,
        default_model: str | None, marks: dict[str, Any],
    ) -> Category | Literal["bad"]:  # fmt: skip
        if not isinstance(node, dict):
            return "bad"
        msg = node.get("message")
        if msg is None:
            return "skipped"
        if not isinstance(msg, dict):
            return "bad"
        s = book.session
        author = sub(msg, "author")
        role = author.get("role")
        content = sub(msg, "content")
        kind = content.get("content_type")
        text = content_text(content)
        ts = from_epoch(msg.get("create_time"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        meta = sub(msg, "metadata")
        parent = parents.get(node_id)
        base: dict[str, Any] = {"ts": ts, "uuid": node_id, "parent_uuid": parent, "source": {"node": node_id}}
        extra = dict(marks)
        attachments = [
            a.get("name") for a in meta.get("attachments") or () if isinstance(a, dict) and a.get("name")
        ]
        if attachments:
            extra["attachments"] = attachments

        def emit(kind_: str, **fields: Any) -> Category:
            book.emit(Event(seq=-1, kind=kind_, extra=extra, **base, **fields))
            return "events"

        hidden = meta.get("is_visually_hidden_from_conversation") is True
        if role == "system" or kind in ("user_editable_context", "model_editable_context") or hidden:
            if not text.strip():
                return "skipped"
            return emit("system", role="system" if role == "system" else role, text=text, subtype="context")
        if role == "user":
            s.messages += 1
            if s.first_prompt is None and text.strip():
                s.first_prompt = text
            return emit("text", role="user", text=text)
        if role == "assistant":
            model = meta.get("model_slug") if isinstance(meta.get("model_slug"), str) else default_model
            if model and model not in s.models:
                s.models.append(model)
            recipient = msg.get("recipient")
            if kind == "reasoning_recap":
                return "metadata"
            if kind == "thoughts":
                return emit("thinking", role="assistant", text=text, model=model) if text else "skipped"
            if isinstance(recipient, str) and recipient not in ("all", ""):
                ev = book.emit(Event(seq=-1, kind="tool_use", role="assistant", tool=recipient, input=_tool_input(text),
                                     model=model, tool_use_id=node_id, extra=extra, **base))  # fmt: skip
                calls[node_id] = ev
                return "events"
            if not text.strip():
                return "skipped"
            s.messages += 1
            return emit("text", role="assistant", text=text, model=model)
        if role == "tool":
            failed = kind == "system_error" or sub(meta, "aggregate_result").get("status") in (
                "failed",
                "error",
            )
            call = _waiting_call(parent, parents, calls)
            if call is not None:
                call.result = text
                call.is_error = failed
                if ts:
                    call.extra = {**call.extra, "result_ts": ts}
                calls.pop(call.tool_use_id or "", None)
                return "merged"
            name = author.get("name") if isinstance(author.get("name"), str) else None
            return emit("tool_result", role="tool", tool=name, text=text, result=text, is_error=failed)
        return emit("unknown", raw=msg)

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        s.resumable = False
        if not s.title:
            s.title = title_from_prompt(s.first_prompt)
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        return None  # the conversation lives on chatgpt.com; nothing on this machine resumes it


def _parent(node: Any) -> str | None:
    parent = node.get("parent") if isinstance(node, dict) else None
    return parent if isinstance(parent, str) else None


def _waiting_call(start: str | None, parents: dict[str, str | None], calls: dict[str, Event]) -> Event | None:
    cur = start
    for _ in range(MAX_CALL_DISTANCE):
        if cur is None:
            return None
        if cur in calls:
            return calls[cur]
        cur = parents.get(cur)
    return None


def _tool_input(text: str) -> Any:
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = msgspec.json.decode(stripped)
        except (msgspec.DecodeError, RecursionError):
            return {"text": text}
        if isinstance(value, dict):
            return value
    return {"text": text}
