"""The user's own state in the query layer's answers: sessions carry their labels, star, hide
and title (agtaild.userstate), and the session filters take them (``label``, ``starred``,
``hidden``). The state is read from its own store on every answer: the index never holds it,
so no rebuild can lose it.
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import UsageError
from agtaild.index.params import Params

#: The session filters the user's state adds (sessions.list, search).
STATE_FILTERS = ("label", "starred", "hidden")
HIDDEN = ("exclude", "only", "include")


def ref_of(session: dict[str, Any]) -> tuple[str, str, str]:
    return (session.get("collection") or "", session["agent"], session["id"])


def state_refs(
    store: Any, p: Params
) -> tuple[list[tuple[str, str, str]] | None, list[tuple[str, str, str]] | None]:
    """(only these sessions, never these) for a request's ``label``/``starred``/``hidden``."""
    if store is None:
        return None, None
    label = p.text("label", max_len=400)
    starred = p.flag("starred")
    hidden = p.choice("hidden", HIDDEN, "exclude") or "exclude"
    only: set[tuple[str, str, str]] | None = None
    if label is not None:
        key, sep, value = label.partition("=")
        if not key:
            raise UsageError("parameter 'label': expected KEY or KEY=VALUE")
        only = store.matching(label=(key, value if sep else None))
    if starred:
        stars = store.matching(starred=True)
        only = stars if only is None else only & stars
    hidden_set = store.matching(hidden=True) if hidden != "include" else set()
    if hidden == "only":
        only = hidden_set if only is None else only & hidden_set
        return sorted(only), None
    return (None if only is None else sorted(only)), sorted(hidden_set) or None


def annotate(store: Any, sessions: list[dict[str, Any]]) -> None:
    """Give each session document its ``state`` (labels, starred, hidden, title); a title of the
    user's is the session's ``title``, the agent's own kept as ``agent_title``."""
    if store is None or not sessions:
        return
    found = store.of([ref_of(s) for s in sessions])
    for s in sessions:
        state = found.get(ref_of(s))
        if state is None:
            continue
        s["state"] = state
        if state.get("title"):
            s["agent_title"] = s.get("title")
            s["title"] = state["title"]
