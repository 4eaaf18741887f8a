"""Sessions a user shares with the team by label: ``share=team`` (docs/team.md, Readers).

Labels live in the user's state (agtaild.userstate, ``state.sqlite3``), apart from the index,
so its change numbers do not see them: every push compares the labels with the team database's
``sessions.shared`` of its machine (two statements), and the ``project`` readers' policy
(agtaild.pg.readers) lets them read a shared session whatever its project.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def local_shares(state: Path) -> list[tuple[str, str, str]] | None:
    """The sessions the user labelled ``share=team`` (agent, id, collection); None when the
    labels cannot be read (then the shares stay as they were: a read error never unshares)."""
    if not state.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT agent, sid, collection FROM labels WHERE key = 'share' AND value = 'team' AND who = 'user'"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return [(str(a), str(s), str(c or "")) for a, s, c in rows]


def sync_shares(team: Any, machine: str, state: Path) -> int:
    """Mark ``machine``'s sessions shared or not as the labels in ``state`` say (one
    transaction); the number of sessions changed. A changed session is written again (schema
    m007_change_feed), so the team server's change feed tells the readers who now see it (or no longer do)."""
    shares = local_shares(state)
    if shares is None:
        return 0
    cols = [list(x) for x in zip(*shares, strict=True)] if shares else [[], [], []]
    listed = "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(agent, sid, collection)"
    changed = 0
    with team.transaction(), team.cursor() as cur:
        cur.execute(
            f"UPDATE sessions s SET shared = true, pushed_at = now() FROM ({listed}) u WHERE s.machine = %s"
            " AND s.agent = u.agent AND s.sid = u.sid AND s.collection = u.collection AND NOT s.shared",
            (*cols, machine),
        )
        changed += cur.rowcount
        cur.execute(
            f"UPDATE sessions s SET shared = false, pushed_at = now() WHERE s.machine = %s AND s.shared"
            f" AND NOT EXISTS (SELECT 1 FROM ({listed}) u WHERE s.agent = u.agent AND s.sid = u.sid"
            " AND s.collection = u.collection)",
            (machine, *cols),
        )
        changed += cur.rowcount
    return changed
