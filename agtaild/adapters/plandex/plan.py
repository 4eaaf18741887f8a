"""A Plandex plan folder's files → events.

Shapes (``app/server/db/data_models.go``, plandex 2.2.1, Go's ``encoding/json``):

* ``conversation/<id>.json`` — ``ConvoMessage`` ``{"id", "orgId", "planId", "userId", "role":
  "user"|"assistant", "tokens", "num", "message", "stopped", "subtask", "addedSubtasks",
  "removedSubtasks", "flags": {"didMakePlan", "isChat", "didWriteCode", "didCompleteTask",
  "didCompletePlan", "hasError", …, "CurrentStage": {…}}, "activatePaths", "createdAt"}``.
  Messages are ordered by ``num``; ``tokens`` is Plandex's count of the message's own tokens.
* ``descriptions/<id>.json`` — ``ConvoMessageDescription`` ``{"convoMessageId", "commitMsg",
  "operations": [{"Type", "Path", "Destination", "Content", "Description", …}], "wroteFiles",
  "didBuild", "error", "appliedAt", …}``: what a reply proposed.
* ``results/<id>.json`` — ``PlanFileResult`` ``{"convoMessageId", "path", "content",
  "replacements": [{"old", "new", "summary", "failed", …}], "removedFile", "anyFailed",
  "error", "appliedAt", "rejectedAt", …}``: one file change built from a reply.

Mapping: a user message → ``text`` user; an assistant message → ``text`` assistant (its
``tokens`` → a usage record of output tokens, ``extra.flags``, ``extra.subtask``), then its
description (``extra.commit_msg``, ``extra.operations`` without their contents) and one
``tool_use`` ``build`` per result for it (``input.path``, ``extra.edit`` from the
replacements, the whole new content or the removal; ``is_error`` when a replacement failed or
the build has an error). A file that does not decode is one bad record.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.session_dir import BadRecord
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import num
from agtaild.model import Event, Usage, UsageRecord


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class PlanReader:
    """One plan's decoded files (name → document or BadRecord) into ``book``."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.last: dict[str, Any] | None = None
        #: message id → its event (descriptions land on their reply).
        self.by_id: dict[str, Event] = {}

    def read(self, messages: dict[str, Any], descriptions: dict[str, Any], results: dict[str, Any]) -> None:
        book, s = self.book, self.book.session
        by_message: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        described: dict[str, tuple[str, dict[str, Any]]] = {}
        orphans: list[tuple[str, Any]] = []
        for name, doc in descriptions.items():
            if isinstance(doc, dict) and _str(doc.get("convoMessageId")):
                described[doc["convoMessageId"]] = (name, doc)
            else:
                orphans.append((f"descriptions/{name}", doc))
        for name, doc in sorted(results.items(), key=lambda kv: (str(_dict(kv[1]).get("createdAt")), kv[0])):
            if isinstance(doc, dict) and _str(doc.get("convoMessageId")):
                by_message.setdefault(doc["convoMessageId"], []).append((name, doc))
            else:
                orphans.append((f"results/{name}", doc))
        good = [(name, doc) for name, doc in messages.items() if isinstance(doc, dict)]
        good.sort(key=lambda kv: (num(kv[1], "num"), str(kv[1].get("createdAt")), kv[0]))
        for name, doc in messages.items():
            if not isinstance(doc, dict):
                orphans.append((f"conversation/{name}", doc))
        for name, doc in good:
            self._message(name, doc)
            mid = _str(doc.get("id")) or name.removesuffix(".json")
            if mid in described:
                self._description(*described.pop(mid))
            for rname, result in by_message.pop(mid, []):
                self._result(rname, result)
        for name, doc in described.values():  # a description of a message that is gone
            self._description(name, doc)
        for results_left in by_message.values():
            for rname, result in results_left:
                self._result(rname, result)
        for number, (name, doc) in enumerate(orphans, 1):
            if isinstance(doc, BadRecord) or not isinstance(doc, dict):
                book.bad(number)
                s.extra.setdefault("bad_files", []).append(name)
                if isinstance(doc, BadRecord):
                    s.truncated = True
            else:
                book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"file": name}))
                book.count("events")

    def _message(self, name: str, doc: dict[str, Any]) -> None:
        book, s = self.book, self.book.session
        ts = norm_iso(doc.get("createdAt"))
        if ts:
            s.started = min(s.started or ts, ts)
            s.ended = max(s.ended or ts, ts)
        role, text = doc.get("role"), doc.get("message") if isinstance(doc.get("message"), str) else None
        source = {"file": f"conversation/{name}", "num": doc.get("num")}
        extra: dict[str, Any] = {"tokens": num(doc, "tokens")}
        if doc.get("stopped") is True:
            extra["stopped"] = True
        flags = {k: v for k, v in _dict(doc.get("flags")).items() if v is True}
        if flags:
            extra["flags"] = sorted(flags)
        for key in ("subtask", "addedSubtasks", "removedSubtasks"):
            if doc.get(key):
                extra[key] = doc[key]
        if role == "user":
            ev = book.emit(Event(seq=-1, kind="text", role="user", ts=ts, text=text, uuid=_str(doc.get("id")), source=source,
                                 extra=extra))  # fmt: skip
            s.messages += 1
            if s.first_prompt is None and text:
                s.first_prompt = text
        elif role == "assistant":
            ev = book.emit(Event(seq=-1, kind="text", role="assistant", ts=ts, text=text, uuid=_str(doc.get("id")),
                                 source=source, extra=extra))  # fmt: skip
            s.messages += 1
            tokens = num(doc, "tokens")
            if tokens:
                key = f"message:{doc.get('id') or name}"
                book.add_usage(
                    UsageRecord(key=key, ts=ts, model=None, usage=Usage(output_tokens=tokens).fix_total())
                )
        else:
            ev = book.emit(Event(seq=-1, kind="unknown", role=_str(role), ts=ts, raw=doc, source=source))
        if ev.uuid:
            self.by_id[ev.uuid] = ev
        self.last = doc
        book.count("events")

    def _description(self, name: str, doc: dict[str, Any]) -> None:
        """What a reply proposed: kept on that reply's event (one metadata record)."""
        book = self.book
        target = self.by_id.get(doc["convoMessageId"]) if isinstance(doc.get("convoMessageId"), str) else None
        info: dict[str, Any] = {}
        if _str(doc.get("commitMsg")):
            info["commit_msg"] = doc["commitMsg"]
        ops = doc.get("operations")
        if isinstance(ops, list) and ops:
            info["operations"] = [
                {k: o.get(k) for k in ("Type", "Path", "Destination") if o.get(k)}
                for o in ops
                if isinstance(o, dict)
            ]
        for key in ("error", "appliedAt"):
            if doc.get(key):
                info[key] = doc[key]
        if target is not None:
            target.extra["description"] = info
            book.count("metadata")
        else:
            book.emit(Event(seq=-1, kind="system", subtype="plan_description", ts=norm_iso(doc.get("createdAt")),
                            text=info.get("commit_msg"), source={"file": f"descriptions/{name}"}, extra=info))  # fmt: skip
            book.count("events")

    def _result(self, name: str, doc: dict[str, Any]) -> None:
        path = _str(doc.get("path"))
        replacements = [r for r in doc.get("replacements") or [] if isinstance(r, dict)]
        changes: list[dict[str, Any] | None] = []
        if doc.get("removedFile") is True:
            changes.append(edits.file_change(path, [], op="delete"))
        elif replacements:
            hunks: list[dict[str, Any]] = []
            for r in replacements:
                change = edits.from_texts(path, r.get("old"), r.get("new"))
                hunks += change["hunks"] if change else []
            changes.append(edits.file_change(path, hunks))
        elif isinstance(doc.get("content"), str):
            changes.append(edits.from_texts(path, "", doc["content"], op="create"))
        failed = (
            doc.get("anyFailed") is True
            or bool(doc.get("error"))
            or any(r.get("failed") is True for r in replacements)
        )
        summaries = [r["summary"] for r in replacements if isinstance(r.get("summary"), str) and r["summary"]]
        extra: dict[str, Any] = {}
        edit = edits.edit_doc(changes)
        if edit is not None:
            extra["edit"] = edit
        for key in ("appliedAt", "rejectedAt", "syntaxErrors"):
            if doc.get(key):
                extra[key] = doc[key]
        self.book.emit(Event(seq=-1, kind="tool_use", role="assistant", ts=norm_iso(doc.get("createdAt")), tool="build",
                             input={"path": path}, result=_str(doc.get("error")) or "\n".join(summaries), is_error=failed,
                             tool_use_id=_str(doc.get("id")), source={"file": f"results/{name}"}, extra=extra))  # fmt: skip
        self.book.count("events")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
