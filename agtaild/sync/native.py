"""This machine's own session files as a transfer source (push, export, the HTTP export).

Files are named by the adapters: each unit's ``native_files`` at ``relative_path`` below the
agent's session root, so the copy lands in the same layout that the same adapter reads under
``imported/<collection>/<agent>/``. Files are read only; agent directories are never written.

An SQLite store (one DB holding many sessions) is sent as a consistent copy made with the
sqlite3 backup API, never as raw bytes of a DB that may be mid-write; its ``-wal``/``-shm``
companions are folded into that copy and not sent. The store is opened as the adapters open
it (agtaild.adapters.kit.sqlite_open): strictly read-only, leaving no file beside it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.sqlite_open import SQLITE_MAGIC, is_sqlite_file, reading
from agtaild.errors import AgtailError, Refused
from agtaild.sync.manifest import (
    FileEntry,
    HashCache,
    Manifest,
    hash_stream,
    now_iso,
    read_range,
    stat_key,
)
from agtaild.sync.safety import path_problem
from agtaild.sync.transfer import TransferError

__all__ = ["SQLITE_MAGIC", "LocalFile", "LocalFilesSource", "is_sqlite", "native_files"]

_COMPANIONS = ("-wal", "-shm", "-journal")


class LocalFile(msgspec.Struct):
    """One file to send: its collection path, where it is here, and whose sessions it holds."""

    path: str
    source: str
    agent: str
    sessions: list[str] = msgspec.field(default_factory=list)


def _regular(path: str) -> bool:
    """A regular file, not a symbolic link (one lstat)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_sqlite(path: str) -> bool:
    """A regular file with the SQLite header (nothing else is opened)."""
    return is_sqlite_file(path)


def native_files(
    config: Any,
    agents: Iterable[str] | None = None,
    kinds: tuple[str, ...] = ("native",),
    units: Iterable[tuple[Any, Any]] | None = None,
) -> list[LocalFile]:
    """Every native file of every unit under the config's roots of ``kinds``.

    ``units`` (pairs of adapter and Unit) restricts the set, e.g. to the sessions of an export.
    """
    from agtaild.adapters import get_adapter

    wanted = set(agents) if agents else None
    pairs: list[tuple[Any, Any]] = []
    if units is not None:
        pairs = list(units)
    else:
        for spec in config.roots:
            if spec.kind not in kinds or (wanted is not None and spec.agent not in wanted):
                continue
            if not os.path.exists(spec.path):
                continue
            adapter = get_adapter(spec.agent)
            pairs.extend((adapter, unit) for unit in adapter.discover(Path(spec.path)))
    found: dict[str, LocalFile] = {}
    for adapter, unit in pairs:
        for file in adapter.native_files(unit):
            rel = adapter.relative_path(unit, file).replace(os.sep, "/")
            path = f"{adapter.id}/{rel}"
            if path_problem(path) is not None or not _regular(file):
                continue
            if path.endswith(_COMPANIONS) and is_sqlite(file.rsplit("-", 1)[0]):
                continue
            found.setdefault(path, LocalFile(path=path, source=file, agent=adapter.id))
        # The side files the unit depends on, at the place the adapter gave each
        # (agtaild.adapters.kit.sidecars): shared by many units, listed once.
        for file, where in unit.sidecars.items():
            path = f"{adapter.id}/{where}"
            if path_problem(path) is None and _regular(file):
                found.setdefault(path, LocalFile(path=path, source=file, agent=adapter.id))
    return sorted(found.values(), key=lambda f: f.path)


class LocalFilesSource:
    """A fixed list of local files as a transfer source, hashed through the cache."""

    def __init__(
        self,
        files: list[LocalFile],
        cache: HashCache,
        *,
        origin: str | None,
        origin_name: str | None,
        collection: str | None = None,
        where: str = "this machine",
    ) -> None:
        self.files = {f.path: f for f in files}
        self.cache = cache
        self.origin = origin
        self.origin_name = origin_name
        self.collection = collection
        self.where = where
        self._snapshots: dict[str, str] = {}
        self._tmpdir: str | None = None
        self._entries: dict[str, FileEntry] = {}

    def _snapshot(self, path: str) -> str:
        """A consistent copy of an SQLite file (backup API); made once per transfer."""
        if path in self._snapshots:
            return self._snapshots[path]
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="agtail-snap-")
        dst = os.path.join(self._tmpdir, f"{len(self._snapshots)}.sqlite3")
        try:
            with reading(path, busy_timeout=30) as src:
                out = sqlite3.connect(dst)
                try:
                    src.backup(out)
                finally:
                    out.close()
        except AgtailError as exc:
            raise OSError(exc.message) from exc
        self._snapshots[path] = dst
        return dst

    def readable(self, path: str) -> str:
        """The file to read bytes from: the native file, or its snapshot for SQLite."""
        local = self.files[path]
        return self._snapshot(local.source) if is_sqlite(local.source) else local.source

    def _entry(self, local: LocalFile) -> FileEntry | None:
        try:
            st = os.stat(local.source)
        except FileNotFoundError:
            return None
        if is_sqlite(local.source):
            extra = ""
            for suffix in ("-wal",):
                with contextlib.suppress(FileNotFoundError):
                    extra += stat_key(os.stat(local.source + suffix))
            key = stat_key(st, "sqlite" + extra)
            digest = self.cache.get(local.source + "#snapshot", key)
            snap = None
            if digest is None:
                snap = self._snapshot(local.source)
                with open(snap, "rb") as fh:
                    digest, _ = hash_stream(fh)
                self.cache.put(local.source + "#snapshot", key, digest)
            size = os.path.getsize(snap or self._snapshot(local.source))
        else:
            size = st.st_size
            digest = self.cache.file_sha256(local.source, st)
        return self._file_entry(local, st.st_mtime, size, digest)

    def _file_entry(self, local: LocalFile, mtime: float, size: int, digest: str) -> FileEntry:
        """The manifest's entry of ``local`` sent as ``size`` bytes of hash ``digest``."""
        return FileEntry(
            path=local.path,
            size=size,
            sha256=digest,
            agent=local.agent,
            mtime=mtime,
            session=local.sessions[0] if len(local.sessions) == 1 else None,
            sessions=list(local.sessions),
            origin=self.origin,
        )

    def manifest(self) -> Manifest:
        entries = []
        for local in self.files.values():
            entry = self._entry(local)
            if entry is not None:
                self._entries[entry.path] = entry
                entries.append(entry)
        return Manifest(
            files=entries,
            collection=self.collection,
            origin=self.origin,
            origin_name=self.origin_name,
            created=now_iso(),
        )

    def _open(self, path: str) -> Any:
        if path not in self.files:
            raise Refused(f"{path!r} is not one of the files offered")
        try:
            return open_regular(self.readable(path))
        except FileNotFoundError as exc:
            raise TransferError(f"{path} was deleted here during the sync") from exc

    def prefix_sha256(self, path: str, length: int) -> str:
        with self._open(path) as fh:
            digest, done = hash_stream(fh, length)
        return digest if done == length else ""

    def read(self, path: str, offset: int, length: int) -> Iterator[bytes]:
        with self._open(path) as fh:
            try:
                yield from read_range(fh, offset, length)
            except EOFError:
                raise TransferError(f"{path} shrank here while being sent; run the sync again") from None

    def close(self) -> None:
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
            self._snapshots.clear()
