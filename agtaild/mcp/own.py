"""The MCP tools that write: an agent names, labels and unlabels **its own** session.

Which session is the agent's own, in this order (the answer always says which was used):

1. the tool's ``session`` argument (AGENT:ID), accepted only when it can be the caller's: it
   must equal the session the environment names, if one does; else, over stdio, it must be a
   live session (active in the last :data:`LIVE_SECONDS`) in the server's directory or below;
   over HTTP (no directory, no environment of the agent's), a live session;
2. the environment the agent gives its MCP servers (stdio only): ``AGTAIL_SESSION``
   (AGENT:ID, for any agent whose MCP config can set a variable) or Claude Code's
   ``CLAUDE_CODE_SESSION_ID``;
3. the newest session in the server's working directory.

Anything else is refused with the reason: an agent never relabels another session. Every
change is recorded with ``who=agent``; a user's title or label of the same key is never
overwritten (the store refuses it, and the tool says the user's stays).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from agtaild.errors import UsageError
from agtaild.mcp import render

#: How recently a session must have been active to be named as one's own by argument.
LIVE_SECONDS = 15 * 60
#: Variables naming the caller's session: (variable, the agent it names, or None for AGENT:ID).
ENV_SESSION: tuple[tuple[str, str | None], ...] = (("AGTAIL_SESSION", None), ("CLAUDE_CODE_SESSION_ID", "claude-code"))


class NotYours(UsageError):
    """The session named is not the caller's own (a tool error with this message)."""


def _env_ref(env: Mapping[str, str]) -> tuple[dict[str, str], str] | None:
    for name, agent in ENV_SESSION:
        value = (env.get(name) or "").strip()
        if not value:
            continue
        if agent is None:
            a, sep, ident = value.partition(":")
            if not sep or not a or not ident:
                raise NotYours(f"{name}={value[:80]!r} is not AGENT:ID")
            return {"agent": a, "id": ident}, name
        return {"agent": agent, "id": value}, name
    return None


def _ref_arg(value: str) -> dict[str, str]:
    agent, sep, ident = value.strip().partition(":")
    if not sep or not agent or not ident:
        raise NotYours(f"argument 'session' must be AGENT:ID as the other tools print it, got {value[:80]!r}")
    return {"agent": agent, "id": ident}


def _activity(session: dict[str, Any]) -> float:
    from datetime import datetime

    best = float(session.get("mtime") or 0.0)
    for key in ("ended", "started"):
        text = session.get(key)
        if text:
            try:
                best = max(best, datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp())
            except ValueError:
                pass
    return best


def _inside(cwd: str | None, here: str) -> bool:
    if not cwd:
        return False
    base = here.rstrip("/") or "/"
    return cwd == base or cwd.startswith(base.rstrip("/") + "/")


def own_session(call: Any, args: dict[str, Any], here: str | None, env: Mapping[str, str] | None = None,
                now: float | None = None) -> tuple[dict[str, Any], str]:  # fmt: skip
    """(the caller's session document, how it was found), or NotYours."""
    if env is None:
        env = os.environ if here is not None else {}  # over HTTP the daemon's environment is not the agent's
    named = _env_ref(env)
    if args.get("session"):
        session = call("sessions.get", _ref_arg(args["session"]))["session"]
        if named is not None:
            mine = _fresh_get(call, named[0])
            if (mine["agent"], mine["id"]) != (session["agent"], session["id"]):
                raise NotYours(
                    f"{render.ref(session)} is not this agent's session: {named[1]} names {render.ref(mine)}; "
                    "an agent changes only its own session"
                )
            return session, f"the argument, matching {named[1]}"
        live = _activity(session) >= (now if now is not None else time.time()) - LIVE_SECONDS
        if here is not None and not _inside(session.get("cwd"), here):
            raise NotYours(
                f"{render.ref(session)} ran in {render.clean(session.get('cwd') or '(no directory)')}, not in this"
                f" server's directory {render.clean(here)}: an agent changes only its own session"
            )
        if not live:
            raise NotYours(
                f"{render.ref(session)} has not been active in the last {LIVE_SECONDS // 60} minutes: it is not"
                " a running session, and an agent changes only its own"
            )
        return session, "the argument"
    if named is not None:
        return _fresh_get(call, named[0]), f"the environment ({named[1]})"
    if here is None:
        raise NotYours("say which session is yours: argument 'session' (AGENT:ID); this server has no directory")
    doc = call("sessions.list", {"cwd": here, "limit": 20, "hidden": "include"})
    found = doc.get("sessions") or []
    exact = [s for s in found if s.get("cwd") == here]
    if not (exact or found):
        raise NotYours(f"no session in {render.clean(here)} yet: name yours with argument 'session' (AGENT:ID)")
    return (exact or found)[0], f"the newest session in {render.clean(here)}"


def _fresh_get(call: Any, ref: dict[str, str]) -> dict[str, Any]:
    """The session the environment names. The agent's own session is often only a few
    moments old, written after the index last looked: when it is not found, the index is
    brought up to date once and asked again."""
    from agtaild.errors import NotFound

    try:
        return dict(call("sessions.get", ref)["session"])
    except NotFound:
        call("index.update", {})
        return dict(call("sessions.get", ref)["session"])


def _change(call: Any, args: dict[str, Any], here: str | None, change: dict[str, Any], what: str) -> str:
    session, how = own_session(call, args, here)
    doc = call("state.change", {"agent": session["agent"], "id": session["id"], "path": session["path"],
                                "who": "agent", **change})  # fmt: skip
    (done,) = doc["changes"]
    head = f"{render.ref(session)} (found by {how})"
    if not done["accepted"]:
        return f"{head}: {what} left as it is: the user set it, and an agent never overwrites the user's"
    state = doc["session"].get("state") or {}
    labels = ", ".join(k if not v else f"{k}={v}" for k, v in sorted((state.get("labels") or {}).items()))
    return f"{head}: {what} done. Title: {doc['session'].get('title') or '(none)'}; labels: {labels or '(none)'}"


def set_title(call: Any, args: dict[str, Any], here: str | None) -> str:
    return _change(call, args, here, {"title": args["title"]}, "title")


def add_label(call: Any, args: dict[str, Any], here: str | None) -> str:
    value = args.get("value") or ""
    return _change(call, args, here, {"label": f"{args['key']}={value}" if value else args["key"]}, f"label {args['key']}")


def remove_label(call: Any, args: dict[str, Any], here: str | None) -> str:
    return _change(call, args, here, {"unlabel": args["key"]}, f"removing label {args['key']}")
