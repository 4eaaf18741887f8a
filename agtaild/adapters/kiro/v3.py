"""Kiro CLI's "v3" engine sessions (kiro-cli 2.28+ with the v3 agent engine, CLI 3.0).

Known only from release notes and a peer's description: one directory per session,
``~/.kiro/sessions/<sha256 prefix>/sess_<uuid>/messages.jsonl``, whose lines include
``session_start``, ``session_metadata``, ``turn_start``, ``turn_end`` and ``usage_summary``
records among user/assistant/tool records. No sample has been seen, so this reader maps only
what is unambiguous — a record with a ``role`` of user/assistant and text content, and those
named system records — and keeps every other line as an ``unknown`` event with its raw JSON.
It never guesses token counts.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.session_dir import BadRecord, SessionDir, SessionDirAdapter, jsonl_records
from agtaild.adapters.kit.stamps import any_time, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, project_of

SYSTEM_RECORDS = frozenset({"session_start", "session_metadata", "turn_start", "turn_end", "usage_summary"})


class KiroV3Reader(SessionDirAdapter):
    """The v3 reader; :class:`agtaild.adapters.kiro.adapter.KiroAdapter` dispatches to it."""

    id: ClassVar[str] = "kiro"
    member_files: ClassVar[tuple[str, ...]] = ("messages.jsonl",)
    marker_files: ClassVar[tuple[str, ...]] = ("messages.jsonl",)
    session_depth: ClassVar[int] = 2

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        s.extra["store"] = "v3"
        if not sdir.has("messages.jsonl"):
            return
        for line, obj in jsonl_records(sdir.files["messages.jsonl"], settled=sdir.settled):
            if isinstance(obj, BadRecord):
                book.bad(line)
                s.truncated = s.truncated or obj.torn
                continue
            self._record(book, line, obj)
            book.count("events")
        s.title = s.title or title_from_prompt(s.first_prompt)

    def _record(self, book: RecordBook, line: int, obj: Any) -> None:
        s = book.session
        rec = obj if isinstance(obj, dict) else {}
        kind = rec.get("type") if isinstance(rec.get("type"), str) else rec.get("kind")
        kind = kind if isinstance(kind, str) else None
        ts = any_time(rec.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        role = rec.get("role")
        if kind in SYSTEM_RECORDS:
            self._system(book, kind, rec)
            book.emit(Event(seq=-1, kind="system", subtype=kind, ts=ts, source={"line": line}, raw=obj))
            return
        text = _text(rec.get("content"))
        if role in ("user", "assistant") and text is not None:
            book.emit(Event(seq=-1, kind="text", role=role, text=text, ts=ts, source={"line": line}))
            s.messages += 1
            if role == "user" and s.first_prompt is None and text:
                s.first_prompt = text
            return
        book.emit(Event(seq=-1, kind="unknown", ts=ts, source={"line": line}, raw=obj))

    @staticmethod
    def _system(book: RecordBook, kind: str, rec: dict[str, Any]) -> None:
        """Take a cwd or title only where a record states it plainly."""
        s = book.session
        data: dict[str, Any] = rec["data"] if isinstance(rec.get("data"), dict) else rec
        cwd = data.get("cwd")
        if isinstance(cwd, str) and cwd and s.cwd is None:
            s.cwd, s.project = cwd, project_of(cwd)
        title = data.get("title")
        if isinstance(title, str) and title:
            s.title = title


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        if isinstance(block, dict):
            value = block.get("text") if isinstance(block.get("text"), str) else block.get("data")
            if isinstance(value, str) and block.get("type", block.get("kind")) == "text":
                parts.append(value)
    return "\n".join(parts) if parts else None
