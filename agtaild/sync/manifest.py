"""Manifests: what one side of a transfer holds, so two sides can compare and move the difference.

A manifest lists files by their path inside a collection (``<agent>/<path relative to the
agent's session root>``, always ``/``-separated) with size, mtime and sha256. The writer of a
collection directory leaves its manifest as ``manifest.json`` at the collection's top: it is
the record of what sync last wrote there and by which machine (``origin``), which is how a
later transfer tells "the source changed its own file" (replace) from "someone else changed
the copy" (conflict: keep both).

Hashing every file on every sync would cost the whole history each time, so full-file hashes
are cached by (size, mtime_ns, inode) in a small SQLite file in the data dir.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit.files import open_regular
from agtaild.errors import Refused

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "agtail-manifest"
MANIFEST_VERSION = 1
CHUNK = 1 << 20


class FileEntry(msgspec.Struct, omit_defaults=True):
    """One file of a collection. ``path`` is ``<agent>/<relative path>``."""

    path: str
    size: int
    sha256: str
    agent: str
    mtime: float = 0.0
    session: str | None = None
    sessions: list[str] = msgspec.field(default_factory=list)
    #: The machine id whose native file this is (the series it belongs to).
    origin: str | None = None


class Manifest(msgspec.Struct, omit_defaults=True):
    files: list[FileEntry] = msgspec.field(default_factory=list)
    format: str = MANIFEST_FORMAT
    version: int = MANIFEST_VERSION
    collection: str | None = None
    origin: str | None = None
    origin_name: str | None = None
    created: str | None = None

    def by_path(self) -> dict[str, FileEntry]:
        return {f.path: f for f in self.files}


_manifest_decoder = msgspec.json.Decoder(Manifest)


def decode_manifest(data: bytes, where: str) -> Manifest:
    """Parse a manifest from an untrusted side; a malformed one is refused, never guessed at."""
    try:
        manifest = _manifest_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise Refused(
            f"{where} is not a valid agtail manifest ({exc}); push again from the machine that owns "
            "the collection, or delete the broken manifest.json"
        ) from exc
    if manifest.format != MANIFEST_FORMAT or manifest.version > MANIFEST_VERSION:
        raise Refused(
            f"{where} has format {manifest.format!r} version {manifest.version}; this agtail reads "
            f"{MANIFEST_FORMAT!r} up to version {MANIFEST_VERSION} (upgrade agtail on this machine)"
        )
    return manifest


def encode_manifest(manifest: Manifest) -> bytes:
    manifest.files.sort(key=lambda f: f.path)
    return msgspec.json.format(msgspec.json.encode(manifest), indent=1) + b"\n"


def load_manifest(directory: Path) -> Manifest | None:
    """The manifest at the top of a collection directory, or None when there is none."""
    path = directory / MANIFEST_NAME
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not os.path.isfile(path) or os.path.islink(path):
        raise Refused(f"{path} is not a regular file; remove it and push again")
    if st.st_size > 256 << 20:
        raise Refused(f"{path} is {st.st_size} bytes, more than a manifest can honestly be")
    return decode_manifest(path.read_bytes(), str(path))


def write_atomic(path: Path, data: bytes) -> None:
    """Write a small file by temp + fsync + rename, so readers see the old or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".agtail-partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_manifest(directory: Path, manifest: Manifest) -> None:
    write_atomic(directory / MANIFEST_NAME, encode_manifest(manifest))


def merge_record(old: Manifest | None, written: list[FileEntry], template: Manifest) -> Manifest:
    """The new record of a destination: the old entries, updated by what was just written."""
    files = old.by_path() if old is not None else {}
    for entry in written:
        files[entry.path] = entry
    return Manifest(
        files=list(files.values()),
        collection=template.collection,
        origin=template.origin,
        origin_name=template.origin_name,
        created=now_iso(),
    )


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def hash_stream(fh: object, length: int | None = None) -> tuple[str, int]:
    """sha256 and byte count of the first ``length`` bytes (all when None) of an open file."""
    h = hashlib.sha256()
    done = 0
    read = fh.read  # type: ignore[attr-defined]
    while length is None or done < length:
        want = CHUNK if length is None else min(CHUNK, length - done)
        block = read(want)
        if not block:
            break
        h.update(block)
        done += len(block)
    return h.hexdigest(), done


def read_range(fh: Any, offset: int, length: int) -> Iterator[bytes]:
    """``length`` bytes of an open file from ``offset``, in CHUNK blocks; raises EOFError when
    the file ends first (it shrank since its size was taken)."""
    fh.seek(offset)
    left = length
    while left > 0:
        block = fh.read(min(CHUNK, left))
        if not block:
            raise EOFError
        left -= len(block)
        yield block


def sha256_file(path: str | Path, length: int | None = None) -> str:
    """sha256 of a file (or of its first ``length`` bytes; a shorter file is an error). Only a
    regular file is opened (a FIFO in a file's place would block: agtaild.adapters.kit.files)."""
    with open_regular(path) as fh:
        digest, done = hash_stream(fh, length)
    if length is not None and done != length:
        raise OSError(f"{path} has {done} bytes, fewer than the {length} expected")
    return digest


def stat_key(st: os.stat_result, extra: str = "") -> str:
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{extra}"


class HashCache:
    """sha256 of local files by path, valid while (size, mtime_ns, inode) stay the same."""

    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # A cache: an entry lost in a crash is only hashed again, so no fsync per entry.
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS hashes (path TEXT PRIMARY KEY, key TEXT NOT NULL, sha256 TEXT NOT NULL)"
            )
        self._mem: dict[str, tuple[str, str]] = {}

    def get(self, path: str, key: str) -> str | None:
        with self._lock:
            hit = self._mem.get(path)
            if hit is None and self._db is not None:
                row = self._db.execute("SELECT key, sha256 FROM hashes WHERE path = ?", (path,)).fetchone()
                hit = (row[0], row[1]) if row else None
            return hit[1] if hit is not None and hit[0] == key else None

    def put(self, path: str, key: str, digest: str) -> None:
        with self._lock:
            self._mem[path] = (key, digest)
            if self._db is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO hashes (path, key, sha256) VALUES (?, ?, ?)", (path, key, digest)
                )
                self._db.commit()  # at once: other processes share this file (cheap without fsync)

    def put_many(self, entries: list[tuple[str, str, str]]) -> None:
        """:meth:`put` for each (path, key, digest), in one transaction (the archive marks a
        whole batch of files at once: a commit per file cost more than the lookups)."""
        if not entries:
            return
        with self._lock:
            for path, key, digest in entries:
                self._mem[path] = (key, digest)
            if self._db is not None:
                self._db.executemany("INSERT OR REPLACE INTO hashes (path, key, sha256) VALUES (?, ?, ?)", entries)
                self._db.commit()

    def file_sha256(self, path: str, st: os.stat_result | None = None) -> str:
        st = os.stat(path) if st is None else st
        key = stat_key(st)
        cached = self.get(path, key)
        if cached is not None:
            return cached
        digest = sha256_file(path)
        self.put(path, key, digest)
        return digest

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.commit()
                self._db.close()
                self._db = None


def sync_state_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / "sync"


def open_hash_cache(data_dir: str | Path) -> HashCache:
    return HashCache(sync_state_dir(data_dir) / "hashes.sqlite3")


def machine_identity(data_dir: str | Path) -> tuple[str, str]:
    """This machine's stable id (made once, kept in the data dir) and its host name.

    The id names the series a machine writes, so that two machines pushing into one
    collection are told apart (a conflict) rather than silently overwriting each other.
    """
    path = sync_state_dir(data_dir) / "machine-id"
    try:
        ident = path.read_text().strip()
    except FileNotFoundError:
        ident = ""
    if len(ident) < 8:
        ident = uuid.uuid4().hex
        write_atomic(path, ident.encode() + b"\n")
    return ident, socket.gethostname().split(".")[0] or "localhost"
