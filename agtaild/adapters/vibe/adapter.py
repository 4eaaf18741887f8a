"""Mistral Vibe (mistralai/mistral-vibe): one folder per session under ``logs/session``.

Where (``vibe/core/paths``, ``session/session_logger.py``): ``$VIBE_HOME`` (default
``~/.vibe``), sessions in the ``session_logging.save_dir`` setting (default
``<VIBE_HOME>/logs/session``), one folder ``<prefix>_<UTC %Y%m%d_%H%M%S>_<first 8 of the
id>`` (prefix default ``session``) holding ``meta.json`` (rewritten through a temp file:
``session_id``, ``parent_session_id``, ``start_time``, ``end_time``, ``git_branch``,
``environment.working_directory``, ``title``, ``stats`` with the session's
``session_prompt_tokens``/``session_completion_tokens``, ``config`` incl. ``active_model``,
``agent_profile``, ``system_prompt`` …) and ``messages.jsonl`` (append-only, one
``LLMMessage`` a line, system prompt excluded: ``{role, content, injected,
reasoning_content, tool_calls[{id, function{name, arguments}}], tool_call_id, name,
message_id}``; no timestamps). Vibe before 2.0 wrote one ``session_*.json``
(``{metadata, messages}``) instead, which is read too.

Read whole on every change (the metadata is rewritten with each append). Records: meta.json
and each messages.jsonl line (or each message of an old single file, plus its metadata).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.resume_ids import ALNUM, safe_id
from agtaild.adapters.kit.session_dir import (
    BadRecord,
    SessionDir,
    SessionDirAdapter,
    json_document,
    jsonl_records,
)
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import num, sub, title_from_prompt
from agtaild.model import Event, ParentRef, Session, Usage, UsageRecord, project_of

_decoder = msgspec.json.Decoder()
_TOOL_ERROR = "<tool_error>"
_CANCELLED = "<user_cancellation>"


class VibeAdapter(SessionDirAdapter):
    id: ClassVar[str] = "vibe"
    name: ClassVar[str] = "Mistral Vibe"
    env_vars: ClassVar[tuple[str, ...]] = ("VIBE_HOME",)
    root_help: ClassVar[str] = "~/.vibe, or its logs/session folder (the session_logging.save_dir setting)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "session folders meta.json + messages.jsonl (synthetic, from mistral-vibe ac8f1a0)",
        "pre-2.0 session_*.json (synthetic)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("vibe/synthetic-agtail/.vibe",)
    member_files: ClassVar[tuple[str, ...]] = ("meta.json", "messages.jsonl")
    marker_files: ClassVar[tuple[str, ...]] = ("meta.json", "messages.jsonl")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "VIBE_HOME") or home / ".vibe") / "logs" / "session"]

    def discover(self, root: Path) -> Iterator[Unit]:
        base = root / "logs" / "session" if (root / "logs" / "session").is_dir() else root
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_dir():
                unit = self.unit_for(path, root)
                if unit is not None:
                    yield unit
            elif entry.name.startswith("session_") and entry.name.endswith(".json") and entry.is_file():
                yield Unit(agent=self.id, path=str(path), files=[str(path)], root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if os.path.isfile(unit.path):
            return self._read_old(unit)
        return super().read(unit, state, now=now)

    def native_files(self, unit: Unit) -> list[str]:
        return [unit.path] if os.path.isfile(unit.path) else super().native_files(unit)

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        meta: dict[str, Any] = {}
        if sdir.has("meta.json"):
            doc = json_document(sdir.files["meta.json"])
            if isinstance(doc, dict):
                meta = doc
                book.count("metadata")
            else:
                book.bad(1)
                s.truncated = sdir.settled
                s.extra["bad_files"] = ["meta.json"]
        walk = MessageWalk(book, _model(meta))
        if sdir.has("messages.jsonl"):
            for line, obj in jsonl_records(sdir.files["messages.jsonl"], settled=sdir.settled):
                if isinstance(obj, BadRecord):
                    book.bad(line)
                    s.truncated = s.truncated or obj.torn
                else:
                    walk.feed(line, obj)
        summarise(s, meta, walk, book)

    def _read_old(self, unit: Unit) -> ReadResult:
        path = Path(unit.path)
        book = RecordBook(Session(agent=self.id, id=path.stem, path=unit.path))
        doc = json_document(path)
        meta: dict[str, Any] = {}
        walk = MessageWalk(book, None)
        if isinstance(doc, dict):
            meta = sub(doc, "metadata")
            walk.model = _model(meta)
            book.count("metadata")
            messages = doc.get("messages")
            for i, msg in enumerate(messages if isinstance(messages, list) else [], start=2):
                walk.feed(i, msg)
        else:
            book.bad(1)
            book.session.truncated = True
        summarise(book.session, meta, walk, book)
        book.session.mtime = path.stat().st_mtime
        book.session.extra["format"] = "pre-2.0 single file"
        return book.result()

    def resume(self, session: Session) -> ResumeCommand | None:
        """``vibe --resume <session id>`` in the session's working directory (Vibe finds the
        folder by the id's first 8 characters)."""
        sid = safe_id(session.id, ALNUM)
        if sid is None or session.imported or session.archived:
            return None
        return ResumeCommand(argv=["vibe", "--resume", sid], cwd=session.cwd)


def _model(meta: dict[str, Any]) -> str | None:
    model = sub(meta, "config").get("active_model")
    return model if isinstance(model, str) and model else None


class MessageWalk:
    """Vibe's ``LLMMessage`` lines → events (tool results merged into their calls)."""

    def __init__(self, book: RecordBook, model: str | None) -> None:
        self.book = book
        self.model = model
        self.calls: dict[str, Event] = {}
        self.first_prompt: str | None = None
        self.messages = 0
        self.cancelled = False

    def _emit(self, kind: str, line: int, **kw: Any) -> Event:
        return self.book.emit(Event(seq=-1, kind=kind, source={"line": line}, **kw))

    def feed(self, line: int, msg: Any) -> None:
        acct = self.book.session.accounting  # counted inline: this runs once per line
        acct.lines += 1
        if type(msg) is not dict:
            self._emit("unknown", line, raw=msg)
            acct.events += 1
            return
        role = msg.get("role")
        content = msg.get("content")
        if type(content) is not str:
            content = ""
        elif _CANCELLED in content:
            self.cancelled = True
        if role == "assistant":
            mid = msg.get("message_id")
            self._assistant(line, msg, content, mid if type(mid) is str else None)
            acct.events += 1
        elif role == "tool":
            call = self.calls.get(str(msg.get("tool_call_id")))
            failed = _TOOL_ERROR in content
            if call is not None and call.result is None:
                call.result = content
                call.is_error = failed
                acct.merged += 1
            else:
                name = msg.get("name")
                self._emit("tool_result", line, role="tool", tool=name if type(name) is str else None,
                           result=content, is_error=failed, tool_use_id=str(msg.get("tool_call_id")))
                acct.events += 1
        elif role == "user":
            mid = msg.get("message_id")
            mid = mid if type(mid) is str else None
            if msg.get("injected"):
                self._emit("system", line, role="user", text=content, uuid=mid, subtype="injected")
            else:
                self.first_prompt = self.first_prompt or content
                self._emit("text", line, role="user", text=content, uuid=mid)
                self.messages += 1
            acct.events += 1
        elif role == "system":
            acct.metadata += 1
        else:
            self._emit("unknown", line, raw=msg)
            acct.events += 1

    def _assistant(self, line: int, msg: dict[str, Any], content: str, mid: str | None) -> None:
        reasoning = msg.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self._emit("thinking", line, role="assistant", text=reasoning, model=self.model)
        if content:
            self._emit("text", line, role="assistant", text=content, model=self.model, uuid=mid)
            self.messages += 1
        calls = msg.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            fn = sub(call, "function")
            args: Any = fn.get("arguments")
            if isinstance(args, str):
                try:
                    args = _decoder.decode(args)
                except (msgspec.DecodeError, UnicodeDecodeError):
                    pass
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            ev = self._emit("tool_use", line, role="assistant", tool=str(fn.get("name") or ""), input=args,
                            model=self.model, tool_use_id=call_id)
            if call_id:
                self.calls[call_id] = ev


def summarise(s: Session, meta: dict[str, Any], walk: MessageWalk, book: RecordBook) -> None:
    if isinstance(meta.get("session_id"), str) and meta["session_id"]:
        s.id = meta["session_id"]
    cwd = sub(meta, "environment").get("working_directory")
    s.cwd = cwd if isinstance(cwd, str) and cwd else None
    s.project = project_of(s.cwd)
    s.git_branch = meta["git_branch"] if isinstance(meta.get("git_branch"), str) else None
    s.first_prompt = walk.first_prompt
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    s.title = title_from_prompt(title or walk.first_prompt)
    s.models = [walk.model] if walk.model else []
    s.messages = walk.messages
    for key in ("start_time", "end_time"):
        s.started, s.ended = widen(s.started, s.ended, norm_iso(meta.get(key)))
    parent = meta.get("parent_session_id")
    if isinstance(parent, str) and parent:
        # Vibe starts a new session out of an old one (compaction: CompactEndEvent's
        # old/new session ids) and records the old one here: a continuation, not a subagent.
        s.forked_from = ParentRef(agent="vibe", id=parent)
    stats = sub(meta, "stats")
    if stats:
        # Vibe keeps only session totals (no per-response usage, no cache split).
        usage = Usage(input_tokens=num(stats, "session_prompt_tokens"),
                      output_tokens=num(stats, "session_completion_tokens")).fix_total()
        if not usage.is_zero():
            book.add_usage(UsageRecord(key="session", ts=s.ended, model=walk.model, usage=usage))
        s.extra["stats"] = {k: v for k, v in stats.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    s.usage = book.total_usage()
    profile = sub(meta, "agent_profile").get("name")
    if isinstance(profile, str):
        s.extra["agent_profile"] = profile
    if walk.cancelled:
        s.ending = "interrupted"
