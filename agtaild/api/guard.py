"""The daemon's defences against clients that abuse the connection itself.

aiohttp parses requests and calls handlers; what it leaves open, any local user could use to
hold the daemon (the TCP port is open to every user of the machine, the token comes later):

* **Connections that never authenticate.** A TCP connection counts as unauthenticated until
  one of its requests carries the token or the viewer's cookie, and must get there within
  ``unauthenticated_timeout`` of its start: a *total* deadline, which no trickle of bytes and
  no string of public requests (``/health``, the viewer's shell) extends. Such connections
  share a budget of their own, authenticated ones another, and a full budget closes the
  connection that has shown the least rather than refusing the newcomer
  (agtaild/api/admission.py). The unix socket, which only the user can reach, is in neither.
* **Slow or idle connections.** aiohttp has no deadline for a request's head and none for a
  body that stops arriving. Here a request line and headers must be complete within
  ``head_timeout`` of their first byte (or of the connection's start), a body the handler is
  waiting for may not stall for more than ``body_idle_timeout``, and an idle keep-alive
  connection is closed after ``keepalive_timeout``. Long-lived answers (SSE streams, a long
  search) to authenticated requests are not affected: only a client that owes bytes is timed.
* **Log floods.** A malformed request made aiohttp log an ERROR with a traceback; here it is
  one WARNING line, at most one per ``RateLimitedLog.every`` seconds (with a count of those
  left out), so nobody can fill the log.

``GuardedAppRunner`` is ``web.AppRunner`` with these; the daemon and the tests use it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

from agtaild.api.admission import Admission, bytes_waiting
from agtaild.errors import Busy

log = logging.getLogger("agtaild.http")

#: Handlers that read their body as a stream and check its size themselves (the sync import
#: endpoints: files up to --max-file-size); every other request body is at most 1 MiB.
_STREAMING: set[Any] = set()


def streaming_body(handler: Any) -> Any:
    """Mark a handler as one that checks its own body size (see :data:`_STREAMING`)."""
    _STREAMING.add(handler)
    return handler


def streams_its_body(handler: Any) -> bool:
    return handler in _STREAMING


@dataclass(frozen=True)
class GuardLimits:
    head_timeout: float = 10.0
    body_idle_timeout: float = 30.0
    keepalive_timeout: float = 15.0
    #: A TCP connection that has not authenticated is closed this long after it opened (at
    #: most: each draws its own between 60 and 100 % of it, so that a crowd opened at once
    #: does not come back all at once either).
    unauthenticated_timeout: float = 5.0
    #: TCP connections that have not authenticated (yet), at most; see admission.py.
    max_unauthenticated: int = 2048
    #: TCP connections that have, at most (the viewer's streams, `agtail tail -f`, MCP).
    max_authenticated: int = 256
    #: How long unread body bytes are read and dropped after an early answer (e.g. 413).
    lingering_time: float = 1.0


class RateLimitedLog:
    """One line per ``every`` seconds per kind of event; the rest are counted, not logged."""

    def __init__(self, logger: logging.Logger, every: float = 10.0) -> None:
        self.logger = logger
        self.every = every
        self._last: dict[str, float] = {}
        self._dropped: Counter[str] = Counter()

    def warning(self, kind: str, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._last.get(kind, -self.every) < self.every:
            self._dropped[kind] += 1
            return
        self._last[kind] = now
        dropped = self._dropped.pop(kind, 0)
        suffix = f" ({dropped} more like it not logged)" if dropped else ""
        self.logger.warning(message + suffix, *args)


ABUSE_LOG = RateLimitedLog(log)


def _peer_address(transport: asyncio.BaseTransport) -> str | None:
    """The client's IP address over TCP; None on a unix socket (only the user gets there)."""
    peer = transport.get_extra_info("peername")
    if isinstance(peer, (tuple, list)) and peer and isinstance(peer[0], str):
        return peer[0]
    return None


class GuardedHandler(RequestHandler):
    """aiohttp's per-connection protocol with the deadlines and the budgets."""

    def __init__(self, manager: GuardedServer, *, limits: GuardLimits, **kwargs: Any) -> None:
        kwargs.setdefault("keepalive_timeout", limits.keepalive_timeout)
        kwargs.setdefault("lingering_time", limits.lingering_time)
        super().__init__(manager, **kwargs)
        self.guard_limits = limits
        self.guard_server = manager
        self.peer_address: str | None = None
        self.admitted = False
        self.head_started: float | None = None
        self.last_received = 0.0
        self.current_payload: Any = None
        self.in_request = False
        self.watchdog: asyncio.TimerHandle | None = None
        #: Closes a TCP connection that has not authenticated in time (cancelled when it has).
        self.deadline: asyncio.TimerHandle | None = None
        #: Done when the connection is gone: a long answer (an SSE stream) waits on it beside
        #: its own wake-ups and ends at once, instead of at its next write (agtaild/api/sse.py).
        self.gone: asyncio.Future[None] = self._loop.create_future()
        # Both are aiohttp's own hooks (set from the Server in every 3.x): wrapped to see
        # each request's body and when its handler runs, without aiohttp's private state.
        factory, handler = self._request_factory, self._request_handler
        assert factory is not None and handler is not None

        def remember_payload(message: Any, payload: Any, *args: Any) -> Any:
            self.current_payload = payload
            return factory(message, payload, *args)

        async def tracked(request: web.BaseRequest) -> web.StreamResponse:
            self.in_request = True
            try:
                return await handler(request)
            finally:
                self.in_request = False

        self._request_factory = remember_payload
        self._request_handler = tracked

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        now = self._loop.time()
        self.head_started = self.last_received = now
        self.peer_address = _peer_address(transport)
        if self.peer_address is not None:
            self.guard_server.admission.admit(self, has_bytes=bytes_waiting(transport))
            self.admitted = True
            timeout = self.guard_limits.unauthenticated_timeout * random.uniform(0.6, 1.0)
            self.deadline = self._loop.call_later(timeout, self._not_authenticated)
        self._arm()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._forget()
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        if not self.gone.done():
            self.gone.set_result(None)
        super().connection_lost(exc)

    def _forget(self) -> None:
        if self.admitted:
            self.admitted = False
            self.guard_server.admission.forget(self)
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def data_received(self, data: bytes) -> None:
        now = self._loop.time()
        self.last_received = now
        if self.admitted and self.deadline is not None:
            self.guard_server.admission.sent_bytes(self)
        if self.head_started is None and not self.in_request and not self._messages:
            self.head_started = now
        super().data_received(data)
        if self._messages:
            self.head_started = None  # a whole head arrived

    # -- the budgets (agtaild/api/admission.py) --------------------------------------------
    def authenticated(self) -> bool:
        """This request carried the token: the connection leaves the unauthenticated budget
        and its deadline. False when the authenticated budget has no room (503)."""
        if self.peer_address is None or not self.admitted:
            return True  # the unix socket, or a connection already being closed
        if not self.guard_server.admission.promote(self):
            return False
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        return True

    def evict(self, why: str) -> None:
        """Closed to make room in a full budget (the budget has already let it go)."""
        self.admitted = False
        ABUSE_LOG.warning("evicted", "closed a connection from %s: %s", self.peer_address, why)
        self._close_now()

    def _not_authenticated(self) -> None:
        self.deadline = None
        ABUSE_LOG.warning("unauthenticated", "closed a connection from %s: not authenticated within %g s of opening",
                          self.peer_address, self.guard_limits.unauthenticated_timeout)  # fmt: skip
        self._close_now()

    def _close_now(self) -> None:
        """force_close(), and nothing left to send or linger over: the peer owes us nothing."""
        transport = self.transport
        self.force_close()
        if transport is not None:
            transport.abort()

    def _arm(self) -> None:
        tick = min(self.guard_limits.head_timeout, self.guard_limits.body_idle_timeout) / 4
        self.watchdog = self._loop.call_later(max(tick, 0.05), self._check)

    def _check(self) -> None:
        self.watchdog = None
        if self._force_close or self.transport is None:
            return
        now = self._loop.time()
        limits = self.guard_limits
        if self.in_request:
            self.head_started = None
            payload = self.current_payload
            waiting = payload is not None and not payload.is_eof() and getattr(payload, "_waiter", None) is not None
            if waiting and now - self.last_received > limits.body_idle_timeout:
                ABUSE_LOG.warning("slow-body", "closed a connection from %s: its request body stalled for %g s",
                                  self.peer_address or "the unix socket", limits.body_idle_timeout)  # fmt: skip
                self.force_close()
                return
        elif self.head_started is not None and now - self.head_started > limits.head_timeout:
            ABUSE_LOG.warning("slow-head", "closed a connection from %s: no complete request within %g s",
                              self.peer_address or "the unix socket", limits.head_timeout)  # fmt: skip
            self.force_close()
            return
        self._arm()

    def log_exception(self, *args: Any, **kwargs: Any) -> None:
        """A malformed request or a client gone mid-request is the client's doing: one
        rate-limited line, no traceback. Anything else is ours and is logged in full."""
        exc = kwargs.get("exc_info")
        if isinstance(exc, (HttpProcessingError, ConnectionError)):
            ABUSE_LOG.warning("bad-request", "bad request from %s: %s",
                              self.peer_address or "the unix socket", str(exc).splitlines()[0][:200] or type(exc).__name__)  # fmt: skip
            return
        super().log_exception(*args, **kwargs)


class GuardedServer(web.Server):
    """aiohttp's connection factory, making :class:`GuardedHandler` protocols."""

    guard_limits: GuardLimits
    admission: Admission

    def __call__(self) -> RequestHandler:
        return GuardedHandler(self, loop=self._loop, limits=self.guard_limits, **self._kwargs)


class GuardedAppRunner(web.AppRunner):
    """``web.AppRunner`` whose connections are guarded (``limits``)."""

    def __init__(self, app: web.Application, *, limits: GuardLimits | None = None, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.guard_limits = limits or GuardLimits()

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # aiohttp builds its Server itself; this turns it into ours (same state, one method more).
        server.__class__ = GuardedServer
        assert isinstance(server, GuardedServer)
        server.guard_limits = self.guard_limits
        server.admission = Admission(self.guard_limits.max_unauthenticated, self.guard_limits.max_authenticated)
        return server


def authenticated(request: web.BaseRequest) -> None:
    """Called for a TCP request that carried the token: its connection counts as
    authenticated from now on (agtaild/api/admission.py). Busy (503) when that budget is full."""
    protocol = request.protocol
    if isinstance(protocol, GuardedHandler) and not protocol.authenticated():
        raise Busy(
            f"{protocol.guard_limits.max_authenticated} authenticated connections are open, every one of "
            "them busy; close some (browser tabs, `agtail tail -f`) or try again"
        )

