"""Takeout's Gemini Apps activity → sessions.

Takeout keeps no conversation id, so an entry's session is found from time alone: the
entries sorted by ``time``, a new session starts where the gap to the previous entry is
more than :data:`GAP_SECONDS`. A session's id is a digest of its first entry's time and
title (16 hex digits: short ids stay distinct, where a time's first characters would not),
so a later export that only adds entries keeps the ids of the sessions before; a stored session whose
every entry the later export groups under another id has been merged into that one
(:func:`entry_keys`, agtaild.store.chat_import removes it).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

#: A pause longer than this between two prompts starts a new session.
GAP_SECONDS = 30 * 60


def _when(entry: Any) -> datetime | None:
    value = entry.get("time") if isinstance(entry, dict) else None
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else None


def entry_key(entry: Any) -> tuple[str, str]:
    """What identifies an entry across exports: its time and title."""
    if not isinstance(entry, dict):
        return ("", "")
    return (str(entry.get("time")), str(entry.get("title")))


def entry_keys(group: Any) -> set[tuple[str, str]]:
    return {entry_key(e) for e in group} if isinstance(group, list) else set()


def group_id(first: Any) -> str:
    time, title = entry_key(first)
    return hashlib.sha256(f"{time}\0{title}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def group_entries(entries: list[Any]) -> list[tuple[str, list[Any]]]:
    """(session id, entries oldest first) for every session; entries without a time are left out."""
    timed = sorted(((dt, e) for e in entries if (dt := _when(e)) is not None), key=lambda p: p[0])
    groups: list[tuple[str, list[Any]]] = []
    last: datetime | None = None
    for dt, entry in timed:
        if last is None or (dt - last).total_seconds() > GAP_SECONDS:
            groups.append((group_id(entry), []))
        groups[-1][1].append(entry)
        last = dt
    return groups
