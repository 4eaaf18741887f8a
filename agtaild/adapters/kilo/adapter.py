"""Kilo Code (Kilo-Org/kilocode): the OpenCode-fork database and the legacy task folders.

1. Current Kilo (CLI ``kilo`` 7.x and the new extension) is an OpenCode fork: sessions live in
   ``$XDG_DATA_HOME/kilo/kilo.db`` (``kilo-<channel>.db`` for other channels; ``KILO_DB``
   names another file) with OpenCode's ``session``/``message``/``part`` tables, read by the
   shared OpenCode reader (opencode_db, opencode_parts). Kilo stores ``tokens.input`` without
   the cache and ``output`` without reasoning (``total`` = input + output + reasoning + cache),
   which the shared usage mapping already handles; the session row's ``tokens_*`` columns are
   Kilo's own totals (kept in ``extra.recorded_tokens``).
2. The legacy extension (a Roo Code fork) keeps Cline-format task folders in
   ``globalStorage/kilocode.kilo-code/tasks/<id>/``, read by cline_tasks.

``--root kilo=PATH`` takes ``kilo.db``, the data dir holding it, or the extension's
globalStorage folder (or its tasks/).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.cline.tasks import TaskDirAdapter
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.resume_ids import ALNUM, safe_id
from agtaild.adapters.kit.sqlite_db import database_at
from agtaild.adapters.opencode import db as opencode_db
from agtaild.adapters.opencode.adapter import OpenCodeAdapter
from agtaild.model import Session

_TOKEN_COLUMNS = ("tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read", "tokens_cache_write")


class _KiloTasks(TaskDirAdapter):
    """The legacy extension's task folders, read as Cline's."""

    id: ClassVar[str] = "kilo"
    name: ClassVar[str] = "Kilo Code"
    extension_ids: ClassVar[tuple[str, ...]] = ("kilocode.kilo-code",)


class KiloAdapter(OpenCodeAdapter):
    id: ClassVar[str] = "kilo"
    name: ClassVar[str] = "Kilo Code"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME", "KILO_DB")
    root_help: ClassVar[str] = (
        "the database (~/.local/share/kilo/kilo.db) or the data dir holding it, or the legacy "
        "extension's globalStorage/kilocode.kilo-code folder (or its tasks/)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "kilo.db from Kilo CLI 7.7.7 (OpenCode schema)",
        "legacy extension task folders (synthetic, Cline/Roo format)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/kilo-7.7.7",
        "kilo/synthetic-agtail/.config/Code/User/globalStorage/kilocode.kilo-code",
    )

    def __init__(self) -> None:
        self._tasks = _KiloTasks()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = (env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "kilo"
        roots = [data / "kilo.db"]
        roots += [p for p in sorted(data.glob("kilo-*.db")) if p.is_file()]
        override = env.get("KILO_DB")
        if override and override != ":memory:":
            path = Path(override).expanduser()
            roots.append(path if path.is_absolute() else data / path)
        return list(dict.fromkeys(roots + self._tasks.extension_roots(env, home)))

    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        if root.is_dir():
            return [p for p in sorted(root.glob("kilo*.db")) if database_at(p)]
        return []

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from super().discover(root)
        yield from self._tasks.discover_tasks(root)

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if os.path.isdir(unit.path):
            return self._tasks.read(unit, state, now=now)
        return super().read(unit, state, now=now)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        recheck = super().read_session(conn, unit, session_id, book, now=now)
        row = opencode_db.session_row(conn, session_id) or {}
        recorded = {k.removeprefix("tokens_"): row[k] for k in _TOKEN_COLUMNS if isinstance(row.get(k), int)}
        if recorded:
            book.session.extra["recorded_tokens"] = recorded
        if isinstance(row.get("agent"), str):
            book.session.extra["mode"] = row["agent"]
        book.session.extra["store"] = "kilo.db"
        return recheck

    def native_files(self, unit: Unit) -> list[str]:
        if os.path.isdir(unit.path):
            return self._tasks.native_files(unit)
        return super().native_files(unit)

    def relative_path(self, unit: Unit, file: str) -> str:
        if os.path.isdir(unit.path):
            return os.path.relpath(file, unit.root)
        return super().relative_path(unit, file)

    def resume(self, session: Session) -> ResumeCommand | None:
        """``kilo --session <id>`` (OpenCode's flag, kept by the fork) for database sessions;
        legacy extension tasks are reopened in the editor (None)."""
        sid = safe_id(session.id, ALNUM)
        if sid is None or session.imported or session.archived or session.extra.get("store") != "kilo.db":
            return None
        return ResumeCommand(argv=["kilo", "--session", sid], cwd=session.cwd)
