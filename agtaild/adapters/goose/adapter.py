"""Goose (block/goose): ``sessions.db`` in its data dir, and the older JSONL session files.

Where: Goose's data dir (``Paths::data_dir()``: ``$XDG_DATA_HOME/goose``, i.e.
``~/.local/share/goose``; ``$GOOSE_PATH_ROOT/data`` when that is set — from peers, not
verified), sessions in ``<data>/sessions/``: ``sessions.db`` (since ~1.10) and, before, one
``<name>.jsonl`` per session (metadata line, then one message per line; Goose imports them
into the database once and leaves them).

``sessions.db`` (``crates/goose/src/session/session_manager.rs``, schema v5+): ``sessions(id
"YYYYMMDD_N", name, description, user_set_name, session_type user|scheduled|sub_agent|hidden,
working_dir, created_at, updated_at (UTC text), extension_data, total/input/output_tokens,
accumulated_total/input/output_tokens, schedule_id, recipe_json, …, later model_config_json,
provider_name, accumulated_cost)`` and ``messages(id, session_id, role, content_json,
created_timestamp (unix s), timestamp, tokens, metadata_json)``. Content: :mod:`agtaild.adapters.goose.content`.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.goose.content import MessageMapper
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular, regular_stat
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, rows_as_dicts
from agtaild.adapters.kit.stamps import from_epoch, norm_iso, widen
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.model import Session, Usage, UsageRecord, project_of

DB_NAME = "sessions.db"
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$")


def _json(value: Any) -> Any:
    """One column's JSON (None when it does not decode: each row on its own)."""
    if isinstance(value, bytes | str) and value:
        try:
            return json_value(value)
        except BadJson:
            return None
    return None


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def session_usage(row: Mapping[str, Any]) -> Usage:
    """Goose's own totals: the accumulated columns (the plain ones hold the latest call)."""
    acc_in, acc_out = (
        _count(row.get("accumulated_input_tokens")),
        _count(row.get("accumulated_output_tokens")),
    )
    if acc_in or acc_out:
        return Usage(input_tokens=acc_in, output_tokens=acc_out).fix_total()
    return Usage(
        input_tokens=_count(row.get("input_tokens")), output_tokens=_count(row.get("output_tokens"))
    ).fix_total()


class GooseAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "goose"
    name: ClassVar[str] = "Goose"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME", "GOOSE_PATH_ROOT")
    root_help: ClassVar[str] = "Goose's data dir (~/.local/share/goose), its sessions folder, or sessions.db"
    formats_tested: ClassVar[tuple[str, ...]] = ("sessions.db schema v5+ (synthetic)", "jsonl (synthetic)")
    incremental: ClassVar[bool] = False
    sample_roots: ClassVar[tuple[str, ...]] = ("goose/synthetic-agtail/.local/share/goose",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        root = env_path(env, "GOOSE_PATH_ROOT")
        if root is not None:
            return [root / "data" / "sessions"]
        data = env_path(env, "XDG_DATA_HOME") or home / ".local" / "share"
        return [data / "goose" / "sessions"]

    # -- discovery ------------------------------------------------------------------------
    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        return [p for p in (root / DB_NAME, root / "sessions" / DB_NAME) if database_at(p)]

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        return [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY created_at, id")]

    def discover(self, root: Path) -> Iterator[Unit]:
        units, unread = self.database_units(root)
        db_ids = {unit.path.rsplit("#", 1)[1] for unit in units}
        yield from units
        folder = root if (root.is_dir() and not (root / "sessions").is_dir()) else root / "sessions"
        try:
            legacy = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
        except OSError:
            return
        for path in legacy:
            if unread:  # whether the database holds this one is unknown: kept as indexed
                scan.unsure(str(path), "not listed while the database beside it cannot be read")
                continue
            if path.stem not in db_ids:  # imported into the database: read from there
                yield Unit(agent=self.id, path=str(path), files=[str(path)], root=str(root))

    def native_files(self, unit: Unit) -> list[str]:
        if unit.path.endswith(".jsonl"):
            return [unit.path] if os.path.exists(unit.path) else []
        return super().native_files(unit)

    # -- the database -----------------------------------------------------------------------
    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute("SELECT updated_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        msgs = conn.execute(
            "SELECT count(*), max(id), total(length(content_json)) FROM messages WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return (str(row[0]), *msgs)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        srow = rows_as_dicts(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)))[0]
        rows = rows_as_dicts(
            conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        )
        mapper = MessageMapper(book)
        for i, row in enumerate(rows):
            ts = from_epoch(row.get("created_timestamp")) or _sql_time(row.get("timestamp"))
            content = _json(row.get("content_json"))
            book.count(mapper.message(row.get("role"), content, ts, i, row))
        self._summarise(book, mapper, srow)
        return None

    def _summarise(self, book: RecordBook, mapper: MessageMapper, meta: Mapping[str, Any]) -> None:
        s = book.session
        names = [meta.get("name"), meta.get("description")]
        s.title = next((n for n in names if isinstance(n, str) and n), None)
        s.cwd = meta.get("working_dir") if isinstance(meta.get("working_dir"), str) else None
        s.project = project_of(s.cwd)
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.compactions = mapper.compactions
        if s.title is None and mapper.first_prompt:
            s.title = mapper.first_prompt.strip().splitlines()[0][:200]
        for key in ("created_at", "updated_at"):
            s.started, s.ended = widen(s.started, s.ended, _sql_time(meta.get(key)))
        for ev in book.events:
            s.started, s.ended = widen(s.started, s.ended, ev.ts)
        config = _json(meta.get("model_config_json")) or {}
        model = config.get("model_name") if isinstance(config, dict) else None
        s.models = [model] if isinstance(model, str) and model else []
        kind = meta.get("session_type") if isinstance(meta.get("session_type"), str) else "user"
        extra: dict[str, Any] = {}
        if kind != "user":
            extra["session_type"] = kind
        s.programmatic = kind in ("scheduled", "sub_agent", "hidden") or bool(meta.get("schedule_id"))
        if kind == "sub_agent":
            s.resumable = False
        if isinstance(meta.get("accumulated_cost"), int | float):
            extra["agent_cost_usd"] = float(meta["accumulated_cost"])
        if isinstance(meta.get("provider_name"), str):
            extra["provider"] = meta["provider_name"]
        s.extra = extra
        usage = session_usage(meta)
        if not usage.is_zero():
            book.add_usage(
                UsageRecord(key="session", ts=s.ended, model=s.models[0] if s.models else None, usage=usage)
            )
        s.usage = book.total_usage()
        if mapper.open_calls:
            s.ending = "interrupted"

    # -- the older JSONL files -------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if not unit.path.endswith(".jsonl"):
            return super().read(unit, state, now=now)
        now = time.time() if now is None else now
        st = regular_stat(unit.path)
        with open_regular(unit.path) as fh:
            data = fh.read()
        book = RecordBook(Session(agent=self.id, id=Path(unit.path).stem, path=unit.path))
        mapper = MessageMapper(book)
        meta: dict[str, Any] = {}
        for number, raw in enumerate(data.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                obj = json_value(raw)
            except BadJson:
                book.bad(number)
                continue
            if isinstance(obj, dict) and "role" not in obj and number == 1:
                meta = obj
                book.count("metadata")
                continue
            role = obj.get("role") if isinstance(obj, dict) else None
            content = obj.get("content") if isinstance(obj, dict) else None
            ts = from_epoch(obj.get("created")) if isinstance(obj, dict) else None
            book.count(mapper.message(role, content, ts, number, obj))
        if data and not data.endswith(b"\n") and book.session.accounting.bad:
            book.session.truncated = now - st.st_mtime >= SETTLE_SECONDS
        self._summarise(book, mapper, {"name": meta.get("description"), **meta})
        s = book.session
        s.resumable = False  # Goose now resumes from its database only
        s.mtime = st.st_mtime
        s.extra["format"] = "jsonl"
        if unit.archived:
            s.archived = True
        return book.result()

    def resume(self, session: Session) -> ResumeCommand | None:
        if not session.resumable or session.imported or not _ID_RE.match(session.id or ""):
            return None
        return ResumeCommand(
            argv=["goose", "session", "--resume", "--session-id", session.id], cwd=session.cwd
        )


def _sql_time(value: Any) -> str | None:
    """SQLite ``CURRENT_TIMESTAMP`` text (UTC, no zone), ISO text, or epoch seconds."""
    if isinstance(value, int | float):
        return from_epoch(value)
    if isinstance(value, str):
        return norm_iso(value.replace(" ", "T", 1))
    return None
