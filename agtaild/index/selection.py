"""Sessions named by (collection, agent, id), as SQL: what the user's own state selects.

Labels, stars and hides live outside the index (agtaild.userstate), so a filter on them reaches
the index as a list of session refs. The list goes in as one JSON parameter read by
``json_each`` (never one ``?`` per session: thousands of hidden sessions would pass SQLite's
variable limit), joined on ``sessions(agent, sid)`` so only the named rows are looked up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Ref = tuple[str, str, str]
#: (only these sessions or None for any, never these or None): a state filter's selection.
Picked = tuple[list[Ref] | None, list[Ref] | None]

#: The ids of the sessions a JSON list of [collection, agent, id] names.
IDS_OF_REFS = (
    "SELECT x.id FROM json_each(?) j JOIN sessions x"
    " ON x.agent = json_extract(j.value, '$[1]') AND x.sid = json_extract(j.value, '$[2]')"
    " AND coalesce(x.collection, '') = json_extract(j.value, '$[0]')"
)


def refs_json(refs: Iterable[Ref]) -> str:
    return json.dumps([list(r) for r in refs], ensure_ascii=False, separators=(",", ":"))


def id_conditions(column: str, only: list[Ref] | None, without: list[Ref] | None) -> tuple[list[str], list[Any]]:
    """Conditions on a session-id ``column``: only the sessions ``only`` names (None: any; an
    empty list: none), never those ``without`` names."""
    where: list[str] = []
    args: list[Any] = []
    if only is not None:
        if not only:
            where.append("0")
        else:
            where.append(f"{column} IN ({IDS_OF_REFS})")
            args.append(refs_json(only))
    if without:
        where.append(f"{column} NOT IN ({IDS_OF_REFS})")
        args.append(refs_json(without))
    return where, args
