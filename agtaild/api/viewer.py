"""The web viewer: a static single page (agtaild/web/) served by agtaild at ``/``.

The page is plain HTML + one script + one stylesheet, no build step and nothing fetched from
anywhere but this daemon. Everything it shows comes from the REST API under ``/api/v1``, with
the same token rules as any other client (over TCP: the cookie set by the login link).

Transcripts are hostile text, so every response here carries a strict Content-Security-Policy:
scripts only from this origin, no inline script or style attributes, no eval, no plugins, no
framing. The script itself builds the DOM with textContent/createElement only.

``setup_web_routes(app)`` adds the routes to an aiohttp application; the files are read once,
when it is called, and served from memory with an ETag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from importlib import resources

from aiohttp import web

#: The policy for the viewer's own responses. `style-src 'self'` forbids inline <style> and
#: style="" attributes (the script sets sizes through the CSSOM, which CSP allows).
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

#: URL path → (file in agtaild/web/, content type). Only these are served: no directory
#: listing, no path taken from the request.
FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/web/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/web/style.css": ("style.css", "text/css; charset=utf-8"),
    "/web/favicon.svg": ("favicon.svg", "image/svg+xml"),
}

#: Key under which the loaded files are kept on the application.
WEB_FILES_KEY = web.AppKey("agtail_web_files", dict)


class _Asset:
    __slots__ = ("body", "content_type", "etag")

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body = body
        self.content_type = content_type
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def load_assets() -> dict[str, _Asset]:
    """Read the viewer's files from the installed package (agtaild/web/*)."""
    base = resources.files("agtaild") / "web"
    assets: dict[str, _Asset] = {}
    for url, (name, ctype) in FILES.items():
        assets[url] = _Asset((base / name).read_bytes(), ctype)
    return assets


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in header.split(","))


def apply_security_headers(response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value


def _handler(asset: _Asset) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def serve(request: web.Request) -> web.Response:
        headers = {"ETag": asset.etag, "Cache-Control": "no-cache"}
        if _etag_matches(request.headers.get("If-None-Match"), asset.etag):
            response = web.Response(status=304, headers=headers)
        else:
            response = web.Response(body=asset.body, headers=headers)
            response.headers["Content-Type"] = asset.content_type
        apply_security_headers(response)
        return response

    return serve


def setup_web_routes(app: web.Application) -> None:
    """Serve the viewer: ``/`` (the page) and its assets under ``/web/``."""
    assets = load_assets()
    app[WEB_FILES_KEY] = assets
    for url, asset in assets.items():
        app.router.add_get(url, _handler(asset))
