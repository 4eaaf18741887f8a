"""The DeepSeek TUI adapter (now CodeWhale): ``~/.deepseek/sessions/<id>.json``, rewritten whole.

DeepSeek TUI 0.8.40 (``crates/tui/src/session_manager.rs`` @ 1ca495f5): ``default_sessions_dir`` is
``~/.deepseek/sessions`` on every OS (no environment variable moves it); a save is
``to_string_pretty`` written atomically to ``<id>.json`` (ids are UUIDs). ``checkpoints/`` beside
the sessions holds the crash checkpoint ``latest.json`` and ``offline_queue.json`` (not sessions).
The renamed CodeWhale keeps the same layout under ``~/.codewhale/sessions`` (agentsview README).
The CLI's metrics reader honours ``DEEPSEEK_HOME`` for the ``~/.deepseek`` folder
(``crates/cli/src/metrics.rs``), so ``$DEEPSEEK_HOME/sessions`` is read too when it is set.

``SavedSession{schema_version, metadata{id, title, created_at, updated_at, message_count,
total_tokens, model, workspace, mode, cost{session_cost_usd, …}, parent_session_id,
forked_from_message_count}, messages[], system_prompt, context_references, artifacts}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.deepseek_tui.blocks import MessageMapper
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsondoc import JsonDocAdapter, RecordBook
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.model import Event, ParentRef, Session, Usage, UsageRecord, project_of


class DeepSeekTuiAdapter(JsonDocAdapter):
    id: ClassVar[str] = "deepseek-tui"
    name: ClassVar[str] = "DeepSeek TUI / CodeWhale"
    env_vars: ClassVar[tuple[str, ...]] = ("DEEPSEEK_HOME",)
    root_help: ClassVar[str] = "the sessions folder (~/.deepseek/sessions, ~/.codewhale/sessions)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "deepseek-tui 0.8.40 SavedSession schema 1 (hand-made samples)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("deepseek-tui/synthetic-agtail/.deepseek/sessions",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        roots = [home / ".deepseek" / "sessions", home / ".codewhale" / "sessions"]
        moved = env_path(env, "DEEPSEEK_HOME")
        if moved is not None and moved / "sessions" not in roots:
            roots.insert(0, moved / "sessions")
        return roots

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):
            if entry.name.endswith(".json") and scan.is_file(entry) and scan.size(entry) > 0:
                yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        s = book.session
        if not isinstance(doc, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"row": 0}))
            book.count("events")
            return
        meta = sub(doc, "metadata")
        s.id = _str(meta.get("id")) or s.id
        model = _str(meta.get("model"))
        mapper = MessageMapper(book, model)
        messages = doc.get("messages")
        if isinstance(messages, list):
            for row, msg in enumerate(messages):
                book.count(mapper.message(msg, row))
        elif messages is not None:
            book.emit(Event(seq=-1, kind="unknown", raw=messages, source={"row": 0}))
            book.count("events")
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.models = [model] if model else []
        s.cwd = _str(meta.get("workspace"))
        s.project = project_of(s.cwd)
        s.started = norm_iso(meta.get("created_at"))
        s.ended = norm_iso(meta.get("updated_at")) or s.started
        s.title = title_from_prompt(_str(meta.get("title"))) or title_from_prompt(mapper.first_prompt)
        if isinstance(doc.get("schema_version"), int):
            s.version = f"schema {doc['schema_version']}"
        parent = _str(meta.get("parent_session_id"))
        if parent and parent != s.id:
            s.forked_from = ParentRef(agent=self.id, id=parent)
            copied = meta.get("forked_from_message_count")
            if isinstance(copied, int) and not isinstance(copied, bool):
                for ev in book.events:  # the messages `deepseek fork` copied from the parent
                    if ev.source.get("row", copied) < copied:
                        ev.extra["copied_from_parent"] = True
        extra: dict[str, Any] = {}
        for key in ("mode", "forked_from_message_count", "message_count"):
            if meta.get(key) is not None:
                extra[key] = meta[key]
        cost = meta.get("cost")
        if isinstance(cost, dict) and cost:
            extra["agent_cost"] = cost
        s.extra = extra
        self._usage(meta, book, model)
        if mapper.waiting:
            s.ending = "interrupted"

    @staticmethod
    def _usage(meta: dict[str, Any], book: RecordBook, model: str | None) -> None:
        """The session's ``total_tokens`` is all DeepSeek TUI keeps: one record, no split into
        input and output (so it prices nothing and counts only in the session's total)."""
        total = meta.get("total_tokens")
        if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
            return
        book.add_usage(
            UsageRecord(
                key="session",
                ts=norm_iso(meta.get("updated_at")),
                model=model,
                usage=Usage(total_tokens=total),
            )
        )
        book.session.usage = Usage(total_tokens=total)  # not the records' fixed total: it has no parts

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        if not settled and s.ending == "interrupted":
            s.ending = None
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        """``deepseek --resume=<id>`` (0.8.40 ``crates/cli/src/lib.rs``: "--resume <SESSION_ID>
        Resume a previous session by ID or prefix"; clap takes the ``=`` form)."""
        if session.imported:
            return None
        return ResumeCommand(argv=["deepseek", f"--resume={session.id}"], cwd=session.cwd)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
