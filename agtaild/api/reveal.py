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

import json
import logging
import os
import socket
import struct
import time
from contextvars import ContextVar
from typing import Any

from agtaild.errors import Forbidden

log = logging.getLogger("agtaild.reveal")

LOG_NAME = "reveal.log"

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


def record(data_dir: str | None, who: str, method: str, params: dict[str, Any]) -> None:
    """Log one reveal (daemon log and ``<data dir>/reveal.log``); never any text revealed."""
    session = ":".join(str(params[k]) for k in ("agent", "id") if params.get(k) is not None) or None
    entry: dict[str, Any] = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "who": who,
        "method": method,
        "session": session,
    }
    for key in ("collection", "path", "after_seq", "before_seq"):
        if params.get(key) is not None:
            entry[key] = params[key]
    log.warning("reveal: %s asked %s of %s unmasked", who, method, session or "?")
    if not data_dir:
        return
    path = os.path.join(data_dir, LOG_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(entry, ensure_ascii=False) + "\n").encode())
        finally:
            os.close(fd)
    except OSError as exc:
        log.error("reveal: could not write %s: %s", path, exc)


def entries(data_dir: str) -> list[dict[str, Any]]:
    """The reveal log, oldest first (lines that do not parse are skipped)."""
    out = []
    try:
        with open(os.path.join(data_dir, LOG_NAME), encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    except FileNotFoundError:
        return []
    return out
