"""The import store: ``<data dir>/imported/<collection>/<agent>/…``, one collection per source.

Each collection mirrors the native layout below each agent's session root, so the same
adapters read it (config.resolve_roots adds every ``imported/<collection>/<agent>`` as a root
of kind ``imported``); sessions found there carry ``imported: true`` and the collection name
and are never resumable. Only sync writes here; nothing here is ever an agent's own file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from agtaild.errors import NotFound, Refused
from agtaild.sync.directory import scan_tree
from agtaild.sync.manifest import load_manifest
from agtaild.sync.safety import check_collection_name


def collection_dir(config: Any, name: str) -> Path:
    return Path(config.import_dir) / check_collection_name(name)


def _count_sessions(agent: str, root: Path) -> int:
    from agtaild.adapters import get_adapter

    try:
        return sum(1 for _ in get_adapter(agent).discover(root))
    except Exception:  # an unknown agent or a broken tree must not hide the others
        return 0


def describe_collection(config: Any, name: str) -> dict[str, Any]:
    """Counts per agent (sessions, files, bytes), the last sync time and leftovers."""
    root = collection_dir(config, name)
    if not root.is_dir():
        raise NotFound(f"no collection {name!r} in {config.import_dir}; `agtail collections` lists them")
    try:
        record = load_manifest(root)
    except Refused:
        record = None
    tree, problems = scan_tree(root, None)
    agents: dict[str, dict[str, int]] = {}
    partials = conflicts = 0
    for item in tree:
        agent = item.path.split("/", 1)[0]
        if item.kind == "partial":
            partials += 1
            continue
        if item.kind == "conflict":
            conflicts += 1
            continue
        row = agents.setdefault(agent, {"sessions": 0, "files": 0, "bytes": 0})
        row["files"] += 1
        row["bytes"] += item.st.st_size
    for agent, row in agents.items():
        row["sessions"] = _count_sessions(agent, root / agent)
    return {
        "name": name,
        "path": str(root),
        "sessions": sum(r["sessions"] for r in agents.values()),
        "files": sum(r["files"] for r in agents.values()),
        "bytes": sum(r["bytes"] for r in agents.values()),
        "agents": agents,
        "last_sync": record.created if record is not None else None,
        "origin": record.origin_name if record is not None else None,
        "partials": partials,
        "conflicts": conflicts,
        "problems": problems,
    }


def list_collections(config: Any) -> list[dict[str, Any]]:
    base = Path(config.import_dir)
    if not base.is_dir():
        return []
    out = []
    for entry in sorted(base.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and not entry.name.startswith("."):
            try:
                out.append(describe_collection(config, entry.name))
            except Exception as exc:  # a bad name made by hand: say so, keep listing
                out.append({"name": entry.name, "path": str(entry), "error": str(exc)})
    return out


def remove_collection(config: Any, name: str) -> dict[str, Any]:
    """Delete an imported collection (only ever below the import store)."""
    root = collection_dir(config, name)
    if root.is_symlink() or not root.is_dir():
        raise NotFound(f"no collection {name!r} in {config.import_dir}")
    info = describe_collection(config, name)
    shutil.rmtree(root)
    return {"removed": name, "files": info["files"], "bytes": info["bytes"]}


def adopt_new_collections(config: Any) -> list[Any]:
    """Add roots for collections (or agents in them) that appeared since the config was made.

    The roots are resolved once at start; a push into a running daemon creates a collection
    its index would otherwise not read until a restart. Mutates ``config.roots`` in place
    (the service reads it at each update) and returns the roots added.
    """
    from agtaild.adapters import all_adapters
    from agtaild.config import RootSpec

    base = Path(config.import_dir)
    if not base.is_dir():
        return []
    known = {a.id for a in all_adapters()}
    have = {(r.agent, r.path) for r in config.roots}
    added = []
    for coll in sorted(base.iterdir()):
        if not coll.is_dir() or coll.is_symlink() or coll.name.startswith("."):
            continue
        for agent_dir in sorted(coll.iterdir()):
            if agent_dir.name in known and agent_dir.is_dir() and (agent_dir.name, str(agent_dir)) not in have:
                spec = RootSpec(agent=agent_dir.name, path=str(agent_dir), kind="imported", collection=coll.name)
                config.roots.append(spec)
                added.append(spec)
    return added

