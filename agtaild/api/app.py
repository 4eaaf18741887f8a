"""The aiohttp application: routes, the error shape, security, limits.

``create_app`` is shared by the daemon and by the tests (which hand it a small fake service).
Background work (watcher, writer) is not created here: the daemon adds it to
``app.cleanup_ctx`` so it starts with the app and is cancelled and awaited on shutdown.

Other modules add routes through ``extensions.ROUTE_MODULES``: each listed module exposes
``register_routes(app: web.Application) -> None`` (and may expose ``openapi_paths() -> dict``
so its routes are documented too). Their routes sit behind the same middlewares: the error
shape, the Host/Origin checks and the token over TCP.
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

from agtaild import __version__
from agtaild.api import extensions, rest, rpc, sse
from agtaild.api.context import (
    CTX,
    ApiContext,
    ServiceLike,
    encode,
    error_response,
    error_shape,
    json_response,
)
from agtaild.api.guard import streams_its_body
from agtaild.api.hub import ChangeHub
from agtaild.api.security import SHELL_PATHS, Security, security_middleware
from agtaild.api.viewer import setup_web_routes
from agtaild.errors import AgtailError

log = logging.getLogger("agtaild.api")

#: Largest request body accepted (JSON-RPC batches, imports send their own limits).
MAX_BODY = 1 << 20
#: Request line and header limits for the HTTP parser (aiohttp's default line is 8190 bytes,
#: less than a URL the API documents as valid). Anything longer is refused by the parser itself
#: with a plain-text 400, before any handler runs.
MAX_REQUEST_LINE = 256 * 1024
MAX_HEADER_FIELD = 16 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure leaves in the one error shape; bad input never becomes a 500."""
    limit = None if streams_its_body(request.match_info.handler) else MAX_BODY
    if limit is not None and (request.content_length or 0) > limit:
        # Refused from the header, before a byte of the body is read (aiohttp's own check
        # would wait for the first MiB to arrive).
        return error_shape(413, "too_large", f"the request body is over the limit of {MAX_BODY} bytes")
    try:
        return await handler(request)
    except ConnectionError:
        raise  # the client went away mid-request: aiohttp notes it (one line, agtaild/api/guard.py)
    except web.RequestPayloadError as exc:
        return error_shape(400, "bad_request", f"the request body could not be read: {exc}")
    except AgtailError as err:
        return error_response(err)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "error")
        message = exc.reason if exc.status != 404 else f"no such endpoint: {request.method} {request.path}"
        if exc.status == 405:
            message = f"{request.method} is not allowed on {request.path}"
        if exc.status == 413:
            message = f"the request body is over the limit of {MAX_BODY} bytes"
        return error_shape(exc.status, code, message)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return error_shape(500, "internal", "internal error (the daemon's log has the details)")


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Cache-Control", "no-store")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")


async def login(request: web.Request) -> web.Response:
    security = request.app[CTX].security
    token = request.query.get("token")
    reader = None
    if token and security.readers is not None and not hmac.compare_digest(token.encode(), security.token.encode()):
        reader = await asyncio.to_thread(security.readers, token)  # a team server's reader
    return security.login(request, reader=reader)


async def openapi_doc(request: web.Request) -> web.Response:
    """The document is built from the code on first use and kept."""
    from agtaild.api.openapi import build_openapi

    cache = request.app[_CACHE]
    if "openapi" not in cache:
        cache["openapi"] = encode(build_openapi())
    return json_response(cache["openapi"])


_CACHE = web.AppKey("agtail_cache", dict)


def create_app(
    service: ServiceLike,
    *,
    methods: Any,
    security: Security,
    hub: ChangeHub | None = None,
    executor: ThreadPoolExecutor | None = None,
    readers: int = 8,
    update: Callable[[bool], Awaitable[dict[str, Any]]] | None = None,
    health: Callable[[], dict[str, Any]] | None = None,
) -> web.Application:
    """The API application over ``service`` (whose method names are ``methods``)."""
    app = web.Application(
        middlewares=[error_middleware, security_middleware(security)],
        client_max_size=MAX_BODY,
    )
    own_executor = executor is None
    pool = executor or ThreadPoolExecutor(max_workers=readers, thread_name_prefix="agtaild-read")
    app[CTX] = ApiContext(
        service=service,
        methods=frozenset(methods),
        hub=hub or ChangeHub(),
        security=security,
        executor=pool,
        update=update,
        health=health or (lambda: {}),
        version=__version__,
    )
    app[_CACHE] = {}
    app.on_response_prepare.append(_security_headers)
    app.on_shutdown.append(_close_streams)
    if own_executor:
        app.on_cleanup.append(_shutdown_pool)

    app[SHELL_PATHS] = setup_web_routes(app)  # the viewer at / and /web/* (agtaild/api/viewer.py)
    app.router.add_get("/login", login)
    app.router.add_get(f"{rest.API}/openapi.json", openapi_doc)
    rest.add_routes(app)
    sse.add_routes(app)
    rpc.add_routes(app)
    for name in extensions.ROUTE_MODULES:
        importlib.import_module(name).register_routes(app)
    return app


async def _close_streams(app: web.Application) -> None:
    await app[CTX].hub.close()


async def _shutdown_pool(app: web.Application) -> None:
    await asyncio.to_thread(app[CTX].executor.shutdown, True)
