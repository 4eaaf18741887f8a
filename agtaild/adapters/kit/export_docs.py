"""The import store's side of a chat service's export: one JSON file per conversation.

``agtail import`` (agtaild.store.chat_import) writes each conversation of an export as
``<conversation id>.json`` in the agent's folder of a collection. Discovery takes the
``*.json`` files directly in the root whose first bytes hold the service's marker key (a
cheap look: a folder of some other agent's JSON files is not mistaken for an export).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agtaild.adapters.base import Unit
from agtaild.adapters.kit import files, scan

#: How much of a file discovery reads to find the marker.
SNIFF_BYTES = 64 * 1024


def sniff(path: str, marker: bytes) -> bool:
    return marker in head_of(path, SNIFF_BYTES)


def head_of(path: str, size: int) -> bytes:
    """The first ``size`` bytes of a regular file (b"" when it cannot be read, or is none)."""
    try:
        return files.read_regular(path, size)
    except (OSError, ValueError):
        return b""


def conversation_units(agent: str, root: Path, marker: bytes) -> Iterator[Unit]:
    """One unit per ``*.json`` file of ``root`` that carries ``marker``, by name."""
    if not root.is_dir():
        return
    for entry in sorted(scan.entries(root), key=lambda e: e.name):
        name = entry.name
        if name.startswith(".") or not name.endswith(".json") or not scan.is_file(entry):
            continue
        if scan.size(entry) > 0 and sniff(entry.path, marker):
            yield Unit(agent=agent, path=entry.path, files=[entry.path], root=str(root))
