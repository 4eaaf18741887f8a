"""``reveal=true``: transcript text unmasked, for the user who runs the daemon, and logged.

Every exit masks secrets (agtaild.query.masking). ``sessions.get`` and ``events.list`` take
``reveal=true`` (`agtail show --reveal`), and the daemon honours it only when the request came
over its unix socket from a process of the user the daemon runs as (the peer's uid, asked of
the kernel with SO_PEERCRED, equals the daemon's). Over TCP it is refused with 403 whatever
the token or cookie: a browser, a reader token, anything on the network never gets a secret.
The team server holds only masked text and cannot reveal at all.

Each reveal is logged: on the daemon's log (logger ``agtaild.reveal``) and as one JSON line in
``<data dir>/reveal.log`` (mode 0600): when, who (uid, pid, and how it came), which method and
session. Never the secret, nor any text of the answer.
"""

from __future__ import annotations

import os
import socket
import struct
from contextvars import ContextVar
from typing import Any

from agtaild.errors import Forbidden
from agtaild.query.reveal_log import LOG_NAME, entries, record

__all__ = ["LOG_NAME", "REFUSED", "REVEALER", "entries", "peer_credentials", "record", "revealer_of", "take"]

#: Who the current request's peer is, when it may reveal (the unix socket's owner); None otherwise.
REVEALER: ContextVar[str | None] = ContextVar("agtail_revealer", default=None)

REFUSED = (
    "reveal=true is honoured only over the daemon's unix socket, for the user who runs the daemon "
    "(`agtail show --reveal` on that machine); over TCP every text is masked, whatever the token"
)


def peer_credentials(sock: socket.socket | None) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a unix socket; None when not known."""
    if sock is None or sock.family != socket.AF_UNIX or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


def revealer_of(sock: socket.socket | None) -> str | None:
    """Who the peer is, when it is the daemon's own user over the unix socket; else None."""
    creds = peer_credentials(sock)
    if creds is None or creds[1] != os.getuid():
        return None
    return f"uid {creds[1]} pid {creds[0]} (unix socket)"


def take(params: dict[str, Any]) -> str | None:
    """Remove ``reveal`` from ``params``: None when not asked; who asks when allowed; a
    :class:`Forbidden` (403) when asked by anyone else."""
    if not params.pop("reveal", False):
        return None
    who = REVEALER.get()
    if who is None:
        raise Forbidden(REFUSED)
    return who
