"""Test helpers for adapters: apply ReadResults the way the index does, and replay a growing
file in steps, so a test can check that incremental reads store exactly what one read does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.model import to_builtins


class Store:
    """What the index keeps for one unit: events by seq, usage by key, the latest session."""

    def __init__(self) -> None:
        self.events: dict[int, Any] = {}
        self.usage: dict[str, Any] = {}
        self.session: dict[str, Any] = {}
        self.state: bytes | None = None

    def apply(self, result: ReadResult) -> None:
        if result.reset:
            self.events.clear()
            self.usage.clear()
        for ev in result.events:
            self.events[ev.seq] = to_builtins(ev)
        for seq, patch in result.marks.items():  # re-marks of stored events (as the index does)
            stored = self.events.get(seq)
            if stored is not None:
                for key, value in patch.items():
                    if value is None:
                        stored["extra"].pop(key, None)
                    else:
                        stored["extra"][key] = value
        for rec in result.usage:
            self.usage[rec.key] = to_builtins(rec)
        session = to_builtins(result.session)
        session.pop("mtime", None)
        self.session = session
        self.state = result.state

    def snapshot(self) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        return [self.events[k] for k in sorted(self.events)], dict(self.usage), dict(self.session)


def read_once(adapter: Adapter, unit: Unit, *, now: float | None = None) -> Store:
    store = Store()
    store.apply(adapter.read(unit, None, now=now))
    return store


def replay_growing_file(
    adapter: Adapter, src: Path, dst: Path, cuts: list[int], unit: Unit, *, settled: bool
) -> Store:
    """Write ``src`` into ``dst`` up to each byte offset in ``cuts`` (then whole), reading
    after each step with the previous state. ``settled`` decides whether a torn last line
    is treated as finished (mtime long ago) or still being written (mtime just now)."""
    data = src.read_bytes()
    dst.parent.mkdir(parents=True, exist_ok=True)
    store = Store()
    with open(dst, "wb") as fh:
        written = 0
        for cut in [*sorted(set(cuts)), len(data)]:
            if cut < written:
                continue
            fh.write(data[written:cut])
            fh.flush()
            written = cut
            mtime = os.stat(dst).st_mtime
            now = mtime + (100.0 if settled else 0.5)
            store.apply(adapter.read(unit, store.state, now=now))
    return store


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def line_cuts(data: bytes, every: int = 1) -> list[int]:
    """Byte offsets after every ``every``-th newline, plus the middle of every such line."""
    cuts: list[int] = []
    start = 0
    n = 0
    while True:
        nl = data.find(b"\n", start)
        if nl < 0:
            break
        n += 1
        if n % every == 0:
            cuts.append((start + nl) // 2)
            cuts.append(nl + 1)
        start = nl + 1
    return cuts
