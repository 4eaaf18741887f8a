"""Who may hold a TCP connection to the daemon: two budgets, and whom to close when one is full.

Every local user can reach the loopback port, and on loopback they all come from 127.0.0.1,
so a cap per address is a cap on everyone together: one user holding it locks the others out
(0.2 had 64, and 1,000 idle connections reset every later request, the viewer's included).
A connection is therefore judged by what it has shown, not by where it comes from:

* **Not yet authenticated** (every TCP connection starts so): at most
  ``max_unauthenticated`` at a time, and each must authenticate within a short *total*
  deadline of its start (agtaild/api/guard.py), however slowly it trickles. When the budget
  is full, a newcomer is never refused: the connection that has shown the least is closed to
  make room — first the oldest that never sent a byte, then the oldest that sent some but no
  request the daemon could answer. A real client sends its whole request at once, so it is
  the newest with bytes and the last to go: to push it out before its request is read an
  attacker must open the whole budget's worth of new connections in those few milliseconds.
* **Authenticated** (a request on it carried the token or the viewer's cookie): a budget of
  its own, ``max_authenticated`` (the viewer's streams, ``agtail tail -f``, MCP clients). No
  one without the token can take a place in it. When it is full the oldest idle authenticated
  connection is closed for the newcomer; when none is idle the request is answered 503.

The unix socket (only the user reaches it) is in neither budget. Both budgets together stay
below the daemon's open-file limit (:func:`fit_to_open_files`), so accept() never fails with
EMFILE (which would pause accepting for everybody).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Protocol

log = logging.getLogger("agtaild.http")

#: Open files kept for everything but client connections (the index, its readers, the
#: watchers, the archive, the unix socket's clients).
RESERVED_FILES = 256


class Admitted(Protocol):
    """What the budgets need of a connection (agtaild.api.guard.GuardedHandler)."""

    in_request: bool

    def evict(self, why: str) -> None: ...


class Admission:
    """The two budgets of one server. ``idle`` and ``started`` hold the connections that have
    not authenticated, oldest first (a dict keeps insertion order); ``trusted`` those that have."""

    def __init__(self, max_unauthenticated: int, max_authenticated: int) -> None:
        self.max_unauthenticated = max(1, max_unauthenticated)
        self.max_authenticated = max(1, max_authenticated)
        self.idle: dict[Admitted, None] = {}
        self.started: dict[Admitted, None] = {}
        self.trusted: dict[Admitted, None] = {}
        #: Connections closed to make room, per budget (shown by the tests and the log).
        self.evicted = {"unauthenticated": 0, "authenticated": 0}

    @property
    def unauthenticated(self) -> int:
        return len(self.idle) + len(self.started)

    def admit(self, conn: Admitted, *, has_bytes: bool) -> None:
        """A new TCP connection: into the budget of those not yet authenticated, making room."""
        while self.unauthenticated >= self.max_unauthenticated:
            victim = self._least_shown()
            self.forget(victim)
            self.evicted["unauthenticated"] += 1
            victim.evict(f"{self.max_unauthenticated} connections that have not authenticated are open (the limit)")
        (self.started if has_bytes else self.idle)[conn] = None

    def sent_bytes(self, conn: Admitted) -> None:
        """The connection's first bytes arrived: it is no longer among the first to go."""
        if conn in self.idle:
            del self.idle[conn]
            self.started[conn] = None

    def promote(self, conn: Admitted) -> bool:
        """The connection authenticated: move it to the other budget. False when that is full
        and every connection in it is busy (the caller answers 503)."""
        if conn in self.trusted:
            return True
        if len(self.trusted) >= self.max_authenticated:
            idle = next((c for c in self.trusted if not c.in_request), None)
            if idle is None:
                return False
            self.forget(idle)
            self.evicted["authenticated"] += 1
            idle.evict(f"{self.max_authenticated} authenticated connections are open (the limit)")
        self.idle.pop(conn, None)
        self.started.pop(conn, None)
        self.trusted[conn] = None
        return True

    def is_trusted(self, conn: Admitted) -> bool:
        return conn in self.trusted

    def forget(self, conn: Admitted) -> None:
        self.idle.pop(conn, None)
        self.started.pop(conn, None)
        self.trusted.pop(conn, None)

    def _least_shown(self) -> Admitted:
        """The oldest connection that never sent a byte; else the oldest that did, passing
        over (a few) that are being answered right now."""
        for conn in self.idle:
            return conn
        for n, conn in enumerate(self.started):
            if not conn.in_request or n >= 8:
                return conn
        return next(iter(self.started))


def bytes_waiting(transport: Any) -> bool:
    """Has the client already sent bytes the event loop has not read yet? (FIONREAD on the
    socket: nothing is consumed.) False when that cannot be asked."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return False
    try:
        import fcntl
        import struct
        import termios

        raw = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
        return bool(struct.unpack("i", raw)[0])
    except (ImportError, OSError, ValueError, AttributeError):
        return False


def raise_open_file_limit(wanted: int) -> int:
    """Raise this process's soft limit on open files towards ``wanted`` (never past the hard
    limit, never lower); the soft limit now. Unknown (no ``resource``): ``wanted``."""
    try:
        import resource
    except ImportError:
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return int(soft)


def fit_to_open_files(limits: Any) -> Any:
    """``limits`` (a GuardLimits) with budgets that fit the open-file limit, raised first as far
    as the hard limit allows; smaller budgets are logged once."""
    wanted = limits.max_unauthenticated + limits.max_authenticated + RESERVED_FILES
    soft = raise_open_file_limit(wanted)
    if soft >= wanted:
        return limits
    room = max(2, soft - RESERVED_FILES)
    authenticated = max(1, min(limits.max_authenticated, room // 3))
    unauthenticated = max(1, min(limits.max_unauthenticated, room - authenticated))
    log.warning(
        "only %d open files are allowed (ulimit -n): at most %d unauthenticated and %d authenticated TCP "
        "connections instead of %d and %d", soft, unauthenticated, authenticated,
        limits.max_unauthenticated, limits.max_authenticated,
    )  # fmt: skip
    return replace(limits, max_unauthenticated=unauthenticated, max_authenticated=authenticated)
