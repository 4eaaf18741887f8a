"""Which session an id names: ``AGENT:ID``, an id prefix, or an id (prefix) without its agent.

The local index and the team database look the candidates up their own way and hand the
rows here, so both decide alike: an exact id wins over ids it is a prefix of; several
sessions that fit are a usage error listing them (as ``AGENT:ID`` when no agent was given);
none is NotFound. Copies of one session (native, archived, imported, other machines) are one
session here: the caller picks the copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from agtaild.errors import NotFound, UsageError

#: Candidates listed in an ambiguity error's message (``data.candidates`` holds up to 50).
SHOWN = 10


def chosen(found: Sequence[tuple[str, str]], ident: str, agent: str | None, where: str = "") -> tuple[str, str]:
    """The one (agent, id) among ``found`` (the (agent, id) of every row whose id starts with
    ``ident``) that ``ident`` names. ``where`` ends the not-found sentence (" in collection 'x'")."""
    distinct = sorted(set(found))
    exact = [pair for pair in distinct if pair[1] == ident]
    fits = exact or distinct
    if len(fits) == 1:
        return fits[0]
    if not fits:
        owner = f"{agent} " if agent else ""
        raise NotFound(f"no {owner}session {ident!r}{where}")
    names = [sid for _, sid in fits] if agent else [f"{a}:{sid}" for a, sid in fits]
    shown = ", ".join(names[:SHOWN]) + (" …" if len(names) > SHOWN else "")
    whose = f" for {agent}" if agent else " (sessions of several agents start so; name one as AGENT:ID)"
    raise UsageError(f"id prefix {ident!r} is ambiguous{whose}: {shown}", data={"candidates": names[:50]})
