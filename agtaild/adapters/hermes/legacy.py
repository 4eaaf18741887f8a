"""Hermes's older session files: ``<home>/sessions/session_<id>.json``, one document each.

Releases before ``state.db`` wrote ``{session_id, model, platform, session_start,
last_updated, cwd | model_config.cwd, message_count, messages: [...]}``, the messages shaped
as the later database rows (``tool_calls`` a list rather than JSON text, no timestamps), so
they are read by the same :class:`~agtaild.adapters.hermes.messages.MessageReader`. Seen only
in peer fixtures (tests/corpus/hermes/agent-sessions). A file whose session is also in the
database (Hermes carried it over) is left to the database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.hermes.messages import MessageReader
from agtaild.adapters.kit.jsondoc import RecordBook, read_document
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.model import Event, Session, project_of

PREFIX = "session_"


def session_id_of(path: str) -> str:
    stem = Path(path).stem
    return stem[len(PREFIX) :] if stem.startswith(PREFIX) else stem


def read_legacy(agent: str, unit: Unit, *, now: float | None) -> ReadResult:
    doc = read_document(unit.path, now=now)
    book = RecordBook(Session(agent=agent, id=session_id_of(unit.path), path=unit.path, resumable=False))
    s = book.session
    if not doc.ok:
        if not doc.empty:
            book.bad(1)
            s.truncated = doc.settled
    elif not isinstance(doc.value, dict) or not isinstance(doc.value.get("messages"), list):
        book.emit(Event(seq=-1, kind="unknown", raw=doc.value, source={"row": 1}))
        book.count("events")
    else:
        _fill(book, doc.value)
    s.mtime = doc.mtime
    s.archived = unit.archived
    return book.result()


def _fill(book: RecordBook, value: dict[str, Any]) -> None:
    s = book.session
    if isinstance(value.get("session_id"), str) and value["session_id"]:
        s.id = value["session_id"]
    if isinstance(value.get("model"), str) and value["model"]:
        s.models.append(value["model"])
    reader = MessageReader(book)
    for number, msg in enumerate(value["messages"], 1):
        if isinstance(msg, dict) and msg.get("role") == "session_meta":
            book.count("metadata")
            continue
        if not isinstance(msg, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=msg, source={"row": number}))
            book.count("events")
            continue
        reader.row({**msg, "id": number}, number)
    cwd = value.get("cwd") if isinstance(value.get("cwd"), str) else sub(value, "model_config").get("cwd")
    s.cwd = cwd if isinstance(cwd, str) and cwd else None
    s.project = project_of(s.cwd)
    s.started = norm_iso(value.get("session_start")) or s.started
    s.ended = norm_iso(value.get("last_updated")) or s.ended or s.started
    if isinstance(value.get("platform"), str):
        s.origin = value["platform"]
    s.title = title_from_prompt(s.first_prompt)
    s.extra["format"] = "session json"
