"""OpenCode (sst/opencode, now anomalyco/opencode): ``opencode.db`` and the older ``storage/``.

Where (``packages/opencode/src/global/index.ts``, ``storage/db.ts``): the data dir is
``$XDG_DATA_HOME/opencode`` (xdg-basedir: ``~/.local/share/opencode`` on Linux and macOS).
Since 1.2 sessions live in ``<data>/opencode.db`` (``opencode-<channel>.db`` for channel
builds; ``$OPENCODE_DB`` names another file, absolute or relative to the data dir); before,
in ``<data>/storage/`` as one JSON file per session, message and part. OpenCode moves the
JSON tree into the database once, so a session found in both is read from the database.

``--root opencode=PATH`` takes the database file, the ``storage`` dir, or the data dir that
holds either. Mirrors (import store, archive) keep paths relative to the data dir.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.sqlite_db import SqliteSessionAdapter, database_at, list_database
from agtaild.adapters.opencode import db as opencode_db
from agtaild.adapters.opencode import storage as opencode_storage
from agtaild.adapters.opencode.parts import build
from agtaild.errors import AgtailError
from agtaild.model import Session


def _database_name(name: str) -> bool:
    """``opencode.db`` or ``opencode-<channel>.db`` (what ``opencode*.db`` matched)."""
    return name.startswith("opencode") and name.endswith(".db")


class OpenCodeAdapter(SqliteSessionAdapter):
    id: ClassVar[str] = "opencode"
    name: ClassVar[str] = "OpenCode"
    #: XDG_DATA_HOME and OPENCODE_DB are OpenCode's own; OPENCODE_DATA_DIR is the data-dir
    #: override usage tools (ccusage and others) read, honoured here for the same setups.
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME", "OPENCODE_DB", "OPENCODE_DATA_DIR")
    root_help: ClassVar[str] = (
        "the database file (~/.local/share/opencode/opencode.db), the older storage/ dir, "
        "or the data dir (~/.local/share/opencode) holding either"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "storage/ JSON 1.1",
        "opencode.db 1.3",
        "opencode.db 1.18.33",
    )
    incremental: ClassVar[bool] = False
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/opencode-1.18.33/opencode.db",
        "opencode/synthetic-agtail-sqlite/.local/share/opencode",
        "opencode/synthetic-agtail-json/.local/share/opencode/storage",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = env_path(env, "OPENCODE_DATA_DIR") or (
            (env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "opencode"
        )
        roots = [data / "opencode.db"]
        roots += [p for p in sorted(data.glob("opencode-*.db")) if p.is_file()]
        override = env.get("OPENCODE_DB")
        if override and override != ":memory:":
            path = Path(override).expanduser()
            roots.append(path if path.is_absolute() else data / path)
        roots.append(data / "storage")
        return list(dict.fromkeys(roots))

    # -- the database ---------------------------------------------------------------------
    def databases(self, root: Path) -> list[Path]:
        if database_at(root):
            return [root]
        if root.is_dir() and root.name != "storage":
            listed = scan.entries(root)  # a data dir that cannot be listed is reported
            return [Path(e.path) for e in listed if _database_name(e.name) and database_at(Path(e.path))]
        return []

    def list_sessions(self, conn: sqlite3.Connection, db: Path) -> list[str]:
        return opencode_db.list_sessions(conn)

    def fingerprint(self, conn: sqlite3.Connection, session_id: str) -> Any:
        return opencode_db.fingerprint(conn, session_id)

    def read_session(
        self, conn: sqlite3.Connection, unit: Unit, session_id: str, book: RecordBook, *, now: float
    ) -> float | None:
        info = opencode_db.session_row(conn, session_id)
        if info is None:
            raise AgtailError(f"{unit.path}: the session row is gone")
        book.count("metadata")
        messages = opencode_db.read_messages(conn, session_id)
        parent = info.get("parent_id")
        call = (
            opencode_db.parent_call(conn, parent, session_id) if isinstance(parent, str) and parent else None
        )
        recheck = build(book, info, messages, now=now, parent_call=call, agent=self.id)
        updated = info.get("time_updated")
        book.session.mtime = updated / 1000.0 if isinstance(updated, int | float) else None
        return recheck

    # -- the JSON tree ----------------------------------------------------------------------
    @staticmethod
    def _storage_dirs(root: Path) -> list[Path]:
        if root.is_dir() and root.name == "storage":
            return [root]
        if root.is_dir() and (root / "storage").is_dir():
            return [root / "storage"]
        return []

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from super().discover(root)
        for storage in self._storage_dirs(root):
            in_db = self._ids_in_databases(storage.parent)
            if in_db is None:
                # Which of these the database holds is unknown: none is listed, all are kept.
                scan.unsure(str(storage), "not listed while the database beside it cannot be read")
                continue
            for session_file in opencode_storage.session_files(storage):
                if session_file.stem in in_db:
                    continue
                files = opencode_storage.unit_files(storage, session_file)
                yield Unit(agent=self.id, path=str(session_file), files=files, root=str(root))

    def _ids_in_databases(self, data_dir: Path) -> set[str] | None:
        """The session ids of the data dir's databases; None when one cannot be read."""
        ids: set[str] = set()
        with scan.collecting():  # the problem is recorded once, by the database's own listing
            for db in self.databases(data_dir):
                found = list_database(db, opencode_db.list_sessions, busy_timeout=self.busy_timeout)
                if found is None:
                    return None
                ids.update(found)
        return ids

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.path.endswith(".json") and os.path.isfile(unit.path):
            return self._read_storage(unit, time.time() if now is None else now)
        return super().read(unit, state, now=now)

    def _read_storage(self, unit: Unit, now: float) -> ReadResult:
        session_file = Path(unit.path)
        book = RecordBook(Session(agent=self.id, id=session_file.stem, path=unit.path))
        info, messages, newest = opencode_storage.read_session(book, session_file, now=now)
        if isinstance(info.get("id"), str) and info["id"]:
            book.session.id = info["id"]
        parent = info.get("parent_id")
        storage = opencode_storage.storage_of(session_file)
        call = (
            opencode_storage.parent_call(storage, parent, book.session.id)
            if isinstance(parent, str)
            else None
        )
        build(book, info, messages, now=now, parent_call=call, agent=self.id)
        session = book.session
        session.path = unit.path
        session.mtime = newest
        session.usage = book.total_usage()
        if unit.archived:
            session.archived = True
        return book.result()

    # -- everything else ------------------------------------------------------------------
    def native_files(self, unit: Unit) -> list[str]:
        if unit.path.endswith(".json"):
            return [f for f in unit.files if os.path.exists(f)]
        return super().native_files(unit)

    def relative_path(self, unit: Unit, file: str) -> str:
        """Relative to the data dir whichever form the root took, so that every mirror has
        the native ``opencode.db`` + ``storage/…`` layout."""
        root = Path(unit.root)
        base = root.parent if root.is_file() or root.name == "storage" or root.suffix == ".db" else root
        return os.path.relpath(file, base)

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """OpenCode: the TUI's ``--prompt`` is the first prompt of a new session."""
        return ResumeCommand(argv=["opencode", "--prompt", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        if not session.id:
            return None
        return ResumeCommand(argv=["opencode", "--session", session.id], cwd=session.cwd)
