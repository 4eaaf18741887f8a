"""The side files of an export, cut down to what speaks of the sessions chosen.

A side file (agtaild.adapters.kit.sidecars) describes every session of its agent: Cline's task
index holds every task's title, Kimi's ``kimi.json`` every work dir, Droid's invocations every
subagent's description. The archive and a sync carry them whole (they are the user's own
copies); ``agtail export AGENT:ID…`` is made to hand chosen sessions to someone, so each side
file it writes holds only the entries of those sessions, as the side file's adapter cuts it
(``Adapter.side_file_for``). One that cannot be read is not sent, and said so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.sidecars import MAX_BYTES, SIDE_DIR
from agtaild.sync.native import LocalFile


def is_side(path: str) -> bool:
    """Is a collection path (``agent/…``) a side file?"""
    parts = path.split("/", 2)
    return len(parts) == 3 and parts[1] == SIDE_DIR


def cut_side_files(
    files: dict[str, LocalFile], pairs: list[tuple[Any, Any]], workdir: Path
) -> list[dict[str, str]]:
    """Point each side file in ``files`` at a copy in ``workdir`` cut to the units of ``pairs``
    (adapter, Unit) that depend on it; drop one that cannot be read. The errors, as a
    transfer reports them."""
    errors: list[dict[str, str]] = []
    for number, (path, local) in enumerate(sorted(files.items())):
        if not is_side(path):
            continue
        adapter = next((a for a, _u in pairs if a.id == local.agent), None)
        units = [u for a, u in pairs if a.id == local.agent and local.source in u.sidecars]
        cut = None
        if adapter is not None:
            try:
                data = read_regular(local.source, MAX_BYTES + 1)
                st = os.stat(local.source)
                cut = (
                    adapter.side_file_for(path.split("/", 1)[1], data, units)
                    if len(data) <= MAX_BYTES
                    else None
                )
            except OSError:
                cut = None
        if cut is None:
            del files[path]
            errors.append({"path": path, "message": "not sent: the side file could not be read"})
            continue
        copy = workdir / f"{number}.side"
        copy.write_bytes(cut)
        os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))  # the manifest keeps the file's own time
        local.source = str(copy)
    return errors
