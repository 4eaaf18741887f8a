"""Who the current request is, for a service that answers each caller differently.

A local daemon answers everyone who passes the token the same. The team server
(agtaild.pg.service) hands this value to PostgreSQL with every query, and the database's
row-level security decides what the caller sees (agtaild.pg.readers): ``"operator"`` for the
daemon's own token, its login cookie and the unix socket; a reader token's SHA-256 for a
reader; ``""`` (nothing at all) when no request set it. A context variable, carried into the
reader threads by :class:`agtaild.api.context.ApiContext`.
"""

from __future__ import annotations

from contextvars import ContextVar

OPERATOR = "operator"

#: The caller of the request being served (see the module docstring).
CALLER: ContextVar[str] = ContextVar("agtail_caller", default="")
