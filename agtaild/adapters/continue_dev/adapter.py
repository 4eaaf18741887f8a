"""Continue (continuedev/continue: the IDE extensions and the ``cn`` CLI): ``~/.continue/sessions``.

Both write ``<global dir>/sessions/<sessionId>.json`` — one JSON document per session,
**rewritten whole** on every save — and the index ``sessions/sessions.json``
(``[{sessionId, title, dateCreated (epoch ms, a string), workspaceDirectory, messageCount}]``).
The global dir is ``$CONTINUE_GLOBAL_DIR`` (relative values resolve against the cwd), else
``~/.continue`` (``core/util/paths.ts``).

The document (``core/index.d.ts`` ``Session``): ``{sessionId, title, workspaceDirectory,
history: ChatHistoryItem[], mode?, chatModelTitle?, usage?}``. Each history item is one
accounting record; :mod:`agtaild.adapters.continue_dev.items` maps it. The file has **no timestamps**
but the IDE's ``reasoning.startAt``/``endAt``: a session's start is the index's ``dateCreated``
and its end the latest time recorded (a reasoning time, else ``dateCreated``) — never the file's
mtime, which a copy or a backup restore sets to "now".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.continue_dev.items import ItemMapper
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.jsondoc import JsonDocAdapter, RecordBook
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.model import Session, project_of

INDEX = "sessions.json"
#: The title Continue gives every session until it is named (``cn`` never names one).
UNTITLED = "Untitled Session"
#: Session ids Continue writes (UUIDs); anything else is never put on a command line.
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$")
_decoder = msgspec.json.Decoder()


class ContinueAdapter(JsonDocAdapter):
    id: ClassVar[str] = "continue"
    name: ClassVar[str] = "Continue"
    env_vars: ClassVar[tuple[str, ...]] = ("CONTINUE_GLOBAL_DIR",)
    root_help: ClassVar[str] = (
        "Continue's global dir (~/.continue, or $CONTINUE_GLOBAL_DIR) or its sessions folder"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("cn 1.5.47 (real)", "IDE-style items (synthetic)")
    retry_torn: ClassVar[bool] = True
    sample_roots: ClassVar[tuple[str, ...]] = ("real/continue-1.5.47", "continue/synthetic-agtail/.continue")

    def __init__(self) -> None:
        self._index_cache: dict[str, tuple[float, dict[str, dict[str, Any]]]] = {}

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [env_path(env, "CONTINUE_GLOBAL_DIR") or home / ".continue"]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        sessions = _sessions_dir(root)
        try:
            entries = sorted(sessions.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.suffix == ".json" and entry.name != INDEX and entry.is_file():
                yield Unit(agent=self.id, path=str(entry), files=[str(entry)], root=str(root))

    def native_files(self, unit: Unit) -> list[str]:
        """The index goes along (it alone knows when the session started); it is not in
        ``unit.files`` because every save rewrites it, which would re-read every session."""
        index = Path(unit.path).parent / INDEX
        return [*unit.files, *([str(index)] if index.is_file() else [])]

    # -- reading ----------------------------------------------------------------------------
    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        s = book.session
        if not isinstance(doc, dict):
            book.emit(_unknown(doc, 0))
            book.count("events")
            return
        s.id = _str(doc.get("sessionId")) or s.id
        title = _str(doc.get("title"))
        s.title = title if title and title != UNTITLED else None
        s.cwd = _workspace(doc.get("workspaceDirectory"))
        history = doc.get("history")
        mapper = ItemMapper(book)
        if not isinstance(history, list):
            if history is not None:
                book.emit(_unknown(history, 0))
                book.count("events")
        else:
            for i, item in enumerate(history):
                book.count(mapper.item(item, i))
        s.models = mapper.models
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.compactions = mapper.compactions
        s.ended = mapper.latest  # finish() adds the index's dateCreated
        if s.title is None and mapper.first_prompt:
            s.title = (
                next((ln.strip() for ln in mapper.first_prompt.splitlines() if ln.strip()), "")[:200] or None
            )
        extra: dict[str, Any] = {}
        usage = doc.get("usage")
        if isinstance(usage, dict):
            extra["agent_usage"] = usage
        for key in ("mode", "chatModelTitle"):
            if isinstance(doc.get(key), str):
                extra[key] = doc[key]
        s.extra = extra
        if mapper.open_calls:
            s.ending = "interrupted"

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        s.usage = book.total_usage()
        meta = self._index(Path(unit.path).parent).get(s.id, {})
        created = meta.get("dateCreated")
        if isinstance(created, str) and created.strip().isdigit():
            created = int(created.strip())
        s.started = from_epoch(created, unit="ms") if isinstance(created, int | float) else None
        recorded = [t for t in (s.started, s.ended) if t]
        s.ended = max(recorded) if recorded else None
        if s.cwd is None:
            s.cwd = _workspace(meta.get("workspaceDirectory"))
        index_title = _str(meta.get("title"))
        if index_title and index_title != UNTITLED:
            s.title = index_title
        s.project = project_of(s.cwd)
        if not settled and s.ending == "interrupted":
            s.ending = None
        return s

    def _index(self, folder: Path) -> dict[str, dict[str, Any]]:
        """``sessions.json`` by session id (cached while its mtime stays the same)."""
        path = folder / INDEX
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return {}
        cached = self._index_cache.get(str(path))
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            value = _decoder.decode(read_regular(path))
        except (OSError, msgspec.DecodeError):
            return {}
        table: dict[str, dict[str, Any]] = {}
        for entry in value if isinstance(value, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
                table[entry["sessionId"]] = entry
        self._index_cache[str(path)] = (mtime, table)
        return table

    def resume(self, session: Session) -> ResumeCommand | None:
        """``cn --resume`` only takes the most recent session; ``cn --fork <id>`` continues any
        session (as a new session file holding a copy of its history)."""
        if session.imported or not _ID_RE.match(session.id or ""):
            return None
        return ResumeCommand(argv=["cn", "--fork", session.id], cwd=session.cwd)


def _sessions_dir(root: Path) -> Path:
    """``--root`` may name the global dir or its ``sessions`` folder."""
    sessions = root / "sessions"
    return sessions if sessions.is_dir() else root


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _workspace(value: Any) -> str | None:
    """``workspaceDirectory`` is a path or, from the IDE, a ``file://`` URI."""
    text = _str(value)
    if text and text.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(text).path) or None
    return text


def _unknown(raw: Any, row: int) -> Any:
    from agtaild.model import Event

    return Event(seq=-1, kind="unknown", raw=raw, source={"row": row})
