"""A session as the command line names it: ``AGENT:ID``, ``AGENT:PREFIX``, or an id (prefix)
alone — the service finds the one session of any agent it names, or says which ones it could
be (agtaild.index.refs). Kept apart from the commands so each takes ids the same way."""

from __future__ import annotations

from agtaild.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def ref_params(ref: str) -> dict[str, Any]:
    """The ``agent``/``id`` params of a service call for ``ref`` (no agent when none is given)."""
    text = ref.strip()
    agent, sep, ident = text.partition(":")
    if not sep:
        agent, ident = "", text
    if not ident or (sep and not agent):
        raise UsageError(f"expected AGENT:ID or a session id (e.g. claude-code:2c4d36d7, or 2c4d36d7), got {ref!r}")
    return {"agent": agent, "id": ident} if agent else {"id": ident}
