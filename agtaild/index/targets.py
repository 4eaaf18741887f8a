"""The watcher's fast path: the paths of an ``only_paths`` update that are appends to stored units.

The daemon's watcher hands the index the files that changed, most often a line appended to a
session being written. Rediscovering every unit of the agent's roots for that (a directory
walk and a ``stat`` of every file: ~150 ms on a 1,200-session corpus) would make an append
cost the size of the history, so an update whose every path is the main file of a stored
unit, *grown in place*, reads those units straight from their stored ``Unit`` instead.

Anything else goes through discovery as before (agtaild.index.discovery), where a new, moved,
replaced or deleted file is found and a read error is never a deletion: a path that is not a
stored unit's main file (a new session, a sidecar, a file no agent reads), a file that is gone
or unreadable, shrunk, emptied or replaced (another inode), a unit whose root is no longer the
one discovery would give it (roots reconfigured or overlapping), an archive unit (hidden or
shown by what the native roots hold), an agent whose units are also found from known
working directories, or whose adapter does not declare ``appends_keep_units`` (its discovery
may link a unit to other files: a parent listed elsewhere, a store chosen by its neighbours).
Only what discovery would find the same way takes the shortcut: a file that grows keeps its
place, its root and its sidecars (a new sidecar is a new path, which the watcher reports and
which sends its update through discovery).
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from agtaild.adapters.base import Unit
from agtaild.config import RootSpec
from agtaild.fsnames import at_or_below, from_text, to_text, unit_real
from agtaild.index.discovery import Candidate

_unit_decoder = msgspec.msgpack.Decoder(Unit)


def appended_units(
    db: Any, paths: list[str], roots: list[RootSpec]
) -> list[tuple[Candidate, tuple[Any, ...]]] | None:
    """(candidate, its ``files`` row: id, agent, root, kind, collection, fingerprint, settled,
    size) for each of ``paths`` (absolute, OS form), or None when any of them needs discovery.
    ``roots`` are every configured root, in order (the first root that holds a path wins)."""
    from agtaild.adapters import get_adapter

    out: list[tuple[Candidate, tuple[Any, ...]]] = []
    seen: set[str] = set()
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        text = to_text(path)
        row = db.execute(
            "SELECT id, agent, root, kind, collection, fingerprint, settled, size, unit, dev, ino"
            " FROM files WHERE path = ?",
            (text,),
        ).fetchone()
        if row is None or row[3] == "archive":
            return None
        holder = next((r for r in roots if at_or_below(text, to_text(r.path))), None)
        if holder is None or (holder.agent, to_text(holder.path), holder.kind, holder.collection) != (
            row[1],
            row[2],
            row[3],
            row[4],
        ):
            return None
        try:
            adapter = get_adapter(row[1])
        except Exception:
            return None
        if adapter.uses_known_cwds or not adapter.appends_keep_units:
            return None  # units found from other files, or whose discovery may change on an append
        try:
            st = os.stat(path)
        except OSError:
            return None  # gone or unreadable: discovery decides (a read error is never a deletion)
        if (st.st_dev, st.st_ino) != (row[9], row[10]) or st.st_size < (row[7] or 0) or st.st_size == 0:
            return None  # replaced, shrunk or emptied
        try:
            unit = unit_real(_unit_decoder.decode(row[8]))
        except (msgspec.DecodeError, TypeError, ValueError):
            return None
        if unit.path != path and unit.path != from_text(text):
            return None
        out.append((Candidate(adapter=adapter, unit=unit, root=holder), tuple(row[:8])))
    return out
