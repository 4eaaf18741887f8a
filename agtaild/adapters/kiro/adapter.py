"""Kiro CLI (kirodotdev, successor of the Amazon Q Developer CLI): three stores, one agent.

* v2 session files, ``~/.kiro/sessions/cli/<id>.jsonl`` + ``<id>.json`` (:mod:`agtaild.adapters.kiro.v2`);
* the classic SQLite store ``data.sqlite3`` under the platform data dir (:mod:`agtaild.adapters.kiro.sqlite`);
* v3 engine sessions, ``~/.kiro/sessions/<hash>/sess_<uuid>/`` (:mod:`agtaild.adapters.kiro.v3`, shapes unknown).

A root is either a directory (``~/.kiro/sessions``: the ``cli`` files and the v3 session
directories; a ``data.sqlite3`` directly inside is read too, which is how the archive and
import mirrors hold it) or the database file itself. Each unit says which store it came from
(``hints["store"]``) and reads are handed to that store's reader.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kiro.sqlite import KiroSqliteReader
from agtaild.adapters.kiro.v2 import KiroV2Reader
from agtaild.adapters.kiro.v3 import KiroV3Reader
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.sqlite_db import database_at
from agtaild.model import Session

DB_NAME = "data.sqlite3"


class KiroAdapter(Adapter):
    id: ClassVar[str] = "kiro"
    name: ClassVar[str] = "Kiro CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("KIRO_HOME", "XDG_DATA_HOME")
    root_help: ClassVar[str] = (
        "the sessions folder (~/.kiro/sessions, or its cli/ folder), or the classic database file "
        "(~/.local/share/kiro-cli/data.sqlite3; macOS ~/Library/Application Support/kiro-cli/data.sqlite3)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("v2 jsonl + json (synthetic)", "data.sqlite3 (synthetic)")
    incremental: ClassVar[bool] = True
    sample_roots: ClassVar[tuple[str, ...]] = (
        "kiro/synthetic-agtail/.kiro/sessions",
        "kiro/synthetic-agtail-sqlite/.local/share/kiro-cli/data.sqlite3",
    )

    def __init__(self) -> None:
        self.v2 = KiroV2Reader()
        self.v3 = KiroV3Reader()
        self.sqlite = KiroSqliteReader()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        kiro_home = env_path(env, "KIRO_HOME") or home / ".kiro"
        if sys.platform == "darwin":
            data = home / "Library" / "Application Support"
        else:
            data = env_path(env, "XDG_DATA_HOME") or home / ".local" / "share"
        return [kiro_home / "sessions", data / "kiro-cli" / DB_NAME]

    # -- discovery --------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        if database_at(root):
            yield from self._sqlite_units(root)
            return
        if not root.is_dir():
            return
        cli = root / "cli" if (root / "cli").is_dir() else root
        yield from self._v2_units(cli, root)
        if cli != root:
            for group in _sorted_dirs(root):
                if group.name == "cli":
                    continue
                for folder in _sorted_dirs(group):
                    if folder.name.startswith("sess_"):
                        unit = self.v3.unit_for(folder, root)
                        if unit is not None:
                            unit.hints["store"] = "v3"
                            yield unit
        if database_at(root / DB_NAME):
            yield from self._sqlite_units(root / DB_NAME)

    def _v2_units(self, cli: Path, root: Path) -> Iterator[Unit]:
        try:
            names = sorted(os.listdir(cli))
        except OSError:
            return
        for name in names:
            path = cli / name
            if not name.endswith(".jsonl") or not _nonempty(path):
                continue  # an empty log is a session opened and never used
            files = [str(path)]
            sidecar = path.with_suffix(".json")
            if sidecar.is_file():
                files.append(str(sidecar))
            yield Unit(agent=self.id, path=str(path), files=files, root=str(root), hints={"store": "v2"})

    def _sqlite_units(self, db: Path) -> Iterator[Unit]:
        for unit in self.sqlite.discover(db):
            unit.hints["store"] = "sqlite"
            yield unit

    # -- reading ----------------------------------------------------------------------------
    def _store(self, unit: Unit) -> str:
        store = unit.hints.get("store")
        if isinstance(store, str):
            return store
        if "#" in unit.path and not os.path.exists(unit.path):
            return "sqlite"
        return "v3" if os.path.isdir(unit.path) else "v2"

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        store = self._store(unit)
        if store == "sqlite":
            return self.sqlite.read(unit, state, now=now)
        if store == "v3":
            return self.v3.read(unit, state, now=now)
        return self.v2.read(unit, state, now=now)

    def native_files(self, unit: Unit) -> list[str]:
        store = self._store(unit)
        if store == "sqlite":
            return self.sqlite.native_files(unit)
        if store == "v3":
            return self.v3.native_files(unit)
        return list(unit.files)

    def relative_path(self, unit: Unit, file: str) -> str:
        """A database given as the root itself mirrors as ``data.sqlite3`` (+ its WAL files),
        which :meth:`discover` finds again inside the mirror directory."""
        if os.path.isfile(unit.root):
            return os.path.basename(file)
        return os.path.relpath(file, unit.root)

    def resume(self, session: Session) -> ResumeCommand | None:
        """``--resume-id`` works from any directory; the one-per-directory v1 table has no
        such id, so those sessions resume with ``--resume`` in their directory."""
        if session.imported or session.archived or not session.id:
            return None
        if session.extra.get("store") == "sqlite-v1":
            if not session.cwd:
                return None
            return ResumeCommand(argv=["kiro-cli", "chat", "--resume"], cwd=session.cwd)
        # kiro-cli's chat options are clap's: `--resume-id=<id>` binds the id to the option.
        return ResumeCommand(argv=["kiro-cli", "chat", f"--resume-id={session.id}"], cwd=session.cwd)


def _sorted_dirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return []


def _nonempty(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
