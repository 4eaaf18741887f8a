"""The archive mirror in a process of its own, for the big updates (a first index).

Mirroring is reading, hashing and compressing every native file the index reads: on the
200 MB bench corpus ≈ 2 s of CPU. On a thread of the index's process it competes with the
single SQLite writer for the GIL and stretches the whole index by more than its own CPU; in
a process of its own it runs beside the writer on the other core, as the read workers do.

The index process sends each native unit it has stored (agent, unit, root: a few hundred
bytes) down a pipe, from its after-read thread, so a mirror that falls behind never holds the
writer up. The mirror process archives them with deferred durability
(agtaild.store.archive.archiver), and when told the update is done it flushes (every row committed
only after its blob is fsynced), answers with its report and exits. Small updates (the
daemon's appends) stay on the thread: starting a process would cost more than they do.

If the index process dies, the mirror sees the pipe close, flushes what it has and exits; if
the mirror dies, the update reports it and the index itself is unaffected.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

import msgspec

from agtaild.adapters.base import Unit
from agtaild.config import Config, RootSpec
from agtaild.fsnames import unit_real, unit_text
from agtaild.store.archive.archiver import empty_report, merge_report

log = logging.getLogger(__name__)

#: An update reading at least this many bytes mirrors in its own process (as it reads in
#: worker processes: agtaild.index.readers.POOL_THRESHOLD_BYTES).
PROCESS_BYTES = 16 << 20

#: Units handed to the archive in one call, at most (those already waiting in the pipe).
BATCH_UNITS = 64
#: The mirror process's niceness. A first index keeps the writer and the readers busy but not
#: every core all the time (each waits for the other now and then): a mirror below them takes
#: those gaps instead of their time, and catches up at full speed once the reading is done.
#: Measured, 200 MB cold index on 2 cores: 4.8–5.2 s → 4.3–4.6 s as shipped (the index alone:
#: 4.3–4.6 s); nice 19 was no better. Not SCHED_IDLE: on a machine busy with other work it
#: would get nothing, and the update waits for the mirror before it reports.
NICENESS = 10

_Message = tuple[str, Unit, RootSpec]
_encode = msgspec.msgpack.Encoder().encode
_decode_message = msgspec.msgpack.Decoder(_Message).decode
_decode_config = msgspec.msgpack.Decoder(Config).decode
_DONE = b""


class MirrorProcess:
    """The parent's end: :meth:`send` units as they are read, then :meth:`finish`."""

    def __init__(self, config: Config) -> None:
        import multiprocessing  # here: every update that reads imports this module (~6 ms)

        # fork is cheapest, but forking a process that runs other threads (the daemon) can
        # inherit a held lock; forkserver forks from a clean single-threaded server instead.
        method = "fork" if threading.active_count() == 1 and sys.platform == "linux" else "forkserver"
        if method not in multiprocessing.get_all_start_methods():
            method = "spawn"
        ctx: Any = multiprocessing.get_context(method)
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=serve, args=(child, _encode(config)), name="agtail-archive", daemon=True
        )
        self._proc.start()
        child.close()
        self._broken: str | None = None

    def send(self, agent: str, unit: Unit, root: RootSpec) -> None:
        if self._broken is not None:
            return
        try:
            self._conn.send_bytes(_encode((agent, unit_text(unit), root)))
        except OSError as exc:  # the mirror died: finish() says so
            self._broken = str(exc)

    def finish(self) -> dict[str, Any]:
        """Tell the mirror the update is done; its report once everything is durable."""
        try:
            if self._broken is None:
                self._conn.send_bytes(_DONE)
                report: dict[str, Any] = msgspec.msgpack.decode(self._conn.recv_bytes())
            else:
                raise OSError(self._broken)
        except (OSError, EOFError) as exc:
            self._proc.join(5)
            report = empty_report()
            report["stopped"] = True
            report["errors"].append(
                {
                    "path": "",
                    "message": f"the archive mirror process stopped (exit code {self._proc.exitcode}): {exc or 'no answer'}",
                }
            )
        finally:
            self._conn.close()
        self._proc.join(30)
        return report


def _received(conn: Any) -> Iterator[list[bytes]]:
    """The messages received until the end (or until the index process is gone: what was
    archived is kept), in batches of what has already arrived (at most BATCH_UNITS): one
    archive call per batch instead of one per unit."""
    while True:
        batch: list[bytes] = []
        while True:
            try:
                raw = conn.recv_bytes()
            except EOFError:
                raw = _DONE
            if raw == _DONE:
                if batch:
                    yield batch
                return
            batch.append(raw)
            if len(batch) >= BATCH_UNITS or not conn.poll():
                break
        yield batch


def serve(conn: Any, config_raw: bytes) -> None:
    """The mirror process: archive each unit received, flush at the end, answer the report."""
    from agtaild.adapters import get_adapter
    from agtaild.dirs import private_umask
    from agtaild.store.archive.archiver import Archiver

    private_umask()  # a process of its own (spawned or forked): what it stores is 0600
    try:
        os.nice(NICENESS)
    except OSError:  # not allowed here: the mirror runs at the index's priority
        pass
    config = _decode_config(config_raw)
    archiver = Archiver(config)
    report = empty_report()
    try:
        for batch in _received(conn):
            pairs = [(get_adapter(agent), unit_real(unit)) for agent, unit, _root in map(_decode_message, batch)]
            merge_report(report, archiver.mirror_pairs(pairs, defer=True))
        merge_report(report, archiver.flush())
        report["lost"] = len(archiver.store.lost_batches)
    finally:
        archiver.cache.close()
        archiver.store.close()
    try:
        conn.send_bytes(_encode(report))
    except OSError:
        pass
