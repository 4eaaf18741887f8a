"""Who may read transcripts: the token, the Host/Origin checks and the login link.

Transcripts hold secrets (API keys pasted into prompts, file contents, tokens in tool output),
and a loopback TCP port is reachable by every local user and, through DNS rebinding, by any web
page the user visits. So over TCP:

* the ``Host`` header must name a loopback address (or a name given with ``--allow-host``),
  which defeats DNS rebinding: the attacker's page can point its name at 127.0.0.1 but the
  browser still sends the attacker's name as Host;
* an ``Origin`` header, when present, must be one of those hosts too (cross-site requests);
* every endpoint but ``GET /api/v1/health``, ``GET /login`` and the viewer's static shell
  (``/`` and ``/web/*``: the same bytes for everyone, no transcript data) needs the token, as
  ``Authorization: Bearer <token>`` or the HttpOnly SameSite=Strict cookie that the one-time
  login link sets (as Jupyter does).

The unix socket is protected by file permissions (0600 in a 0700 directory) and needs no token.
See docs/THREAT_MODEL.md for the whole story.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import socket
import stat
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Middleware

from agtaild.api.caller import CALLER, OPERATOR
from agtaild.api.guard import authenticated
from agtaild.api.reveal import REVEALER, revealer_of
from agtaild.errors import Forbidden, Unauthorized, UsageError

log = logging.getLogger("agtaild.security")

COOKIE_NAME = "agtail_session"
LOGIN_CODE_TTL = 600.0
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost", "localhost.localdomain"})
#: Paths that answer without a token over TCP (Host/Origin are still checked).
PUBLIC_PATHS = frozenset({"/api/v1/health", "/login"})
#: The viewer's shell answers without a token too: exactly the URLs agtaild/api/viewer.py
#: serves (``/`` and each file under ``/web/``), which create_app records on the application.
#: It is public so that a visitor without the cookie sees its sign-in screen (which says how
#: to get a login link) rather than a bare JSON 401; every byte of data it shows comes from
#: /api/v1, which stays behind the token.
SHELL_PATHS = web.AppKey("agtail_shell_paths", frozenset)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` as a 0700 directory, or tighten it: it holds the index of secrets."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("tightening permissions of %s from %o to 700", path, mode)
        os.chmod(path, 0o700)


def load_or_create_token(data_dir: Path) -> str:
    """The daemon's token: created once (mode 0600) and reused, so clients keep working
    across restarts. An existing file with loose permissions is tightened."""
    path = data_dir / "token"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            log.warning("tightening permissions of %s from %o to 600", path, mode)
            os.chmod(path, 0o600)
        token = path.read_text(encoding="utf-8").strip()
        if len(token) >= 32:
            return token
        log.warning("%s holds no usable token; writing a new one", path)
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC, 0o600)
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token


def read_token(data_dir: Path) -> str | None:
    """The token as a client reads it (None when there is none yet)."""
    try:
        return (data_dir / "token").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def host_of(header: str) -> str:
    """``Host``/``Origin`` authority → lower-case host name without port or brackets."""
    value = header.strip().lower()
    if "://" in value:
        value = value.split("://", 1)[1]
    value = value.split("/", 1)[0]
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value


class Security:
    """The token, allowed hosts and one-time login codes of one daemon."""

    def __init__(
        self, token: str, *, allow_hosts: Iterable[str] = (), readers: Callable[[str], str | None] | None = None
    ) -> None:
        self.token = token
        #: A team server's reader tokens: token → the caller value its queries carry, or None
        #: for a token that is not (or no longer) a reader's. Blocking: run on a thread.
        self.readers = readers
        self.allowed_hosts = set(LOOPBACK_HOSTS) | {host_of(h) for h in allow_hosts if h}
        self.cookie_value = hmac.new(token.encode(), b"agtail-cookie-v1", hashlib.sha256).hexdigest()
        self._codes: dict[str, float] = {}

    # -- one-time login codes ------------------------------------------------------------
    def new_login_code(self, ttl: float = LOGIN_CODE_TTL) -> str:
        """A code that logs a browser in once (printed by `agtail open`, logged at start)."""
        now = time.monotonic()
        self._codes = {c: t for c, t in self._codes.items() if t > now}
        code = secrets.token_urlsafe(24)
        self._codes[code] = now + ttl
        return code

    def take_login_code(self, code: str) -> bool:
        expires = self._codes.pop(code, None)
        return expires is not None and expires > time.monotonic()

    # -- checks --------------------------------------------------------------------------
    def check_host(self, request: web.Request) -> None:
        host = request.headers.get("Host")
        if host is None or host_of(host) not in self.allowed_hosts:
            raise Forbidden(
                f"Host {host!r} is not a loopback name; agtaild refuses it (DNS rebinding "
                "protection). Use http://127.0.0.1 or http://localhost, or start agtaild with --allow-host."
            )
        origin = request.headers.get("Origin")
        if origin is not None and host_of(origin) not in self.allowed_hosts:
            raise Forbidden(f"Origin {origin!r} is not allowed: cross-site requests are refused")

    def authenticated(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value and hmac.compare_digest(value.strip().encode(), self.token.encode()):
            return True
        cookie = request.cookies.get(COOKIE_NAME)
        return cookie is not None and hmac.compare_digest(cookie.encode(), self.cookie_value.encode())

    def reader_cookie(self, caller: str) -> str:
        """The viewer's cookie for a team server's reader: their caller value, signed."""
        mac = hmac.new(self.token.encode(), b"agtail-reader-v1:" + caller.encode(), hashlib.sha256).hexdigest()
        return f"r.{caller}.{mac}"

    def cookie_reader(self, request: web.Request) -> str | None:
        """The reader a signed reader cookie names (None: no such cookie, or a forged one).
        A revoked reader's cookie still verifies; the database then shows it nothing."""
        cookie = request.cookies.get(COOKIE_NAME, "")
        if self.readers is None or not cookie.startswith("r."):
            return None
        caller = cookie[2:].rpartition(".")[0]
        return caller if caller and hmac.compare_digest(cookie.encode(), self.reader_cookie(caller).encode()) else None

    def login(self, request: web.Request, *, reader: str | None = None) -> web.Response:
        """GET /login?token=… or ?code=…: set the viewer's cookie and go to /. ``reader``: the
        token was a team server reader's (checked by the caller), whose cookie names them."""
        token = request.query.get("token")
        code = request.query.get("code")
        if token is None and code is None:
            raise UsageError("GET /login needs ?token=… or a one-time ?code=…")
        ok = reader is not None or (token is not None and hmac.compare_digest(token.encode(), self.token.encode())) or (
            code is not None and self.take_login_code(code)
        )
        if not ok:
            raise Unauthorized("this login link is wrong or was already used; ask `agtail open` for a new one")
        resp = web.Response(status=303, headers={"Location": "/"})
        value = self.reader_cookie(reader) if reader is not None else self.cookie_value
        resp.set_cookie(COOKIE_NAME, value, httponly=True, samesite="Strict", path="/")
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["Referrer-Policy"] = "no-referrer"
        return resp


def is_unix(request: web.Request) -> bool:
    """True when the request came over the unix socket (protected by file permissions)."""
    sock = request.transport.get_extra_info("socket") if request.transport else None
    return sock is not None and sock.family == socket.AF_UNIX


def is_trusted(request: web.Request, security: Security) -> bool:
    """Unix socket, or a token-bearing TCP request: may see everything."""
    return is_unix(request) or security.authenticated(request)


async def _reader(security: Security, request: web.Request) -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip() or security.readers is None:
        return None
    import asyncio

    return await asyncio.to_thread(security.readers, value.strip())


def security_middleware(security: Security) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        CALLER.set(OPERATOR)
        REVEALER.set(revealer_of(request.transport.get_extra_info("socket") if request.transport else None))
        if not is_unix(request):
            security.check_host(request)
            public = request.path in PUBLIC_PATHS or request.path in request.app.get(SHELL_PATHS, ())
            reader = None
            if security.authenticated(request):
                authenticated(request)  # its connection leaves the budget of strangers (guard.py)
            elif (reader := security.cookie_reader(request)) is not None or (
                security.readers is not None and (reader := await _reader(security, request)) is not None
            ):
                CALLER.set(reader)
                authenticated(request)
            elif not public:
                raise Unauthorized(
                    "this endpoint needs the token: send 'Authorization: Bearer <token>' (the token is in "
                    "<data dir>/token) or open the login link that `agtail open` prints"
                )
            else:
                CALLER.set("")  # a stranger on a public path: nothing
        return await handler(request)

    return middleware
