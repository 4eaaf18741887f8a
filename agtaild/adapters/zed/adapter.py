"""Zed's agent threads: ``threads.db`` in Zed's data dir (``crates/agent/src/db.rs``).

Where: ``paths::data_dir()/threads/threads.db`` — ``$XDG_DATA_HOME/zed`` (``~/.local/share/zed``)
on Linux (Zed's Flatpak keeps the same path inside its sandbox HOME), ``~/Library/Application
Support/Zed`` on macOS. ``ZED_STATELESS`` makes Zed keep threads in memory only (nothing to
read). Zed's ``--user-data-dir`` moves the data dir; pass it with ``--root zed=PATH``.

Table ``threads(id, summary, updated_at, data_type, data, parent_id?, folder_paths?,
folder_paths_order?, created_at?)`` — the later columns were added by best-effort ``ALTER``s,
so older databases lack them. ``data`` is the thread's JSON, zstd-compressed when
``data_type`` is ``zstd``; each save upserts the whole row. The JSON is read by
:mod:`agtaild.adapters.zed.thread`. Accounting: one metadata record for the row, one record per message.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import zstandard

from agtaild.adapters.base import Unit, env_path
from agtaild.adapters.kit.gc_pause import decode_document
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, rows_as_dicts, table_columns
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.adapters.zed.thread import ThreadWalk, model_of, usage_records
from agtaild.errors import AgtailError
from agtaild.model import ParentRef, project_of

#: A thread's JSON is kilobytes to a few megabytes; refuse to inflate past this.
MAX_THREAD_BYTES = 256 * 1024 * 1024
_decoder = msgspec.json.Decoder()


def decode_thread(data_type: Any, data: Any) -> dict[str, Any] | None:
    """The row's JSON as a dict, or None when it cannot be decoded."""
    if isinstance(data, str):
        data = data.encode()
    if not isinstance(data, bytes):
        return None
    try:
        if data_type == "zstd":
            data = zstandard.ZstdDecompressor().decompress(data, max_output_size=MAX_THREAD_BYTES)
        value = decode_document(_decoder, data)
    except (zstandard.ZstdError, msgspec.DecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class ZedAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "zed"
    name: ClassVar[str] = "Zed"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME",)
    root_help: ClassVar[str] = (
        "the threads database (~/.local/share/zed/threads/threads.db), its threads/ folder, or "
        "Zed's data dir holding it"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "DbThread 0.3.0, zstd (synthetic, from zed crates/agent/src/db.rs)",
        "agent-1 SerializedThread as json (synthetic)",
    )
    incremental: ClassVar[bool] = False
    sample_roots: ClassVar[tuple[str, ...]] = ("zed/synthetic-agtail/.local/share/zed",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        linux = (env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "zed"
        mac = home / "Library" / "Application Support" / "Zed"
        return [base / "threads" / "threads.db" for base in (linux, mac)]

    def databases(self, root: Path) -> list[Path]:
        for candidate in (root, root / "threads.db", root / "threads" / "threads.db"):
            if database_at(candidate):
                return [candidate]
        return []

    def relative_path(self, unit: Unit, file: str) -> str:
        """A database given as the root itself (the default) mirrors as ``threads.db`` (+ its
        WAL files), which :meth:`databases` finds again inside the mirror directory."""
        if os.path.isfile(unit.root) or unit.root.endswith(".db"):
            return os.path.basename(file)
        return os.path.relpath(file, unit.root)

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        cols = table_columns(conn, "threads")
        if not cols:
            raise AgtailError(f"{db}: no threads table")
        order = "created_at, id" if "created_at" in cols else "updated_at, id"
        return [str(r[0]) for r in conn.execute(f"SELECT id FROM threads ORDER BY {order}") if r[0] is not None]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT updated_at, data_type, length(data), summary FROM threads WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else [repr(v) for v in row]

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        rows = rows_as_dicts(conn.execute("SELECT * FROM threads WHERE id = ?", (session_id,)))
        if not rows:
            raise AgtailError(f"{unit.path}: the thread row is gone")
        row = rows[0]
        s = book.session
        doc = decode_thread(row.get("data_type"), row.get("data"))
        if doc is None:
            book.bad(1)
            s.truncated = True
            doc = {}
        else:
            book.count("metadata")
        model = model_of(doc)
        walk = ThreadWalk(book, model)
        walk.walk(doc)
        for record in usage_records(doc, model):
            book.add_usage(record)
        cumulative = doc.get("cumulative_token_usage")
        if isinstance(cumulative, dict):
            s.extra["recorded_usage"] = cumulative
        summary = row.get("summary") if isinstance(row.get("summary"), str) else None
        title = doc.get("title") if isinstance(doc.get("title"), str) else None
        s.title = title_from_prompt(summary or title or walk.first_prompt)
        s.first_prompt = walk.first_prompt
        s.messages = walk.messages
        s.models = [model] if model else []
        for key in ("created_at", "updated_at"):
            s.started, s.ended = widen(s.started, s.ended, norm_iso(row.get(key)))
        s.started, s.ended = widen(s.started, s.ended, norm_iso(doc.get("updated_at")))
        s.cwd = _first_folder(row.get("folder_paths")) or _snapshot_folder(doc)
        s.project = project_of(s.cwd)
        context = sub(doc, "subagent_context")
        parent = row.get("parent_id") or context.get("parent_thread_id")
        if isinstance(parent, str) and parent:
            call = context.get("tool_use_id")
            s.parent = ParentRef(agent=self.id, id=parent, tool_use_id=call if isinstance(call, str) else None)
        if doc.get("imported") is True:
            s.extra["imported_share"] = True
        if isinstance(doc.get("detailed_summary"), str):
            s.extra["detailed_summary"] = doc["detailed_summary"]
        if isinstance(doc.get("profile"), str):
            s.extra["profile"] = doc["profile"]
        provider = sub(doc, "model").get("provider")
        if isinstance(provider, str):
            s.extra["provider"] = provider
        s.extra["format"] = doc.get("version") if isinstance(doc.get("version"), str) else "agent-1"
        s.resumable = False  # no command opens a Zed thread by id
        return None


def _first_folder(value: Any) -> str | None:
    """``folder_paths`` is Zed's serialised PathList: the paths joined by newlines."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip().splitlines()[0] or None


def _snapshot_folder(doc: dict[str, Any]) -> str | None:
    snap = doc.get("initial_project_snapshot")
    trees = snap.get("worktree_snapshots") if isinstance(snap, dict) else None
    first = trees[0] if isinstance(trees, list) and trees and isinstance(trees[0], dict) else {}
    path = first.get("worktree_path")
    return path if isinstance(path, str) and path else None
