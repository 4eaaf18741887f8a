"""The agents part of `agtail doctor`: which agents are here, where, how many sessions, and
how much of each format version agtail could not map.

An adapter keeps a record it does not understand as an ``unknown`` event (raw JSON). A
version whose share of unknown events jumps above the others' is the sign that the agent
changed its format (a new record type, a renamed field): the doctor warns, naming the
version, so the adapter can be updated. The numbers come from the index (opened read-only);
before the first index update there are none.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agtaild.words import count

#: A version's unknown share above this is worth a warning when other versions do better.
JUMP_FLOOR = 0.05
#: … and when it is this many times the best share among the agent's other versions.
JUMP_FACTOR = 3.0
#: A share above this is flagged whatever the other versions do.
HIGH_SHARE = 0.25

#: Where a format records its own version when the agent's is not written down: Droid's
#: ``session_start.version`` (the file format, 2 in 0.225.2), Kimi's wire ``protocol_version``.
FORMAT_MARKERS = (("format_version", "format"), ("protocol_version", "wire protocol"))

_QUERY = """
SELECT agent, version, format, count(*), sum(events), sum(unknown) FROM (
    SELECT s.agent AS agent, json_extract(s.data, '$.version') AS version,
           coalesce({markers}) AS format,
           (SELECT count(*) FROM events e WHERE e.session_id = s.id) AS events,
           (SELECT count(*) FROM events e WHERE e.session_id = s.id AND e.kind = 'unknown') AS unknown
    FROM sessions s
) GROUP BY agent, version, format
""".replace(
    "{markers}",
    ", ".join(f"'{label} ' || json_extract(s.data, '$.extra.{key}')" for key, label in FORMAT_MARKERS) + ", NULL",
)
#: Agents whose files record no version at all (of the agent or of the format): said so, not "?".
NOT_RECORDED = "version not recorded"


def _version_key(version: str | None) -> tuple[Any, ...]:
    """Natural order: 0.9 before 0.10; sessions without a version first."""
    if version is None:
        return ()
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", version) if p)


def index_formats(index_path: Path) -> dict[str, list[dict[str, Any]]] | None:
    """Per agent, per format version: sessions, events, unknown events and their share.
    None when there is no index yet (or it cannot be read)."""
    if not index_path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(index_path.resolve()))}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        rows = conn.execute(_QUERY).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    out: dict[str, list[dict[str, Any]]] = {}
    for agent, version, fmt, sessions, events, unknown in rows:
        events, unknown = int(events or 0), int(unknown or 0)
        version = version if isinstance(version, str) else None
        out.setdefault(agent, []).append(
            {
                "version": version,
                "format": fmt if isinstance(fmt, str) and version is None else None,
                "sessions": int(sessions),
                "events": events,
                "unknown": unknown,
                "unknown_share": round(unknown / events, 4) if events else 0.0,
            }
        )
    for versions in out.values():
        versions.sort(key=lambda v: (_version_key(v["version"]), v["format"] or ""))
    return out


def label(v: dict[str, Any]) -> str:
    """How doctor names a version row: the agent's version, else the format's, else that none
    is recorded."""
    return v["version"] or v.get("format") or NOT_RECORDED


def jumps(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The versions whose unknown share stands out from the agent's other versions, or is
    high on its own."""
    out = []
    for v in versions:
        others = [o["unknown_share"] for o in versions if o is not v and o["events"]]
        best = min(others) if others else 0.0
        share = v["unknown_share"]
        if v["events"] and (share > HIGH_SHARE or (share > JUMP_FLOOR and share >= JUMP_FACTOR * best)):
            out.append(v)
    return out


_PLACES = """
SELECT s.agent, f.kind, f.root, f.collection, count(*) FROM sessions s JOIN files f ON f.id = s.file_id
GROUP BY 1, 2, 3, 4
"""


def index_places(index_path: Path) -> dict[str, list[tuple[str, str, str | None, int]]]:
    """Per agent, where its indexed sessions came from: (kind, root, collection, sessions)."""
    if not index_path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{quote(str(index_path.resolve()))}?mode=ro", uri=True, timeout=2.0)
        try:
            rows = conn.execute(_PLACES).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    out: dict[str, list[tuple[str, str, str | None, int]]] = {}
    for agent, kind, root, collection, n in rows:
        out.setdefault(agent, []).append((str(kind), str(root), collection, int(n)))
    return out


def where_from(present: list[str], places: list[tuple[str, str, str | None, int]]) -> str:
    """Where an agent's sessions are, in words: its roots, the folders found beside them (Aider
    in repositories), the import store's collections, the archive."""
    found = sorted({root for kind, root, _, _ in places if kind == "native" and root not in present})
    parts = list(present)
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        parts.append(f"{shown} (found beyond the configured roots)")
    collections = sorted({c for kind, _, c, _ in places if kind == "imported" and c})
    if collections:
        parts.append(f"the import store ({', '.join(collections)})")
    archived = sum(n for kind, _, _, n in places if kind == "archive")
    if archived:
        parts.append(f"the archive ({archived})")
    return ", ".join(parts) or "no place any more (not indexed yet)"


def _more_hint(adapter: Any) -> str:
    """How to give an agent kept in project folders the repositories agtail did not find."""
    if adapter.id != "aider":
        return ""
    from agtaild.adapters.aider.nearby import limits

    return (f"; Aider keeps a history in each repository: found in other agents' working directories "
            f"and by a search of {limits()}; add others with --root aider=REPO (repeatable) or "
            "$AGTAIL_AIDER_ROOTS (folders of repositories)")


def _note(adapter: Any) -> str:
    """What an adapter asks doctor to say beside its sessions (an agent agtail can only list)."""
    note = getattr(adapter, "doctor_note", "")
    return f"; {note}" if isinstance(note, str) and note else ""


def agent_report(config: Any) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(one entry per agent found, the doctor checks about them)."""
    from agtaild.adapters import all_adapters

    index = Path(config.data_dir) / "index.sqlite3"
    formats = index_formats(index)
    places = index_places(index)
    agents: list[dict[str, Any]] = []
    checks: list[dict[str, str]] = []
    for adapter in all_adapters():
        roots = [r for r in config.roots if r.agent == adapter.id and r.kind == "native"]
        present = [r.path for r in roots if os.path.exists(r.path)]
        versions = (formats or {}).get(adapter.id, [])
        if not present and not versions:
            if adapter.id == "aider" and getattr(config, "known_cwds", False):
                checks.append({"name": "agent aider", "status": "info",
                               "message": "no history found" + _more_hint(adapter)})
            continue
        sessions = sum(v["sessions"] for v in versions) if formats is not None else None
        entry = {
            "agent": adapter.id,
            "name": adapter.name,
            "roots": present,
            "sessions": sessions,
            "formats": versions,
        }
        agents.append(entry)
        where = where_from(present, places.get(adapter.id, [])) if formats is not None else ", ".join(present)
        hint = _more_hint(adapter) + _note(adapter)
        if formats is None:
            checks.append(
                {
                    "name": f"agent {adapter.id}",
                    "status": "info",
                    "message": f"found in {where} (not indexed yet){hint}",
                }
            )
            continue
        shares = ", ".join(f"{label(v)}: {v['unknown_share']:.1%} unknown" for v in versions)
        flagged = jumps(versions)
        if flagged:
            names = ", ".join(label(v) for v in flagged)
            message = (
                f"{count(sessions or 0, 'session')} in {where}; version {names} has many unmapped records ({shares}): "
                f"the agent probably changed its format — please report it{hint}"
            )
            checks.append({"name": f"agent {adapter.id}", "status": "warn", "message": message})
        else:
            message = f"{count(sessions or 0, 'session')} in {where}" + (f" ({shares})" if shares else "") + hint
            checks.append({"name": f"agent {adapter.id}", "status": "ok", "message": message})
    return agents, checks
