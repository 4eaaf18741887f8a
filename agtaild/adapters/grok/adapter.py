"""Grok Build (xai-org/grok-build): one directory per session.

``$GROK_HOME/sessions/<url-encoded cwd>/<session id>/`` holds ``summary.json`` (metadata,
rewritten as the session goes), ``updates.jsonl`` (the authoritative event log, see
:mod:`agtaild.adapters.grok.updates`) and ``chat_history.jsonl`` (the model-side history).
The chat history repeats what the updates say, so it is read only when a session has no
updates log; otherwise its lines are counted as skipped. A cwd too long for a directory name
is stored as ``<slug>-<hash>`` with the real path in ``<group>/.cwd``.

The whole directory is re-read whenever one of those files changes (see session_dir).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.grok.updates import ENDINGS, UpdatesReader
from agtaild.adapters.kit.files import read_regular_text
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.session_dir import (
    BadRecord,
    SessionDir,
    SessionDirAdapter,
    json_document,
    jsonl_records,
)
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import ParentRef, Session, project_of

#: summary.json session_kind values that make the session a child of its parent session.
_CHILD_KINDS = {"subagent", "subagent_fork"}
#: summary.json fields kept in Session.extra as they are.
_KEEP = (
    "session_kind",
    "agent_name",
    "sandbox_profile",
    "reasoning_effort",
    "head_commit",
    "git_root_dir",
    "git_remotes",
    "last_turn_summary",
    "hidden",
    "worktree_label",
    "forked_at",
    "chat_format_version",
)


class GrokAdapter(SessionDirAdapter):
    id: ClassVar[str] = "grok"
    name: ClassVar[str] = "Grok Build"
    env_vars: ClassVar[tuple[str, ...]] = ("GROK_HOME",)
    root_help: ClassVar[str] = (
        "the sessions folder (~/.grok/sessions), holding <url-encoded cwd>/<session id>/"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("updates.jsonl from grok 1.0.5", "chat_format_version 1")
    sample_roots: ClassVar[tuple[str, ...]] = (
        "grok/entireio-cli/.grok/sessions",
        "grok/synthetic-agtail/.grok/sessions",
    )
    member_files: ClassVar[tuple[str, ...]] = ("summary.json", "updates.jsonl", "chat_history.jsonl")
    marker_files: ClassVar[tuple[str, ...]] = ("summary.json", "updates.jsonl")
    session_depth: ClassVar[int] = 2

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = env_path(env, "GROK_HOME") or home / ".grok"
        return [base / "sessions"]

    def new_session(self, unit: Unit) -> Session:
        folder = Path(unit.path)
        session = Session(agent=self.id, id=folder.name, path=unit.path)
        session.cwd = cwd_of_group(folder.parent)
        session.project = project_of(session.cwd)
        return session

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        summary: dict[str, Any] = {}
        if sdir.has("summary.json"):
            doc = json_document(sdir.files["summary.json"])
            if isinstance(doc, dict):
                summary = doc
                book.count("metadata")
            else:
                book.bad(1)
                s.truncated = sdir.settled
                s.extra["bad_files"] = ["summary.json"]
        reader = UpdatesReader(book)
        has_updates = False
        if sdir.has("updates.jsonl"):
            has_updates = _feed_jsonl(sdir, "updates.jsonl", book, reader.feed)
        if sdir.has("chat_history.jsonl"):
            history = ChatHistory(reader)
            feed = (lambda line, obj: book.count("skipped")) if has_updates else history.feed
            _feed_jsonl(sdir, "chat_history.jsonl", book, feed)
        self._summarise(s, summary, reader)

    def _summarise(self, s: Session, summary: dict[str, Any], reader: UpdatesReader) -> None:
        info: dict[str, Any] = summary["info"] if isinstance(summary.get("info"), dict) else {}
        if isinstance(info.get("id"), str) and info["id"]:
            s.id = info["id"]
        if isinstance(info.get("cwd"), str) and info["cwd"]:
            s.cwd = info["cwd"]
            s.project = project_of(s.cwd)
        for key in ("created_at", "updated_at", "last_active_at"):
            s.started, s.ended = widen(s.started, s.ended, norm_iso(summary.get(key)))
        s.first_prompt = reader.first_user_text()
        s.title = (
            _text(summary.get("generated_title"))
            or _text(summary.get("session_summary"))
            or reader.summary_title
            or title_from_prompt(reader.first_prompt)
        )
        models = list(reader.models)
        current = summary.get("current_model_id")
        if isinstance(current, str) and current and current not in models:
            models.append(current)
        s.models = models
        s.git_branch = _text(summary.get("head_branch"))
        s.ending = ENDINGS.get(reader.last_stop or "")
        s.usage = reader.book.total_usage()
        s.extra.update({k: summary[k] for k in _KEEP if k in summary})
        s.extra["recorded_cost_usd"] = round(reader.recorded_cost, 10)
        parent = _text(summary.get("parent_session_id"))
        if parent:
            ref = ParentRef(agent=self.id, id=parent)
            if _text(summary.get("session_kind")) in _CHILD_KINDS:
                s.parent = ref
            else:
                s.forked_from = ref

    def resume(self, session: Session) -> ResumeCommand | None:
        if session.imported or session.archived or not session.id:
            return None
        # `-r/--resume [ID]` takes an optional value: the attached form binds the id to it, so
        # it can neither be read as an option nor as the prompt (see docs/adapters.md).
        return ResumeCommand(argv=["grok", f"--resume={session.id}"], cwd=session.cwd)


class ChatHistory:
    """``chat_history.jsonl`` (ConversationItem, format 1) as events, for a session whose
    updates log is missing. Shares the UpdatesReader's book, tool-call map and summary."""

    def __init__(self, reader: UpdatesReader) -> None:
        self.reader = reader

    def feed(self, line: int, obj: Any) -> None:
        r = self.reader
        book = r.book
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "system":
            book.count("metadata")  # the system prompt
        elif kind == "user":
            text = _content_text(obj.get("content"))
            if obj.get("synthetic_reason"):
                r.emit("system", line, None, role="user", text=text, subtype=str(obj["synthetic_reason"]))
            else:
                if isinstance(obj.get("prompt_index"), int):
                    r.prompt_index = obj["prompt_index"]
                r.emit("text", line, None, role="user", text=text)
                book.session.messages += 1
                r.first_prompt = r.first_prompt or text
            book.count("events")
        elif kind == "assistant":
            self._assistant(obj, line)
            book.count("events")
        elif kind == "reasoning":
            r.emit("thinking", line, None, role="assistant", text=_content_text(obj.get("content")))
            book.count("events")
        elif kind == "tool_result":
            call = r.calls.get(str(obj.get("tool_call_id")))
            if call is not None and call.result is None:
                call.result = _content_text(obj.get("content"))
                book.count("merged")
            else:
                r.emit("tool_result", line, None, role="tool", result=_content_text(obj.get("content")))
                book.count("events")
        else:
            r.emit("unknown", line, None, raw=obj)
            book.count("events")

    def _assistant(self, obj: dict[str, Any], line: int) -> None:
        r = self.reader
        model = _text(obj.get("model_id"))
        r.add_model(model)
        text = _content_text(obj.get("content"))
        first = None
        if text:
            first = r.emit("text", line, None, role="assistant", text=text, model=model)
            r.book.session.messages += 1
        calls = obj.get("tool_calls") if isinstance(obj.get("tool_calls"), list) else []
        for call in calls or []:
            if not isinstance(call, dict):
                continue
            args = call.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            ev = r.emit(
                "tool_use",
                line,
                None,
                role="assistant",
                tool=_text(call.get("name")),
                input=args,
                tool_use_id=_text(call.get("id")),
                model=model,
            )
            first = first or ev
            if isinstance(call.get("id"), str):
                r.calls[call["id"]] = ev
        if first is None:
            r.emit("text", line, None, role="assistant", text="", model=model)


def _feed_jsonl(sdir: SessionDir, name: str, book: RecordBook, feed: Any) -> bool:
    """Feed every line of a member JSONL file; bad lines are counted (torn → truncated)."""
    fed = False
    try:
        for line, obj in jsonl_records(sdir.files[name], settled=sdir.settled):
            if isinstance(obj, BadRecord):
                book.bad(line)
                book.session.truncated = book.session.truncated or obj.torn
                bad_files = book.session.extra.setdefault("bad_files", [])
                if name not in bad_files:
                    bad_files.append(name)
                continue
            feed(line, obj)
            fed = True
    except OSError:
        return fed
    return fed


def cwd_of_group(group: Path) -> str | None:
    """The cwd a session group directory stands for: its URL-decoded name, or for a name
    shortened to ``<slug>-<hash>`` the path stored in ``<group>/.cwd``."""
    decoded = unquote(group.name)
    if decoded.startswith("/") or (len(decoded) > 2 and decoded[1] == ":"):
        return decoded
    try:
        stored = read_regular_text(group / ".cwd").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return stored or None


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
