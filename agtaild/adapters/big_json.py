"""Decoding one large JSON document without the cyclic garbage collector walking the heap
meanwhile.

A session document of a few MB decodes into hundreds of thousands of dicts and lists. Every
700 new containers start a collection, and the older generations' collections walk every
live object — the earlier sessions' events, the daemon's caches — so decoding one 4 MB
document took 2–2.5× as long as it does with collection paused (measured: 29 ms paused,
62–73 ms not, with the previous document still alive). Decoded JSON holds no reference
cycles, so pausing finds nothing less: the collector runs as usual right after. The pause is
process-wide but brief, and a collector already off (by the embedding program) stays off.
"""

from __future__ import annotations

import gc
from typing import Any

import msgspec

#: Documents smaller than this allocate too few containers for a collection to matter.
PAUSE_ABOVE_BYTES = 256 * 1024


def decode_document(decoder: msgspec.json.Decoder, data: bytes | str) -> Any:
    """``decoder.decode(data)``, with the collector paused when ``data`` is large. Errors
    propagate as from ``decode`` (and the collector is back on)."""
    if len(data) < PAUSE_ABOVE_BYTES or not gc.isenabled():
        return decoder.decode(data)
    gc.disable()
    try:
        return decoder.decode(data)
    finally:
        gc.enable()
