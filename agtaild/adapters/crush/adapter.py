"""Crush (charmbracelet/crush): ``<project>/.crush/crush.db``, one SQLite DB per project.

Where (``internal/config/load.go``, ``internal/projects/projects.go``): the data dir is
``--data-dir``/``-D``, else ``options.data_directory``, else the closest ``.crush`` walking up
from the cwd, else ``<cwd>/.crush``; the database is ``<data dir>/crush.db`` (WAL). Every
project Crush ran in is registered in ``projects.json`` beside its global data
(``$CRUSH_GLOBAL_DATA``, else ``$XDG_DATA_HOME/crush``, else ``~/.local/share/crush``) as
``{path, data_dir, last_accessed}``. The default root is that registry; the working
directories other agents' sessions name are checked for ``.crush/crush.db`` too.

Tables (``internal/db/migrations``): ``sessions(id, parent_session_id, title, message_count,
prompt_tokens, completion_tokens, cost, updated_at, created_at, summary_message_id, …)`` and
``messages(id, session_id, role, parts, model, provider, is_summary_message, created_at,
updated_at, finished_at)``. Times are seconds or milliseconds (a trigger writes seconds):
normalised by magnitude. A sub-agent run is a child session whose id is the spawning tool
call's id. Token columns are *assigned* per model call (the context size of the latest call),
the cost column accumulates.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.crush.parts import ENDINGS, RowMapper, decode_parts
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import (
    SqliteSessionAdapter,
    database_at,
    rows_as_dicts,
    split_unit_path,
)
from agtaild.adapters.kit.stamps import from_epoch, widen
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.model import ParentRef, Session, Usage, UsageRecord, project_of

DB_NAME = "crush.db"
REGISTRY = "projects.json"
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._:-]{0,127}$")
_DIGEST = re.compile(r"[0-9a-f]{8}")


class CrushAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "crush"
    name: ClassVar[str] = "Crush"
    env_vars: ClassVar[tuple[str, ...]] = ("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME")
    root_help: ClassVar[str] = (
        "a crush.db, a project's .crush folder, a project folder, or Crush's global data dir "
        "(~/.local/share/crush, whose projects.json lists every project)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "crush.db of 2025-08 (a real database, migration 20250627000000)",
        "crush.db schema of 2026-01 (synthetic)",
    )
    incremental: ClassVar[bool] = False
    uses_known_cwds: ClassVar[bool] = True
    sample_roots: ClassVar[tuple[str, ...]] = (
        "crush/dbos-transact-golang/dbos-transact-golang/.crush",
        "crush/synthetic-agtail/demo/.crush",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = env_path(env, "CRUSH_GLOBAL_DATA") or (
            (env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "crush"
        )
        return [data]

    def roots_for_cwds(self, cwds: Iterable[str]) -> list[Path]:
        found: dict[str, Path] = {}
        for cwd in cwds:
            db = Path(cwd) / ".crush" / DB_NAME
            if database_at(db):
                found.setdefault(str(db), db)
        return list(found.values())

    # -- the databases --------------------------------------------------------------------
    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        out: list[Path] = []
        for candidate in (root / DB_NAME, root / ".crush" / DB_NAME):
            if database_at(candidate):
                out.append(candidate)
        for project in _registry(root / REGISTRY, report=True):
            data_dir, path = project.get("data_dir"), project.get("path")
            if isinstance(data_dir, str) and data_dir:
                db = Path(data_dir) / DB_NAME
            elif isinstance(path, str) and path:
                db = Path(path) / ".crush" / DB_NAME
            else:
                continue
            if database_at(db):
                out.append(db)
        # agtail's archive/import mirror keeps each database as <digest>/crush.db
        try:
            mirrored = sorted(p / DB_NAME for p in root.iterdir() if _DIGEST.fullmatch(p.name))
        except OSError:
            mirrored = []
        out += [p for p in mirrored if database_at(p)]
        return list(dict.fromkeys(out))

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        return [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY created_at, id")]

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        row = conn.execute(
            "SELECT updated_at, message_count, prompt_tokens, completion_tokens, cost, title FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            return None
        msgs = conn.execute(
            "SELECT count(*), max(updated_at), total(length(parts)) FROM messages WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return (*row, *msgs)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        db, _ = split_unit_path(unit.path)
        srow = rows_as_dicts(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)))[0]
        order = "created_at, rowid"
        rows = rows_as_dicts(
            conn.execute(f"SELECT * FROM messages WHERE session_id = ? ORDER BY {order}", (session_id,))
        )
        mapper = RowMapper(book)
        for i, row in enumerate(rows):
            book.count(mapper.row(row, i))
        s = book.session
        s.title = srow["title"] if isinstance(srow.get("title"), str) and srow["title"] else None
        s.models = mapper.models
        s.messages = mapper.messages
        s.first_prompt = mapper.first_prompt
        s.compactions = max(mapper.compactions, 1 if srow.get("summary_message_id") else 0)
        started = from_epoch(srow.get("created_at"))
        s.started, s.ended = widen(None, None, started)
        s.started, s.ended = widen(s.started, s.ended, from_epoch(srow.get("updated_at")))
        for ev in book.events:
            s.started, s.ended = widen(s.started, s.ended, ev.ts)
        s.cwd = _project_dir(Path(db), Path(unit.root))
        s.project = project_of(s.cwd)
        parent = srow.get("parent_session_id")
        if isinstance(parent, str) and parent:
            s.parent = ParentRef(
                agent=self.id, id=parent, tool_use_id=_spawning_call(conn, parent, session_id)
            )
            s.resumable = False
        s.ending = ENDINGS.get(mapper.finish or "")
        if s.ending is None and mapper.open_calls:
            s.ending = "interrupted"
        usage = Usage(
            input_tokens=_count(srow.get("prompt_tokens")),
            output_tokens=_count(srow.get("completion_tokens")),
        ).fix_total()
        if not usage.is_zero():
            model = mapper.models[-1] if mapper.models else None
            book.add_usage(UsageRecord(key="session", ts=s.ended, model=model, usage=usage))
        s.usage = book.total_usage()
        extra: dict[str, Any] = {"usage_is_latest_call": True}
        if isinstance(srow.get("cost"), int | float):
            extra["agent_cost_usd"] = float(srow["cost"])
        if isinstance(srow.get("message_count"), int):
            extra["message_count"] = srow["message_count"]
        s.extra = extra
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        if session.parent is not None or session.imported or not _ID_RE.match(session.id or ""):
            return None
        argv = ["crush", "--session", session.id]
        db, _ = split_unit_path(session.path) if "#" in session.path else (session.path, "")
        data_dir = os.path.dirname(db)
        if session.cwd and os.path.normpath(data_dir) != os.path.join(
            os.path.normpath(session.cwd), ".crush"
        ):
            argv += ["--data-dir", data_dir]
        return ResumeCommand(argv=argv, cwd=session.cwd)

    def relative_path(self, unit: Unit, file: str) -> str:
        """``<digest>/crush.db[-wal|-shm]``: every project's database has the same name."""
        db, _ = split_unit_path(unit.path)
        return f"{db_digest(db)}/{os.path.basename(file)}"


def db_digest(db: str) -> str:
    """8 hex characters naming a database: a hash of its real path — or, for a copy in
    agtail's archive/import mirror (``<digest>/crush.db``), the folder it was mirrored under,
    so the copy and the original have the same relative path."""
    parent = os.path.basename(os.path.dirname(db))
    if _DIGEST.fullmatch(parent):
        return parent
    return hashlib.blake2b(os.path.realpath(db).encode(), digest_size=4).hexdigest()


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def _registry(path: Path, *, report: bool = False) -> list[dict[str, Any]]:
    """The projects ``projects.json`` lists. One that is there but cannot be read (a FIFO in
    its place, EACCES, not JSON) lists nothing; with ``report`` discovery records it, so that
    the sessions indexed from the projects it listed are kept (agtaild.adapters.kit.scan)."""
    try:
        value = json_value(read_regular(path))
    except FileNotFoundError:
        return []
    except (OSError, BadJson) as exc:
        if report:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            scan.unlisted(
                str(path),
                f"not read: the project registry ({reason}); every session indexed from this root is kept",
            )
        return []
    if isinstance(value, dict):
        value = value.get("projects")
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []


def _project_dir(db: Path, root: Path) -> str | None:
    """The project a database belongs to: the folder holding ``.crush``, else the registry's
    entry for this data dir (a custom ``--data-dir``), else None."""
    data_dir = db.parent
    if data_dir.name == ".crush":
        return str(data_dir.parent)
    for project in _registry(root / REGISTRY):
        if project.get("data_dir") and os.path.normpath(str(project["data_dir"])) == os.path.normpath(
            data_dir
        ):
            path = project.get("path")
            return str(path) if isinstance(path, str) and path else None
    return None


def _spawning_call(conn: sqlite3.Connection, parent: str, child: str) -> str | None:
    """Crush names a sub-agent's session after the tool call that spawned it: the parent's
    ``tool_call`` part with that id (the LIKE only narrows the rows to decode)."""
    rows = conn.execute(
        "SELECT parts FROM messages WHERE session_id = ? AND parts LIKE ?", (parent, f"%{child}%")
    ).fetchall()
    for (raw,) in rows:
        for part in decode_parts(raw) or []:
            data = part.get("data") if isinstance(part, dict) and part.get("type") == "tool_call" else None
            if isinstance(data, dict) and data.get("id") == child:
                return child
    return None
