"""Reading one OpenCode session out of the older ``storage/`` JSON tree (before 1.2).

Layout: ``storage/session/<projectID>/<sessionID>.json``,
``storage/message/<sessionID>/<messageID>.json``, ``storage/part/<messageID>/<partID>.json``.
The objects are the same as in the database's ``data`` columns, but carry their ids
(``id``, ``sessionID``, ``messageID``) inside and the session's times as ``time: {…}``.
Every file is one record for the accounting.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.jsondoc import Document, RecordBook, read_document
from agtaild.adapters.kit.values import sub
from agtaild.adapters.opencode.parts import Message, Row


def _listed(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` but hidden ones, by name, listed by the shared scanner: a
    folder that cannot be listed is a discovery problem, a missing one none (agtaild.adapters.kit.scan)."""
    return [e for e in scan.entries(folder) if not e.name.startswith(".")]


def _json_files(folder: Path) -> list[Path]:
    """The ``*.json`` files of ``folder`` (an entry that cannot be looked at is a problem)."""
    return [Path(e.path) for e in _listed(folder) if e.name.endswith(".json") and scan.is_file(e)]


def session_files(storage: Path) -> Iterator[Path]:
    """Every ``storage/session/<project>/<id>.json``, in a stable order."""
    for project in _listed(storage / "session"):
        if scan.is_dir(project):
            yield from _json_files(Path(project.path))


def message_files(storage: Path, session_id: str) -> list[Path]:
    return _json_files(storage / "message" / session_id)


def part_files(storage: Path, message_id: str) -> list[Path]:
    return _json_files(storage / "part" / message_id)


def unit_files(storage: Path, session_file: Path) -> list[str]:
    """The session file, its message files and their part files (for export and sync)."""
    files = [session_file]
    for message in message_files(storage, session_file.stem):
        files.append(message)
        files.extend(part_files(storage, message.stem))
    return [str(f) for f in files]


def storage_of(session_file: Path) -> Path:
    """``storage/session/<project>/<id>.json`` → ``storage``."""
    return session_file.parent.parent.parent


def session_info(doc: Document) -> dict[str, Any]:
    """The session file in the database's column names (what opencode_parts.build reads)."""
    value = doc.value if doc.ok and isinstance(doc.value, dict) else {}
    time = sub(value, "time")
    share = sub(value, "share")
    return {
        "id": value.get("id"),
        "title": value.get("title"),
        "directory": value.get("directory"),
        "version": value.get("version"),
        "slug": value.get("slug"),
        "project_id": value.get("projectID"),
        "parent_id": value.get("parentID"),
        "share_url": share.get("url"),
        "time_created": time.get("created"),
        "time_updated": time.get("updated"),
        "time_archived": time.get("archived"),
    }


def _row(path: Path, number: int, now: float) -> tuple[Row, float]:
    try:
        doc = read_document(path, now=now)
    except OSError:
        return Row(id=path.stem, data=None, number=number), 0.0
    data = doc.value if doc.ok and isinstance(doc.value, dict) else None
    own_id = data.get("id") if data is not None else None
    return Row(id=own_id if isinstance(own_id, str) else path.stem, data=data, number=number), doc.mtime


def read_session(
    book: RecordBook, session_file: Path, *, now: float
) -> tuple[dict[str, Any], list[Message], float]:
    """The session's info (its file counted in ``book``), its messages in order, and the
    newest modification time among the files read."""
    storage = storage_of(session_file)
    doc = read_document(session_file, now=now)
    if doc.ok and isinstance(doc.value, dict):
        book.count("metadata")
    elif not doc.empty:
        book.bad(1)
    info = session_info(doc)
    newest = doc.mtime
    number = 2
    messages: list[Message] = []
    for message_file in message_files(storage, session_file.stem):
        message_row, mtime = _row(message_file, number, now)
        number += 1
        parts = []
        for part_file in part_files(storage, message_file.stem):
            part_row, part_mtime = _row(part_file, number, now)
            number += 1
            parts.append(part_row)
            newest = max(newest, part_mtime)
        parts.sort(key=lambda r: r.id)
        messages.append(Message(row=message_row, parts=parts))
        newest = max(newest, mtime)
    messages.sort(key=_message_order)
    return info, messages, newest


def _message_order(m: Message) -> tuple[float, str]:
    created = sub(m.row.data if m.row is not None else None, "time").get("created")
    return (float(created) if isinstance(created, int | float) else 0.0, m.row.id if m.row else "")


def parent_call(storage: Path, parent_id: str, child_id: str) -> str | None:
    """The ``callID`` of the parent's ``task`` part that started ``child_id``."""
    needle = child_id.encode()
    for message_file in message_files(storage, parent_id):
        for part_file in part_files(storage, message_file.stem):
            try:
                data = read_regular(part_file)
            except OSError:
                continue
            if needle not in data:
                continue
            doc = read_document(part_file)
            part: dict[str, Any] = doc.value if doc.ok and isinstance(doc.value, dict) else {}
            state = part.get("state")
            meta = state.get("metadata") if isinstance(state, dict) else None
            if (
                isinstance(meta, dict)
                and meta.get("sessionId") == child_id
                and isinstance(part.get("callID"), str)
            ):
                return str(part["callID"])
    return None
