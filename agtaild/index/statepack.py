"""Adapter continuation states, compressed where they are stored (``files.state``).

An adapter's saved state (what it needs to continue a file from where the last read stopped:
open tool calls, the usage keys seen, a rewound session's tree…) is msgpack or JSON and
repeats itself; on the 200 MB bench corpus the states were 13.0 MB of the index and 5.0 MB
compressed (zstd level 1: 43 ms of CPU for all of them, in the worker processes). Small and
very large states stay as they are. A stored state that begins with zstd's frame magic is a frame we wrote: a
raw state that happens to begin with those bytes is always compressed, so reading is never
ambiguous; an older index's raw states read as they are.
"""

from __future__ import annotations

import threading

import zstandard

#: States shorter than this are stored raw (compressing them saves little).
MIN_BYTES = 2048
#: ... and so are states this long or longer: those of the longest sessions, which are the
#: ones appended to most. Measured on a 48 MB session (an 875 KB state then; 412 KB since the
#: Claude usage memory is framed, mostly ids that do not compress): compressing it at every
#: append took the daemon's append from 11 to 15 ms of CPU; raw, it is 1–2% of the session.
MAX_BYTES = 256 << 10
LEVEL = 1
_MAGIC = b"\x28\xb5\x2f\xfd"
#: One compressor and decompressor per thread (they are not safe to share between threads;
#: making new ones for every state cost 8 µs each, as much as compressing a small state).
_local = threading.local()


def _codecs() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    codecs = getattr(_local, "codecs", None)
    if codecs is None:
        codecs = _local.codecs = (zstandard.ZstdCompressor(level=LEVEL), zstandard.ZstdDecompressor())
    return codecs


def pack(state: bytes | None) -> bytes | None:
    """The state as stored."""
    if state is None or (not MIN_BYTES <= len(state) < MAX_BYTES and not state.startswith(_MAGIC)):
        return state
    return _codecs()[0].compress(state)


def unpack(stored: bytes | None) -> bytes | None:
    """The state as the adapter wrote it; None for a frame that does not decompress (no raw
    state begins with the magic, see ``pack``): the unit is then read again from the start."""
    if stored is None or not stored.startswith(_MAGIC):
        return stored
    try:
        return _codecs()[1].decompress(stored)
    except zstandard.ZstdError:
        _local.codecs = None  # a fresh pair after an error, whatever state it left behind
        return None
