"""A session to share: its summary, its events in order, and its subagents, page by page.

Events are read a page at a time (``events.list`` with a cursor), so a 50 MB session is never
held whole: a writer consumes them as they come. Subagents are the sessions whose ``parent``
names this one (found as the viewer finds them: sessions in the same cwd since it started).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any, cast

Call = Callable[[str, dict[str, Any]], dict[str, Any]]

#: Events per page read from the query layer (one query of the index each; a page of the
#: 50 MB bench session is about 1.4 MB).
PAGE = 500
#: Subagent sessions looked at per session (the viewer's limit).
CHILDREN_LOOKED_AT = 500


class SharedSession:
    """One session as the writers see it: ``session`` (the Session JSON), ``events()`` (an
    iterator over its events in order, every branch or the active one), ``children`` (tool use
    id → subagent Session JSON) and ``child(...)`` to open one of them."""

    def __init__(self, call: Call, session: dict[str, Any], *, branches: bool = False) -> None:
        self.call = call
        self.session = session
        self.branches = branches
        self._children: dict[str, dict[str, Any]] | None = None

    @property
    def ref(self) -> dict[str, Any]:
        s = self.session
        ref: dict[str, Any] = {"agent": s["agent"], "id": s["id"]}
        if s.get("collection"):
            ref["collection"] = s["collection"]
        return ref

    def events(self) -> Iterator[dict[str, Any]]:
        for page in self.pages():
            yield from page

    def pages(self) -> Iterator[list[dict[str, Any]]]:
        """The events a page at a time (the active branch unless ``branches``)."""
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {**self.ref, "limit": PAGE}
            if cursor:
                params["cursor"] = cursor
            page = self.call("events.list", params)
            events = page.get("events") or []
            if not self.branches:
                events = [ev for ev in events if (ev.get("extra") or {}).get("branch") != "inactive"]
            if events:
                yield events
            cursor = page.get("next")
            if not cursor:
                return

    @property
    def children(self) -> dict[str, dict[str, Any]]:
        """Subagent sessions by the tool use that spawned them ("" when it is not recorded)."""
        if self._children is None:
            s = self.session
            found: dict[str, dict[str, Any]] = {}
            if s.get("cwd"):
                params: dict[str, Any] = {"cwd": s["cwd"], "limit": CHILDREN_LOOKED_AT}
                if s.get("started"):
                    params["since"] = s["started"]
                for c in self.call("sessions.list", params).get("sessions") or []:
                    parent = c.get("parent") or {}
                    if parent.get("id") == s["id"] and (parent.get("agent") or c["agent"]) == s["agent"]:
                        found.setdefault(parent.get("tool_use_id") or "", c)
            self._children = found
        return self._children

    def child(self, session: dict[str, Any]) -> SharedSession:
        return SharedSession(self.call, session, branches=self.branches)


def reading(service: Any) -> Call:
    """The call the writers read through when the service runs in this process (the CLI without
    a daemon, the daemon's own export endpoint): events come unmasked, everything else as the
    service answers. Masking a page of events walks all of it through the scanner, five times
    the cost of writing it (bench/RESULTS.md); every writer masks what it writes itself
    (agtaild.share.redact), so a secret is masked once, on the way out, and never twice.
    Where the service takes no ``reveal`` (the team server), its answers as they are."""
    call = service.call
    try:
        takes_reveal = "reveal" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        takes_reveal = False
    if not takes_reveal:
        return cast(Call, call)

    return _Reader(service)


class _Reader:
    """:func:`reading`'s call, with the index's word on which events are clean
    (``known_clean(scanner, digests)``: the digests its secrets pass scanned clean, under those
    rules), which spares a writer masking an event whole the scan the index already made."""

    def __init__(self, service: Any) -> None:
        self._call = service.call
        self.known_clean: Callable[[Any, list[bytes]], set[bytes]] | None = getattr(
            service, "_known_clean", None
        )

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], self._call(method, params, reveal=method == "events.list"))


def open_session(
    call: Call, agent: str, ident: str, *, branches: bool = False, collection: str | None = None
) -> SharedSession:
    params: dict[str, Any] = (
        {"agent": agent, "id": ident} if agent else {"id": ident}
    )  # an id alone: unique across agents
    if collection:
        params["collection"] = collection
    return SharedSession(call, call("sessions.get", params)["session"], branches=branches)
