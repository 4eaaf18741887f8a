"""The archive's compressed store: each archived file as a run of zstd frames, plus a catalog.

Layout: ``<archive>/.zstore/<agent>/<path>.zst`` — the same relative path as the native file,
so a blob is found by name and ``zstd -d`` restores it without agtail (frames laid end to end
are one valid zstd stream). Each frame carries its content size and zstd's own checksum, and
holds at most FRAME_RAW bytes, so a range is read by decompressing only the frames it touches.

The catalog (``.zstore/catalog.sqlite3``) is the truth: for each archived path it records the
frames (raw length, compressed length, sha256 of the raw bytes), the native file it mirrors,
the unit it belongs to and the digests of its first and last bytes (agtaild.store.archive.ends:
an append checks the native file against them without reading a frame). Each frame is
decompressed again in memory and compared with the bytes it was made from before it is written.
An append writes new frames after the recorded end and only then records them: bytes past the
recorded end (a crash mid-append) are ignored and cut off by the next append. A whole copy goes
to a temp file that is renamed. Every read checks each frame's sha256, so a damaged frame
raises :class:`ArchiveDamaged` instead of serving wrong bytes.

Durability: a catalog row is committed only after its blob's bytes (and the directory entry
of a renamed blob) were fsynced. Writes that cannot break a committed row — a new file's
blob, frames appended past the recorded end — may be *deferred* (``defer=True``): their rows
wait in one open catalog transaction and :meth:`ZStore.flush` fsyncs all their blobs at
once (concurrently: the file system then joins them into few journal commits) before it
commits. A crash before the flush leaves blobs no row names (stored again next time) and
frames past a recorded end (cut off), never a row whose bytes are not on disk. Writes that
replace a committed blob (a rewrite, a kept conflict copy, a tail compaction) flush first and
are made durable one by one, as before.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from agtaild.errors import AgtailError, Refused
from agtaild.fsnames import from_text, to_text
from agtaild.store.archive import durable, framing
from agtaild.store.archive.catalog import CatalogRows, Row
from agtaild.store.archive.ends import EndsDigest, ends_match
from agtaild.store.archive.framing import ArchiveDamaged

STORE_DIR = ".zstore"
SUFFIX = ".zst"

log = logging.getLogger(__name__)


class ZStore(CatalogRows):
    """The compressed store under ``<archive>/.zstore`` (one per archive; thread-safe).

    Its methods take paths as the file system names them (agtaild.fsnames); the catalog and
    :class:`Row` hold their text form (``from_text(row.path)`` leads back)."""

    def __init__(self, archive_root: Path) -> None:
        self.root = Path(archive_root) / STORE_DIR
        self._root_text = str(self.root)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._cctx: zstandard.ZstdCompressor | None = None
        self._dctx: zstandard.ZstdDecompressor | None = None
        #: Blobs written by deferred writes since the last flush (their rows are not committed).
        self._pending: dict[str, None] = {}
        #: Directories whose entries changed (a blob renamed in, a folder created) since the
        #: last fsync of them: a rename is durable once its directory is.
        self._dirty_dirs: dict[str, None] = {}
        self._in_batch = False
        #: The open batch's number (a new one at each BEGIN), and those rolled back.
        self.batch = 0
        self.lost_batches: set[int] = set()
        #: Directories known to exist (a mkdir per blob costs more than its compression).
        self._dirs: set[str] = set()
        self._fsyncers: ThreadPoolExecutor | None = None
        #: The catalog's ``ends`` column as rows are read ("NULL" when it could not be added).
        self._ends_sql = "ends"

    def close(self) -> None:
        """Flush what deferred writes left (when that fails they are simply not recorded), close."""
        with self._lock:
            try:
                self.flush()
            except (OSError, sqlite3.Error):
                pass  # already rolled back by flush: those files are stored again next time
            if self._fsyncers is not None:
                self._fsyncers.shutdown()
                self._fsyncers = None
            if self._db is not None:
                self._db.close()
                self._db = None

    def blob(self, path: str) -> Path:
        return Path(self._blob(path))

    def _blob(self, path: str) -> str:
        """The blob's file name (a str: the store names thousands of them in a first index,
        and building Path objects for each cost more than the names)."""
        return os.path.join(self._root_text, from_text(to_text(path)) + SUFFIX)

    # -- writing --------------------------------------------------------------------------
    def put_whole(
        self,
        path: str,
        chunks: Iterable[bytes],
        *,
        source: str | None,
        unit: str | None,
        mtime_ns: int,
        keep_as: str | None = None,
        defer: bool = False,
    ) -> Row:
        """Store ``chunks`` as the whole of ``path`` (temp file, renamed). With ``keep_as``,
        the blob it replaces is first kept under that archive path. With ``defer``, a path
        not yet in the catalog is recorded by the next :meth:`flush` (see the module's
        docstring); a path that is replaces its blob durably at once."""
        with self._lock:
            deferred = defer and keep_as is None and self.get(path) is None
            if not deferred:
                self.flush()
            blob = self._blob(path)
            folder, name = os.path.split(blob)
            self._mkdir(folder)
            tmp = os.path.join(folder, f".{name}.partial")
            frames: list[list[Any]] = []
            ends = EndsDigest()
            try:
                with _open(tmp, _NEW) as out:
                    for raw in framing.reframe(chunks):
                        frames.append(self._write_frame(out, raw, path))
                        ends.feed(raw)
                    if not deferred:
                        out.flush()
                        os.fsync(out.fileno())
            except BaseException:
                durable.unlink_if_there(tmp)  # the source failed, or a frame did not verify
                raise
            if keep_as is not None:
                old = self.get(path)
                if old is not None and os.path.exists(blob):
                    kept_blob = self._blob(keep_as)
                    os.replace(blob, kept_blob)
                    self._put(Row(to_text(keep_as), None, None, old.mtime_ns, old.frames, old.ends))
            os.replace(tmp, blob)
            row = Row(to_text(path), source, unit, mtime_ns, frames, ends.ends())
            self._dirty_dirs[folder] = None
            if deferred:
                self._defer(blob)
            else:
                self._sync_dirs()
            self._put(row)
            return row

    def check_ends(self, path: str, size: int, first: bytes, last: bytes) -> bool | None:
        """Are ``first`` and ``last`` the first and last min(``size``, BOUNDARY_WINDOW) bytes
        of the archived copy of ``path``, ``size`` bytes long? Compared with the digests its
        row keeps (agtaild.store.archive.ends): no frame is read. None when the row keeps none
        (the caller compares with :meth:`read`). Raises ArchiveDamaged when the blob is missing
        or shorter than its frames, and, when the next append recompresses the tail of small
        frames, when those frames are damaged (found now, while the native file can still
        replace them)."""
        row = self.get(path)
        if row is None or row.size != size:
            return False
        try:
            st = os.lstat(self._blob(path))  # a symlink in its place is no blob of ours
            short = not stat.S_ISREG(st.st_mode) or st.st_size < row.zsize
        except FileNotFoundError:
            short = True
        if short:
            raise ArchiveDamaged(f"{to_text(path)}: the archived file is shorter than its catalog says")
        same = ends_match(row.ends, first, last)
        if same and framing.compacts(row):
            for _ in self._read_row(row, path, framing.tail_start(row)[0]):
                pass
        return same

    def append(
        self,
        path: str,
        chunks: Iterable[bytes],
        mtime_ns: int,
        *,
        defer: bool = False,
        checked: tuple[int, bytes, bytes] | None = None,
    ) -> Row:
        """Add ``chunks`` after the recorded end of ``path`` (recompressing the file's tail of
        small frames when there are too many: that replaces the blob, durably at once).
        With ``defer``, the new frames are fsynced and recorded by the next :meth:`flush`.
        ``checked``: the archived copy's size and its first and last min(size, BOUNDARY_WINDOW)
        bytes, as the caller found them equal to the native file's (:meth:`check_ends` or
        :meth:`read`): the new row's digests of its ends are made from them and the new bytes,
        nothing read back; a copy whose size is no longer that one (another process appended
        meanwhile) is not appended to. Without them the row keeps no digests (the next
        append compares the bytes read back)."""
        with self._lock:
            row = self.get(path)
            if row is None:
                raise AgtailError(f"{path}: not in the archive catalog")
            digest = None
            if checked is not None:
                if row.size != checked[0]:
                    raise AgtailError(f"{to_text(path)}: the archived copy changed meanwhile; it will be retried")
                digest = EndsDigest.after(row.size, row.ends, checked[1], checked[2])
            if digest is not None:
                chunks = framing.feeding(chunks, digest)
            if framing.compacts(row):
                self.flush()
                return self._compact_tail(row, chunks, mtime_ns, digest)
            if not defer:
                self.flush()
            blob = self._blob(path)
            end = row.zsize
            new: list[list[Any]] = []
            with _open(blob, os.O_RDWR) as out:
                if os.fstat(out.fileno()).st_size < end:  # truncating would make up zeros
                    raise ArchiveDamaged(f"{to_text(path)}: the archived file is shorter than its catalog says")
                out.truncate(end)  # bytes of an interrupted append were never recorded
                out.seek(end)
                try:
                    for raw in framing.reframe(chunks):
                        new.append(self._write_frame(out, raw, path))
                except BaseException:
                    out.truncate(end)
                    raise
                if not defer:
                    out.flush()
                    os.fsync(out.fileno())
            row.frames.extend(new)
            row.mtime_ns = mtime_ns
            row.ends = None if digest is None else digest.ends()
            if defer:
                self._defer(blob)
            self._put(row)
            return row

    def _compact_tail(self, row: Row, chunks: Iterable[bytes], mtime_ns: int, digest: EndsDigest | None) -> Row:
        """Rewrite ``row``'s blob with its trailing run of partly filled frames, plus
        ``chunks``, recompressed into full frames; the full frames before it are copied as
        compressed bytes. Temp file, new frames checked, rename: an interruption leaves the
        old blob as it was. ``digest``: the ends of the file, fed ``chunks`` as they go."""
        path = from_text(row.path)
        head_raw, k = framing.tail_start(row)
        head_z = sum(f[1] for f in row.frames[:k])
        tail = b"".join(self.read(path, head_raw))
        blob = self._blob(path)
        folder, name = os.path.split(blob)
        tmp = os.path.join(folder, f".{name}.partial")
        new: list[list[Any]] = []
        try:
            with _open(blob, os.O_RDONLY) as src, _open(tmp, _NEW) as out:
                left = head_z
                while left > 0:
                    block = src.read(min(1 << 20, left))
                    if not block:
                        raise ArchiveDamaged(
                            f"{row.path}: the archived file is shorter than its catalog says"
                        )
                    out.write(block)
                    left -= len(block)
                for raw in framing.reframe([tail, *chunks]):
                    new.append(self._write_frame(out, raw, path))
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            durable.unlink_if_there(tmp)
            raise
        os.replace(tmp, blob)
        self._dirty_dirs[folder] = None
        self._sync_dirs()
        row.frames = row.frames[:k] + new
        row.mtime_ns = mtime_ns
        row.ends = None if digest is None else digest.ends()
        self._put(row)
        return row

    def _write_frame(self, out: Any, raw: bytes, path: str) -> list[Any]:
        """Compress ``raw`` as one frame (content size and checksum in its header) onto
        ``out``, once its decompression gave back ``raw`` (in memory: reading the file back
        would only read the page cache these bytes are in)."""
        if self._cctx is None:  # one compressor, reused: making one costs more than a small file
            self._cctx = zstandard.ZstdCompressor(level=framing.LEVEL, write_checksum=True, write_content_size=True)
            self._dctx = zstandard.ZstdDecompressor()
        assert self._dctx is not None
        z = self._cctx.compress(raw)
        try:
            same = self._dctx.decompress(z, max_output_size=len(raw)) == raw
        except zstandard.ZstdError:
            same = False
        if not same:
            raise ArchiveDamaged(f"{to_text(path)}: a compressed frame did not decompress to its bytes")
        out.write(z)
        return [len(raw), len(z), hashlib.sha256(raw).hexdigest()]

    def _mkdir(self, folder: str) -> None:
        """Make ``folder`` (below the store) and those above it up to the archive's, each a
        real folder: a symlink on the way is refused, never followed (each checked once)."""
        if folder in self._dirs:
            return
        top = os.path.dirname(self._root_text)
        here = top
        for part in os.path.relpath(folder, top).split(os.sep):
            parent, here = here, os.path.join(here, part)
            if here in self._dirs:
                continue
            try:
                os.mkdir(here)
                self._dirty_dirs[parent] = None  # its new entry is durable once it is
            except FileExistsError:
                pass
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                raise Refused(f"{here} is a symlink or not a folder: agtail writes only into real folders of its "
                              "archive; remove it")
            self._dirs.add(here)

    def _sync_dirs(self) -> None:
        dirs, self._dirty_dirs = list(self._dirty_dirs), {}
        for d in dirs:
            durable.fsync_dir(d)

    # -- deferred durability --------------------------------------------------------------
    def _defer(self, blob: str) -> None:
        if not self._in_batch:
            self.db.execute("BEGIN IMMEDIATE")
            self._in_batch = True
            self.batch += 1
        self._pending[blob] = None

    def pending(self) -> int:
        """Blobs written by deferred writes and not yet flushed."""
        return len(self._pending)

    def flush(self) -> None:
        """Make the deferred writes durable: fsync their blobs and the directories they were
        renamed or created in (an append changes no directory), then commit their rows. When
        a blob cannot be synced, their rows are rolled back (those files are stored again
        next time) and the error raised."""
        with self._lock:
            if not self._in_batch:
                return
            blobs = list(self._pending)
            try:
                dirs, self._dirty_dirs = list(self._dirty_dirs), {}
                if len(blobs) <= 2:
                    for b in blobs:
                        durable.fsync_path(b)
                    for d in dirs:
                        durable.fsync_dir(d)
                else:
                    if self._fsyncers is None:
                        self._fsyncers = ThreadPoolExecutor(durable.FSYNC_THREADS, thread_name_prefix="agtail-fsync")
                    durable.fsync_all(self._fsyncers, durable.fsync_path, blobs)
                    durable.fsync_all(self._fsyncers, durable.fsync_dir, dirs)
                self.db.execute("COMMIT")
            except BaseException:
                self.lost_batches.add(self.batch)
                try:
                    self.db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            finally:
                self._in_batch = False
                self._pending.clear()

    def sync(self) -> None:
        """Make every recorded row durable (before a plain copy is removed on its strength)."""
        with self._lock:
            self.flush()
            self.db.execute("PRAGMA wal_checkpoint(FULL)")

    # -- reading --------------------------------------------------------------------------
    def read(self, path: str, offset: int = 0, length: int | None = None) -> Iterator[bytes]:
        """The archived bytes of ``path`` from ``offset`` (``length`` of them, or to the end),
        each frame checked; raises ArchiveDamaged on a mismatch, AgtailError when not archived."""
        row = self.get(path)
        if row is None:
            raise AgtailError(f"{to_text(path)}: not in the archive")
        return self._read_row(row, path, offset, length)

    def _read_row(self, row: Row, path: str, offset: int = 0, length: int | None = None) -> Iterator[bytes]:
        end = row.size if length is None else min(row.size, offset + length)
        raw_at = z_at = 0
        dctx = zstandard.ZstdDecompressor()
        with _open(self._blob(path), os.O_RDONLY) as fh:
            for n, (raw_len, z_len, digest) in enumerate(row.frames):
                if raw_at + raw_len > offset and raw_at < end:
                    fh.seek(z_at)
                    raw = framing.decompress(dctx, fh.read(z_len), raw_len, digest, f"{to_text(path)} frame {n}")
                    yield raw[max(0, offset - raw_at) : end - raw_at]
                raw_at += raw_len
                z_at += z_len
                if raw_at >= end:
                    break

    def matches(self, path: str, source: str) -> bool:
        """Is the native file ``source`` byte for byte what is archived as ``path``? (hashed
        frame by frame against the recorded digests: nothing is decompressed)"""
        try:
            with open(source, "rb") as fh:
                return self.matches_file(path, fh, os.fstat(fh.fileno()).st_size)
        except OSError:
            return False

    def matches_file(self, path: str, fh: BinaryIO, size: int) -> bool:
        """:meth:`matches` of a file already open as ``fh`` (``size`` bytes long; read from its start)."""
        row = self.get(path)
        if row is None or size != row.size:
            return False
        try:
            fh.seek(0)
            return all(hashlib.sha256(fh.read(f[0])).hexdigest() == f[2] for f in row.frames)
        except OSError:
            return False

    def verify(self, path: str) -> str | None:
        """None when every frame of ``path`` decompresses to its recorded digest, else why not."""
        try:
            for _ in self.read(path):
                pass
        except ArchiveDamaged as exc:
            return exc.message
        except OSError as exc:
            return f"{to_text(path)}: {exc.strerror or exc}"
        return None


_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def _open(name: str, flags: int) -> Any:
    """A blob (or its temp file) opened without following a symlink in its place (ELOOP)."""
    fd = os.open(name, flags | durable.NOFOLLOW, 0o600)
    return os.fdopen(fd, "rb" if flags == os.O_RDONLY else ("r+b" if flags == os.O_RDWR else "wb"))
