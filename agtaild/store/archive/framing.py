"""The archive's frames: how a file's bytes are cut, compressed and checked.

Each archived file is a run of zstd frames of at most FRAME_RAW raw bytes, each with its
content size and zstd's checksum; the catalog keeps each frame's sha256 too
(agtaild.store.archive.catalog), and :func:`decompress` checks both before a byte is served.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import zstandard

from agtaild.errors import AgtailError
from agtaild.store.archive.ends import EndsDigest

if TYPE_CHECKING:
    from agtaild.store.archive.catalog import Row

#: Raw bytes per frame: a range read (a write-back, the boundary check of a row without digests
#: of its ends) decompresses at most this much before its first byte; 1 MiB frames store the bench corpus within 0.03 % of 4 MiB ones.
FRAME_RAW = 1024 * 1024
#: zstd level: on the 200 MB bench corpus 3 stores 38.7 MB in 0.8 s of CPU, 6 stores 37.4 MB in
#: 2.7 s (bench/RESULTS.md): the archive is written during the cold index, so speed wins.
LEVEL = 3
#: An append adds a frame; past this many frames smaller than half FRAME_RAW, the file is
#: recompressed as a whole (small frames compress poorly and make the catalog row long).
MAX_SMALL_FRAMES = 48


class ArchiveDamaged(AgtailError):
    """An archived file's bytes do not match their recorded checksums."""


def compacts(row: Row) -> bool:
    """Does the next append to ``row`` recompress its tail? (past MAX_SMALL_FRAMES small frames)"""
    return sum(1 for f in row.frames if f[0] < FRAME_RAW // 2) >= MAX_SMALL_FRAMES


def tail_start(row: Row) -> tuple[int, int]:
    """Where ``row``'s trailing run of partly filled frames starts: its raw offset, and the
    index of its first frame."""
    k = len(row.frames)
    while k > 0 and row.frames[k - 1][0] < FRAME_RAW:
        k -= 1
    return sum(f[0] for f in row.frames[:k]), k


def feeding(chunks: Iterable[bytes], digest: EndsDigest) -> Iterator[bytes]:
    """``chunks``, each fed to ``digest`` as it passes (on its way to be stored)."""
    for chunk in chunks:
        digest.feed(chunk)
        yield chunk


def reframe(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Regroup ``chunks`` into FRAME_RAW-sized pieces (the last one shorter). A file read in
    FRAME_RAW blocks passes through uncopied (joining and slicing 200 MB costs ≈ 0.1 s)."""
    held = b""  # the bytes of the next frame so far, while they are a single chunk
    buf = bytearray()
    for chunk in chunks:
        if not buf and not held and len(chunk) == FRAME_RAW:
            yield chunk
            continue
        if not buf and not held and len(chunk) < FRAME_RAW:
            held = chunk
            continue
        buf += held
        held = b""
        buf += chunk
        while len(buf) >= FRAME_RAW:
            yield bytes(buf[:FRAME_RAW])
            del buf[:FRAME_RAW]
    if held:
        yield held
    elif buf:
        yield bytes(buf)


def decompress(dctx: zstandard.ZstdDecompressor, z: bytes, raw_len: int, digest: str, where: str) -> bytes:
    try:
        raw = dctx.decompress(z, max_output_size=raw_len)
    except zstandard.ZstdError as exc:
        raise ArchiveDamaged(f"{where}: damaged archive frame ({exc})") from None
    if len(raw) != raw_len or hashlib.sha256(raw).hexdigest() != digest:
        raise ArchiveDamaged(f"{where}: damaged archive frame (its bytes do not match their sha256)")
    return raw
