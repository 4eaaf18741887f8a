"""Giving memory back after a big index update.

A first index (or a reindex) passes every transcript through the writer process: batches of
prepared rows, decoded results, full-text buffers. Python frees those objects, but glibc's
allocator keeps the freed pages for reuse, so an idle daemon stayed as big as its busiest
moment (measured on the 200 MB corpus, in-process: 122 MB after the index, 59 MB after
``malloc_trim``). After an update that read at least :data:`BIG_UPDATE_BYTES`, the writer
thread stops multiprocessing's fork server and resource tracker (started again by the next big
update), collects garbage, asks SQLite to drop its connection's page cache
(``PRAGMA shrink_memory``) and glibc to return its free pages to the system. Elsewhere (no
glibc) all but the last happen.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sqlite3
import sys
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

#: An update that read this many bytes is followed by a release.
BIG_UPDATE_BYTES = 32 << 20


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def stop_helpers() -> None:
    """Stop multiprocessing's helper processes, the fork server that starts the reading
    workers and the resource tracker (together ~32 MB of an idle daemon on the 2 GB corpus):
    the next big update starts them again. Only after the update's worker pool is shut down
    (the writer thread calls this between updates; nothing else starts processes)."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    for module, name in ((forkserver, "_forkserver"), (tracker, "_resource_tracker")):
        stop = getattr(getattr(module, name, None), "_stop", None)
        if stop is None:
            continue
        try:
            stop()
        except (OSError, ChildProcessError, ValueError):
            pass


def release(connections: Iterable[sqlite3.Connection] = (), *, helpers: bool = False) -> bool:
    """Free what the process no longer uses; True when glibc returned pages to the system.
    ``helpers``: multiprocessing's helper processes too (:func:`stop_helpers`)."""
    if helpers:
        stop_helpers()
    gc.collect()
    for db in connections:
        try:
            db.execute("PRAGMA shrink_memory")
        except sqlite3.Error:
            pass
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
