"""The Auggie adapter: ``<cache dir>/sessions/<sessionId>.json``, one document rewritten whole.

Auggie 0.36.0 (``augment.mjs``) keeps its cache dir in ``~/.augment`` on every OS, moved only by
``--augment-cache-dir <path>`` (no environment variable). Its session store writes
``sessions/<id>.json`` (``JSON.stringify(…, null, 2)`` to ``<id>.json.<ms>.tmp``, then a rename);
the backup store writes ``<id>-backup<N>.json`` beside it — copies of a session, skipped here.

The document: ``{sessionId, created, modified, chatHistory[], agentState{modelId, …}, title,
customTitle, workspaceId, rootTaskUuid, parentConversationId, subAgents?, summarizations?,
subAgentCreditsUsed, subAgentCostUsd, queue?}``. A subagent run inside the session is kept in
the parent's ``subAgents[]`` (``{name, model, finishedAt, chatHistory[], tool_call_request_id}``):
each is a child unit ``<file>#subagent-<n>`` here, linked to the call that ran it. A session
whose ``parentConversationId`` is set is a subagent's own session, linked to that parent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.auggie.exchanges import ExchangeMapper, workspace_of
from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook, read_document
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.model import Event, ParentRef, Session, project_of

_BACKUP = re.compile(r"-backup\d+\.json$")
_CHILD = "#subagent-"
#: Where Auggie keeps its login (``~/.augment/session.json``): never a session.
AUTH_FILE = "session.json"
_decoder = msgspec.json.Decoder()


class AuggieAdapter(Adapter):
    id: ClassVar[str] = "auggie"
    name: ClassVar[str] = "Auggie (Augment Code)"
    root_help: ClassVar[str] = (
        "Auggie's cache dir (~/.augment, or --augment-cache-dir) or its sessions folder"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("auggie 0.36.0 shapes (hand-made samples)",)
    sample_roots: ClassVar[tuple[str, ...]] = ("auggie/synthetic-agtail/.augment",)

    def __init__(self) -> None:
        #: file → (mtime_ns, size, number of subAgents): discovery reads a file again only when it changed.
        self._children: dict[str, tuple[int, int, int]] = {}

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [home / ".augment"]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        """The root is the cache dir or its ``sessions`` folder. The cache dir itself is never
        listed as sessions: its ``session.json`` is the login (OAuth tokens)."""
        sessions = root / "sessions" if (root / "sessions").is_dir() else root
        if sessions.name != "sessions" or not sessions.is_dir():
            return
        for entry in scan.entries(sessions):
            if not entry.name.endswith(".json") or _BACKUP.search(entry.name) or entry.name == AUTH_FILE:
                continue
            if not scan.is_file(entry) or scan.size(entry) <= 0:
                continue
            yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))
            for n in range(1, self._subagents(entry) + 1):
                yield Unit(agent=self.id, path=f"{entry.path}{_CHILD}{n}", files=[entry.path], root=str(root),
                           hints={"file": entry.path, "subagent": n})  # fmt: skip

    def _subagents(self, entry: os.DirEntry[str]) -> int:
        """How many subagent runs the session keeps (0 for a file that does not decode)."""
        try:
            st = entry.stat()
        except OSError as exc:
            scan.report(entry.path, exc)
            return 0
        cached = self._children.get(entry.path)
        if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
            return cached[2]
        try:
            data = read_regular(entry.path)
        except OSError as exc:
            scan.unsure(entry.path, f"its subagents could not be listed: {exc.strerror or exc}")
            return 0
        count = 0
        if b'"subAgents"' in data:
            try:
                doc = _decoder.decode(data)
            except (msgspec.DecodeError, RecursionError):
                doc = None
            runs = doc.get("subAgents") if isinstance(doc, dict) else None
            count = len(runs) if isinstance(runs, list) else 0
        self._children[entry.path] = (st.st_mtime_ns, st.st_size, count)
        return count

    # -- reading ----------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        file = str(unit.hints.get("file") or unit.path.partition(_CHILD)[0])
        child = unit.hints.get("subagent") if _CHILD in unit.path else None
        doc = read_document(file, now=now)
        parent_id = Path(file).stem
        session = Session(
            agent=self.id, id=parent_id if child is None else f"{parent_id}.subagent-{child}", path=unit.path
        )
        book = RecordBook(session)
        if doc.ok:
            if child is None:
                self._parse(doc.value, book)
            else:
                self._parse_child(doc.value, book, int(child), parent_id)
        elif not doc.empty:
            book.bad(1)
            session.truncated = doc.settled
        session.usage = book.total_usage()
        session.mtime = doc.mtime
        if not doc.settled and session.ending == "interrupted":
            session.ending = None
        if unit.archived:
            session.archived = True
        return book.result()

    def _parse(self, doc: Any, book: RecordBook) -> None:
        s = book.session
        if not isinstance(doc, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"row": 0}))
            book.count("events")
            return
        s.id = _str(doc.get("sessionId")) or s.id
        agent_state = sub(doc, "agentState")
        mapper = self._history(doc.get("chatHistory"), book, _str(agent_state.get("modelId")))
        runs = doc.get("subAgents")
        for _ in runs if isinstance(runs, list) else []:
            book.count("metadata")  # each run is its own child session
        self._summary(s, mapper, _str(doc.get("created")), _str(doc.get("modified")))
        s.title = _str(doc.get("customTitle")) or _str(doc.get("title")) or title_from_prompt(s.first_prompt)
        parent = _str(doc.get("parentConversationId"))
        if parent and parent != s.id:
            s.parent = ParentRef(agent=self.id, id=parent)
        extra: dict[str, Any] = {}
        for key in ("workspaceId", "rootTaskUuid", "subAgentCreditsUsed", "subAgentCostUsd", "isCloudAgent"):
            if doc.get(key) is not None:
                extra[key] = doc[key]
        if isinstance(doc.get("queue"), dict):
            extra["queued"] = len(doc["queue"].get("messages") or [])
        s.extra = extra

    def _parse_child(self, doc: Any, book: RecordBook, n: int, parent_id: str) -> None:
        s = book.session
        runs = doc.get("subAgents") if isinstance(doc, dict) else None
        run = runs[n - 1] if isinstance(runs, list) and 0 < n <= len(runs) else None
        parent_doc_id = _str(doc.get("sessionId")) if isinstance(doc, dict) else None
        parent_id = parent_doc_id or parent_id
        s.id = f"{parent_id}.subagent-{n}"
        s.parent = ParentRef(agent=self.id, id=parent_id)
        if not isinstance(run, dict):
            return  # the run is gone from the file (rewritten since discovery): an empty child
        mapper = self._history(run.get("chatHistory"), book, _str(run.get("model")))
        self._summary(s, mapper, None, _str(run.get("finishedAt")))
        name = _str(run.get("name"))
        prompt_title = title_from_prompt(s.first_prompt)
        s.title = f"{name}: {prompt_title}" if name and prompt_title else name or prompt_title
        s.extra = {"subagent": name} if name else {}
        s.resumable = False
        parent_history = doc.get("chatHistory") if isinstance(doc, dict) else None
        s.parent.tool_use_id = _spawning_call(parent_history, _str(run.get("tool_call_request_id")), name)
        if s.cwd is None:
            s.cwd = _first_cwd(parent_history)
            s.project = project_of(s.cwd)

    def _history(self, history: Any, book: RecordBook, model: str | None) -> ExchangeMapper:
        mapper = ExchangeMapper(book, model)
        if isinstance(history, list):
            for row, item in enumerate(history):
                book.count(mapper.item(item, row))
        elif history is not None:
            book.emit(Event(seq=-1, kind="unknown", raw=history, source={"row": 0}))
            book.count("events")
        return mapper

    @staticmethod
    def _summary(s: Session, mapper: ExchangeMapper, created: str | None, modified: str | None) -> None:
        s.models = mapper.models
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.compactions = mapper.compactions
        s.cwd = mapper.cwd
        s.project = project_of(s.cwd)
        s.started = norm_iso(created) if created else None
        times = [t for t in (norm_iso(modified) if modified else None, mapper.latest) if t]
        s.ended = max(times) if times else None
        if s.started is None:
            s.started = mapper.earliest
        if mapper.last_completed is False or mapper.open_calls:
            s.ending = "interrupted"

    def resume(self, session: Session) -> ResumeCommand | None:
        """``auggie --resume=<id>`` (0.36.0 ``--help``: "-r, --resume [sessionId]  Resume a
        specific session by its session ID or prefix"); a subagent's run is not a session."""
        if session.parent is not None or session.imported:
            return None
        return ResumeCommand(argv=["auggie", f"--resume={session.id}"], cwd=session.cwd)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _spawning_call(history: Any, request_id: str | None, name: str | None) -> str | None:
    """The ``sub-agent`` call of the parent's exchange ``request_id`` (the one that ran it)."""
    if not isinstance(history, list) or request_id is None:
        return None
    for item in history:
        exchange = item.get("exchange") if isinstance(item, dict) else None
        if not isinstance(exchange, dict) or exchange.get("request_id") != request_id:
            continue
        calls = [
            n["tool_use"] for n in exchange.get("response_nodes") or []
            if isinstance(n, dict) and isinstance(n.get("tool_use"), dict)
            and str(n["tool_use"].get("tool_name") or "").startswith("sub-agent")
        ]  # fmt: skip
        named = [c for c in calls if name and c.get("tool_name") == f"sub-agent-{name}"]
        for call in named or calls:
            if _str(call.get("tool_use_id")):
                return str(call["tool_use_id"])
    return None


def _first_cwd(history: Any) -> str | None:
    for item in history if isinstance(history, list) else []:
        exchange = item.get("exchange") if isinstance(item, dict) else None
        found = workspace_of(exchange.get("request_nodes") or []) if isinstance(exchange, dict) else None
        if isinstance(found, str):
            return found
    return None
