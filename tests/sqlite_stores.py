"""The agents' SQLite stores as the tests of issue 22 attack them: found through the registry.

:func:`sqlite_stores` asks every registered adapter to discover its corpus samples and keeps
the ones whose units are sessions inside one SQLite database (``<db>#<session id>``): OpenCode,
Kilo, Crush, Goose, Zed, Kiro's classic store, Cursor's ``state.vscdb`` — and any agent added
later, without a line here. :func:`copy_store` copies one into a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Store:
    agent: str
    sample: str  # the sample root, relative to the corpus
    db: str  # the database, relative to the sample root ("." when the root is the database)

    def __str__(self) -> str:
        return f"{self.agent}:{self.sample}"


def _is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


@cache
def sqlite_stores() -> tuple[Store, ...]:
    from agtaild.adapters import all_adapters

    found: list[Store] = []
    for adapter in all_adapters():
        for sample in adapter.sample_roots:
            root = CORPUS / sample
            if not root.exists():
                continue
            dbs = {u.path.rpartition("#")[0] for u in adapter.discover(root) if "#" in u.path}
            for db in sorted(d for d in dbs if _is_sqlite(d)):
                rel = "." if root.is_file() else os.path.relpath(db, root)
                found.append(Store(adapter.id, sample, rel))
    return tuple(found)


def copy_store(store: Store, dest: Path) -> tuple[Path, Path]:
    """Copy the sample to ``dest``; (the root to configure, the database in it)."""
    src = CORPUS / store.sample
    if src.is_file():
        dest.mkdir(parents=True)
        root = dest / src.name
        shutil.copy2(src, root)
        return root, root
    shutil.copytree(src, dest, symlinks=True)  # recordings keep their (dangling) links as links
    return dest, dest / store.db


def to_wal(db: Path) -> None:
    """Switch the database to WAL mode and close it: the file says WAL, no -wal/-shm remain."""
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    assert not any(Path(str(db) + s).exists() for s in ("-wal", "-shm"))


def listing(folder: Path) -> list[str]:
    """Every entry below ``folder`` (names and types): what reading may never change."""
    out = []
    for dirpath, dirs, names in os.walk(folder):
        for name in sorted(dirs + names):
            full = os.path.join(dirpath, name)
            out.append(f"{os.path.relpath(full, folder)} {os.lstat(full).st_mode >> 12:o}")
    return sorted(out)


def service(data: Path, agent: str, root: Path | list[Path], **kw: Any) -> Any:
    from agtaild.config import load_config
    from agtaild.query.service import Service

    roots = root if isinstance(root, list) else [root]
    config = load_config(data_dir=str(data), root_options=[f"{agent}={r}" for r in roots], only_roots=True)
    return Service(config, workers=kw.pop("workers", 1), **kw)


def listed(svc: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """(agent, id) → the session as `sessions.list` gives it, without updating first."""
    doc = svc.call("sessions.list", {"limit": 1000})
    return {(s["agent"], s["id"]): s for s in doc["sessions"]}


def removed(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["changed"] if c["action"] == "removed"]
