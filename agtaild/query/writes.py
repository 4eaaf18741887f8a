"""``state.change``: the one write method of the query layer, for the user's own state.

A label, a star, a hide or a title on one session, recorded with who asked (``user``: the CLI,
the viewer, a script; ``agent``: an agent through agtail's MCP tools). ``rule`` is not
accepted here: only agtaild.userstate.rules writes as a rule. The session is named as every
read names it (AGENT:ID, a unique prefix) and must exist in the index; the store keys it by
(collection, agent, full id), so a rebuilt index finds it again.

The answer is the session as ``sessions.get`` gives it (its ``state`` included) and each
change with whether it was accepted: a user's change is never overwritten by an agent's.
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import UsageError
from agtaild.index.params import Params

#: Who may write through the API (a rule writes through the rules module only).
WRITERS = ("user", "agent")
PARAMS = ("agent", "id", "collection", "path", "who", "label", "unlabel", "star", "hide", "title", "clear_title")


def changes_of(ref: tuple[str, str, str], p: Params, who: str) -> list[Any]:
    """The changes one request asks for, checked (agtaild.userstate.checks) before any is made."""
    from agtaild.userstate import checks
    from agtaild.userstate.store import Change

    out: list[Any] = []
    label = p.text("label", max_len=400)
    if label is not None:
        key, value = checks.parse_label(label)
        out.append(Change(ref, "label", value, key=key, who=who))
    unlabel = p.text("unlabel", max_len=100)
    if unlabel is not None:
        out.append(Change(ref, "label", None, key=checks.key(unlabel), who=who))
    for mark in ("star", "hide"):
        on = p.flag(mark)
        if on is not None:
            out.append(Change(ref, mark, "1" if on else None, who=who))
    title = p.text("title", max_len=1000)
    clear = p.flag("clear_title")
    if title is not None and clear:
        raise UsageError("parameter 'title': give a title or clear_title, not both")
    if title is not None:
        out.append(Change(ref, "title", checks.title(title), who=who))
    elif clear:
        out.append(Change(ref, "title", None, who=who))
    if not out:
        raise UsageError("state.change: nothing to change (label, unlabel, star, hide, title or clear_title)")
    return out


def state_change(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.queries import load_sessions, resolve_session
    from agtaild.query.organize import annotate, ref_of

    p = Params("state.change", params, PARAMS)
    who = p.choice("who", WRITERS, "user") or "user"
    agent, ident = p.session_ref()
    svc.check_agent(p.method, agent)
    rid = resolve_session(svc._reader(), agent, ident, collection=p.text("collection"), path=p.text("path"))
    session = load_sessions(svc._reader(), svc.pricing(), [rid])[rid]
    ref = ref_of(session)
    done = svc.state.apply(changes_of(ref, p, who))
    annotate(svc.state, [session])
    return {"session": session, "changes": [change_doc(c, ok) for c, ok in done]}


def change_doc(c: Any, accepted: bool) -> dict[str, Any]:
    return {"what": c.what, "key": c.key or None, "value": c.value, "who": c.who, "accepted": accepted}
