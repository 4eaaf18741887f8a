"""A Claude Desktop session record, ``local_<id>.json`` (one JSON object, rewritten by the app).

Fields read: ``sessionId`` (= the file name), ``cliSessionId`` (the Claude Code session the
app ran), ``title``, ``cwd``, ``originCwd``, ``worktreePath``, ``userSelectedFolders``,
``createdAt`` / ``lastActivityAt`` (epoch ms), ``isArchived``, ``initialMessage``, ``model``;
a Cowork record also has ``hostLoopMode``. None of this is a documented format: every field is
optional and checked for its type.
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.stamps import from_epoch_ms, norm_iso

#: A record's file name.
RECORD_NAME = re.compile(r"^local_[0-9A-Fa-f][0-9A-Fa-f-]{7,}\.json$")
#: The most of a record read (they are a few KB).
MAX_RECORD = 4 * 1024 * 1024


class DesktopRecord(msgspec.Struct):
    session_id: str
    cli_session_id: str | None = None
    title: str | None = None
    cwd: str | None = None
    created: str | None = None
    last_activity: str | None = None
    archived: bool = False
    initial_message: str | None = None
    model: str | None = None
    cowork_fields: bool = False
    folders: list[str] = msgspec.field(default_factory=list)
    origin_cwd: str | None = None
    worktree: str | None = None


def _str(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _time(value: Any) -> str | None:
    return norm_iso(value) if isinstance(value, str) else from_epoch_ms(value)


def read_record(path: str) -> DesktopRecord | None:
    """The record at ``path``; None when it cannot be read or is not a JSON object."""
    try:
        doc = msgspec.json.decode(read_regular(path, MAX_RECORD))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    stem = os.path.basename(path)[: -len(".json")]
    folders = doc.get("userSelectedFolders")
    return DesktopRecord(
        session_id=_str(doc, "sessionId") or stem,
        cli_session_id=_str(doc, "cliSessionId"),
        title=_str(doc, "title"),
        cwd=_str(doc, "cwd"),
        created=_time(doc.get("createdAt")),
        last_activity=_time(doc.get("lastActivityAt")),
        archived=doc.get("isArchived") is True,
        initial_message=_str(doc, "initialMessage"),
        model=_str(doc, "model"),
        cowork_fields="hostLoopMode" in doc,
        folders=[f for f in folders if isinstance(f, str)] if isinstance(folders, list) else [],
        origin_cwd=_str(doc, "originCwd"),
        worktree=_str(doc, "worktreePath"),
    )
