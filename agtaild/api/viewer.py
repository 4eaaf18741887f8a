"""The web viewer: a static single page (agtaild/web/) served by agtaild at ``/``.

The page is plain HTML + ES modules + one stylesheet, no build step and nothing fetched from
anywhere but this daemon. Everything it shows comes from the REST API under ``/api/v1``, with
the same token rules as any other client (over TCP: the cookie set by the login link).

Transcripts are hostile text, so every response here carries a strict Content-Security-Policy:
scripts only from this origin (module scripts included), no inline script or style attributes,
no eval, no plugins, no framing. The scripts build the DOM with textContent/createElement only.

What is served is fixed when ``setup_web_routes(app)`` is called: the package's web folder is
walked once (subfolders too) and each file of a known type gets its own exact route, read into
memory with an ETag. No path from a request ever reaches the disk: a URL that is not one of
those routes is a plain 404, so ``..``, encoded dots or a file added later cannot be reached.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

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

#: The page itself, served at ``/`` (and nowhere else).
PAGE = ("index.html", "text/html; charset=utf-8")

#: Content types by file suffix. A file of any other kind in agtaild/web/ is not served.
TYPES: dict[str, str] = {
    ".js": "text/javascript; charset=utf-8",  # module scripts need a JavaScript MIME type
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}

#: A file or folder name that may appear in a URL: no dot files, no __pycache__, nothing that
#: needs escaping.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: Folders below agtaild/web/ deeper than this are not walked.
MAX_DEPTH = 4

#: Key under which the loaded files are kept on the application.
WEB_FILES_KEY = web.AppKey("agtail_web_files", dict)


class _Asset:
    __slots__ = ("body", "content_type", "etag")

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body = body
        self.content_type = content_type
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _walk(folder: Traversable, prefix: str, depth: int) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not _NAME.fullmatch(entry.name) or (isinstance(entry, Path) and entry.is_symlink()):
            continue
        if entry.is_dir():
            if depth < MAX_DEPTH:
                yield from _walk(entry, f"{prefix}{entry.name}/", depth + 1)
        elif entry.is_file():
            yield f"{prefix}{entry.name}", entry


def served_files(base: Traversable | None = None) -> dict[str, tuple[str, str]]:
    """URL path → (file path below agtaild/web/, content type): the page at ``/`` and every
    file of a type in TYPES under ``/web/``, found in the installed package."""
    root = base if base is not None else resources.files("agtaild") / "web"
    files: dict[str, tuple[str, str]] = {"/": PAGE}
    for rel, _ in _walk(root, "", 0):
        ctype = TYPES.get(PurePosixPath(rel).suffix)
        if ctype is not None:
            files[f"/web/{rel}"] = (rel, ctype)
    return files


def load_assets(base: Traversable | None = None) -> dict[str, _Asset]:
    """Read the viewer's files from the installed package (agtaild/web/, subfolders too)."""
    root = base if base is not None else resources.files("agtaild") / "web"
    assets: dict[str, _Asset] = {}
    for url, (rel, ctype) in served_files(root).items():
        node = root
        for part in rel.split("/"):
            node = node / part
        assets[url] = _Asset(node.read_bytes(), ctype)
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


def setup_web_routes(app: web.Application) -> frozenset[str]:
    """Serve the viewer: ``/`` (the page) and its files under ``/web/``; returns their URLs."""
    assets = load_assets()
    app[WEB_FILES_KEY] = assets
    for url, asset in assets.items():
        app.router.add_get(url, _handler(asset))
    return frozenset(assets)
