"""The archive mirror in a process of its own, for the big updates (a first index).

Mirroring is reading, hashing and compressing every native file the index reads: on the
200 MB bench corpus ≈ 2 s of CPU. On a thread of the index's process it competes with the
single SQLite writer for the GIL and stretches the whole index by more than its own CPU; in
a process of its own it runs beside the writer on the other core, as the read workers do.

The index process sends each native unit it has stored (agent, unit, root: a few hundred
bytes) down a pipe, from its after-read thread, so a mirror that falls behind never holds the
writer up. The mirror process archives them with deferred durability
(agtaild.store.archive), and when told the update is done it flushes (every row committed
only after its blob is fsynced), answers with its report and exits. Small updates (the
daemon's appends) stay on the thread: starting a process would cost more than they do.

If the index process dies, the mirror sees the pipe close, flushes what it has and exits; if
the mirror dies, the update reports it and the index itself is unaffected.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import msgspec

from agtaild.adapters.base import Unit
from agtaild.config import Config, RootSpec
from agtaild.fsnames import unit_real, unit_text

log = logging.getLogger(__name__)

#: An update reading at least this many bytes mirrors in its own process (as it reads in
#: worker processes: agtaild.index.update.POOL_THRESHOLD_BYTES).
PROCESS_BYTES = 16 << 20

_Message = tuple[str, Unit, RootSpec]
_encode = msgspec.msgpack.Encoder().encode
_decode_message = msgspec.msgpack.Decoder(_Message).decode
_decode_config = msgspec.msgpack.Decoder(Config).decode
_DONE = b""


def _empty_report() -> dict[str, Any]:
    return {"files": 0, "bytes": 0, "appended": 0, "copied": 0, "kept": [], "errors": []}


def _merge(into: dict[str, Any], report: dict[str, Any]) -> None:
    for key, value in report.items():
        if isinstance(value, list):
            into.setdefault(key, []).extend(value)
        else:
            into[key] = into.get(key, 0) + value


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
            report = _empty_report()
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


def serve(conn: Any, config_raw: bytes) -> None:
    """The mirror process: archive each unit received, flush at the end, answer the report."""
    from agtaild.adapters import get_adapter
    from agtaild.store.archive import Archiver

    config = _decode_config(config_raw)
    archiver = Archiver(config)
    report = _empty_report()
    try:
        while True:
            try:
                raw = conn.recv_bytes()
            except EOFError:  # the index process is gone: keep what was archived
                raw = _DONE
            if raw == _DONE:
                break
            agent, unit, _root = _decode_message(raw)
            _merge(report, archiver.mirror_pairs([(get_adapter(agent), unit_real(unit))], defer=True))
        _merge(report, archiver.flush())
        report["lost"] = len(archiver.store.lost_batches)
    finally:
        archiver.cache.close()
        archiver.store.close()
    try:
        conn.send_bytes(_encode(report))
    except OSError:
        pass
