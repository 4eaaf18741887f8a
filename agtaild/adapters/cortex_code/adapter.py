"""The Snowflake Cortex Code adapter: ``<SNOWFLAKE_HOME>/cortex/conversations/<uuid>.json``.

Cortex Code keeps its config dir in ``~/.snowflake/cortex`` on Linux and macOS; ``SNOWFLAKE_HOME``
moves the ``~/.snowflake`` folder (Snowflake's "Cortex Code CLI Settings" page). A conversation
is ``conversations/<session id>.json``, rewritten whole: ``{session_id, title, history[],
connection_name, working_directory, git_root, git_branch, created_at, last_updated,
history_length, session_type, permission_cache}``. Once a conversation grows large its
``history`` moves out to ``<session id>.history.jsonl`` (one message a line) and the document
keeps only the rest. ``<session id>.back.<ts>.json`` are backups, skipped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.cortex_code.messages import MessageMapper
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular, regular_stat
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import MAX_DOCUMENT_BYTES, RecordBook, read_document
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import BadJson, json_value, title_from_prompt
from agtaild.errors import AgtailError
from agtaild.model import Event, Session, project_of

HISTORY = ".history.jsonl"
#: The title Cortex gives a conversation until it is named.
DEFAULT_TITLE = "Chat for session:"
_BACKUP = re.compile(r"\.back\.[^.]+\.json$")


class CortexCodeAdapter(Adapter):
    id: ClassVar[str] = "cortex-code"
    name: ClassVar[str] = "Snowflake Cortex Code"
    env_vars: ClassVar[tuple[str, ...]] = ("SNOWFLAKE_HOME",)
    root_help: ClassVar[str] = (
        "the conversations folder (~/.snowflake/cortex/conversations, or $SNOWFLAKE_HOME/cortex/conversations)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("Cortex Code conversation files (hand-made samples)",)
    sample_roots: ClassVar[tuple[str, ...]] = (
        "cortex-code/synthetic-agtail/.snowflake/cortex/conversations",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "SNOWFLAKE_HOME") or home / ".snowflake") / "cortex" / "conversations"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        entries = scan.entries(root)
        names = {e.name for e in entries}
        for entry in entries:
            if not entry.name.endswith(".json") or _BACKUP.search(entry.name):
                continue
            if not scan.is_file(entry) or scan.size(entry) <= 0:
                continue
            files = [entry.path]
            side = entry.name[: -len(".json")] + HISTORY
            if side in names:
                files.append(str(root / side))
            yield Unit(agent=self.id, path=entry.path, files=files, root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        doc = read_document(unit.path, now=now)
        s = Session(agent=self.id, id=Path(unit.path).stem, path=unit.path)
        book = RecordBook(s)
        settled = doc.settled
        if doc.ok:
            settled = self._parse(doc.value, book, unit, now) and settled
        elif not doc.empty:
            book.bad(1)
            s.truncated = doc.settled
        s.mtime = doc.mtime
        if s.ending == "interrupted" and not settled:
            s.ending = None
        if unit.archived:
            s.archived = True
        return book.result()

    def _parse(self, doc: Any, book: RecordBook, unit: Unit, now: float | None) -> bool:
        """Map the document (and its history file); False when the history file is still changing."""
        s = book.session
        if not isinstance(doc, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"row": 0}))
            book.count("events")
            return True
        s.id = _str(doc.get("session_id")) or s.id
        mapper = MessageMapper(book)
        history = doc.get("history")
        settled = True
        if isinstance(history, list) and history:
            for row, msg in enumerate(history):
                book.count(mapper.message(msg, row))
        elif history is None or history == []:
            settled = self._history_file(unit, book, mapper, now)
        else:
            book.emit(Event(seq=-1, kind="unknown", raw=history, source={"row": 0}))
            book.count("events")
        title = _str(doc.get("title"))
        s.title = (
            title if title and not title.startswith(DEFAULT_TITLE) else title_from_prompt(mapper.first_prompt)
        )
        s.cwd = _str(doc.get("working_directory")) or _str(doc.get("git_root"))
        s.project = project_of(s.cwd)
        s.git_branch = _str(doc.get("git_branch"))
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.started = norm_iso(doc.get("created_at")) or mapper.earliest
        times = [t for t in (norm_iso(doc.get("last_updated")), mapper.latest) if t]
        s.ended = max(times) if times else None
        if mapper.waiting:
            s.ending = "interrupted"
        extra: dict[str, Any] = {}
        for key in ("connection_name", "session_type", "git_root"):
            if _str(doc.get(key)):
                extra[key] = doc[key]
        s.extra = extra
        return settled

    def _history_file(self, unit: Unit, book: RecordBook, mapper: MessageMapper, now: float | None) -> bool:
        side = next((f for f in unit.files if f.endswith(HISTORY)), None)
        if side is None:
            return True
        try:
            mtime = regular_stat(side).st_mtime
            data = read_regular(side, MAX_DOCUMENT_BYTES)
        except OSError as exc:
            raise AgtailError(
                f"{side}: the conversation's history could not be read ({exc.strerror or exc})"
            ) from None
        row = 0
        for raw in data.splitlines():
            if not raw.strip():
                continue
            try:
                msg = json_value(raw)
            except BadJson:
                book.bad(row + 1)
                row += 1
                continue
            book.count(mapper.message(msg, row))
            row += 1
        return (time.time() if now is None else now) - mtime >= SETTLE_SECONDS

    def resume(self, session: Session) -> ResumeCommand | None:
        """``cortex --resume <id>`` (Snowflake's CLI reference: "-r, --resume <session_id>  Resume
        specific session by ID"); the id pattern keeps an id from reading as an option."""
        if session.imported:
            return None
        return ResumeCommand(argv=["cortex", "--resume", session.id], cwd=session.cwd)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
