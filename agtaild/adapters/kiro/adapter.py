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
from agtaild.adapters.kit import scan
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
        """Every listing goes through the shared scanner: a folder that cannot be listed or an
        entry that cannot be looked at (a symlink loop, EACCES, EIO) is reported in the
        update's errors and its sessions kept (agtaild.adapters.kit.scan)."""
        if database_at(root):
            yield from self._sqlite_units(root)
            return
        if not root.is_dir():
            return
        top = scan.entries(root)
        cli_entry = next((e for e in top if e.name == "cli"), None)
        if cli_entry is not None and scan.is_dir(cli_entry):
            yield from self._v2_units(scan.entries(cli_entry.path), root)
            for group in top:
                if group.name == "cli" or not scan.is_dir(group):
                    continue
                for folder in scan.entries(group.path):
                    if folder.name.startswith("sess_") and scan.is_dir(folder):
                        unit = self._v3_unit(folder, root)
                        if unit is not None:
                            yield unit
        else:
            yield from self._v2_units(top, root)
        if database_at(root / DB_NAME):
            yield from self._sqlite_units(root / DB_NAME)

    def _v2_units(self, listing: list[os.DirEntry[str]], root: Path) -> Iterator[Unit]:
        """``<id>.jsonl`` (+ the ``<id>.json`` sidecar) of a listed ``cli`` folder."""
        names = {e.name: e for e in listing}
        for entry in listing:
            if not entry.name.endswith(".jsonl") or not scan.is_file(entry) or scan.size(entry) <= 0:
                continue  # an empty log is a session opened and never used
            files = [entry.path]
            sidecar = names.get(entry.name[: -len(".jsonl")] + ".json")
            if sidecar is not None and scan.is_file(sidecar):
                files.append(sidecar.path)
            yield Unit(agent=self.id, path=entry.path, files=files, root=str(root), hints={"store": "v2"})

    def _v3_unit(self, folder: os.DirEntry[str], root: Path) -> Unit | None:
        """A ``sess_<uuid>`` folder holding one of the v3 reader's marker files."""
        present = {e.name: e.path for e in scan.entries(folder.path) if scan.is_file(e)}
        if not any(name in present for name in self.v3.marker_files):
            return None
        files = [present[name] for name in self.v3.member_files if name in present]
        return Unit(agent=self.v3.id, path=folder.path, files=files, root=str(root), hints={"store": "v3"})

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
