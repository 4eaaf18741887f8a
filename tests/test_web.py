"""The web viewer's routes and static files: headers, caching, and what the files may not do."""

from __future__ import annotations

import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agtaild.api import viewer as web_routes
from agtaild.api.viewer import CSP, FILES, setup_web_routes

WEB = Path(web_routes.__file__).resolve().parent.parent / "web"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
async def client(aiohttp_client: Any) -> Any:
    app = web.Application()
    setup_web_routes(app)
    return await aiohttp_client(app)


@pytest.mark.parametrize("url", sorted(FILES))
async def test_every_file_is_served_with_the_security_headers(client: Any, url: str) -> None:
    resp = await client.get(url)
    assert resp.status == 200
    body = await resp.read()
    assert body == (WEB / FILES[url][0]).read_bytes()
    assert resp.headers["Content-Type"].split(";")[0] == FILES[url][1].split(";")[0]
    csp = resp.headers["Content-Security-Policy"]
    directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "no-referrer"
    assert resp.headers["X-Frame-Options"] == "DENY"


async def test_etag_revalidation(client: Any) -> None:
    first = await client.get("/web/app.js")
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "no-cache"
    again = await client.get("/web/app.js", headers={"If-None-Match": etag})
    assert again.status == 304
    assert await again.read() == b""
    assert again.headers["Content-Security-Policy"] == CSP
    other = await client.get("/web/app.js", headers={"If-None-Match": '"something-else"'})
    assert other.status == 200
    # Another file has another tag.
    css = await client.get("/web/style.css")
    assert css.headers["ETag"] != etag


async def test_head_requests(client: Any) -> None:
    resp = await client.head("/")
    assert resp.status == 200
    assert resp.headers["Content-Security-Policy"] == CSP


@pytest.mark.parametrize(
    "url",
    ["/web/", "/web/../pyproject.toml", "/web/%2e%2e/web_routes.py", "/web/index.html", "/web/app.js.map", "/app.js"],
)
async def test_nothing_else_is_served(client: Any, url: str) -> None:
    resp = await client.get(url)
    assert resp.status == 404


class _PageAudit(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline_script = False
        self.handlers: list[str] = []
        self.styles: list[str] = []
        self.external: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name, _ in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")
        if "style" in a:
            self.styles.append(tag)
        if tag == "style":
            self.styles.append("<style>")
        for key in ("src", "href"):
            value = a.get(key) or ""
            if re.match(r"^[a-z][a-z0-9+.-]*:|^//", value, re.I):
                self.external.append(value)
        if tag == "script":
            self.scripts.append(a)
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_script = True


def test_page_has_no_inline_code_and_loads_nothing_from_elsewhere() -> None:
    audit = _PageAudit()
    audit.feed((WEB / "index.html").read_text("utf-8"))
    assert audit.scripts == [{"src": "/web/app.js", "defer": None}]
    assert not audit.inline_script
    assert audit.handlers == []
    assert audit.styles == []
    assert audit.external == []


def test_script_never_parses_markup_or_evaluates_code() -> None:
    js = (WEB / "app.js").read_text("utf-8")
    code = re.sub(r"^\s*//.*$", "", js, flags=re.M)  # comments may name what is forbidden
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "createContextualFragment",
        "DOMParser",
        "srcdoc",
        "setTimeout('",
        'setTimeout("',
    ):
        assert forbidden not in code, forbidden
    # Every URL the script fetches is on this origin.
    assert not re.search(r"""fetch\(\s*['"`]https?:""", code)
    assert not re.search(r"""EventSource\(\s*['"`]https?:""", code)


def test_stylesheet_loads_nothing_from_elsewhere() -> None:
    css = (WEB / "style.css").read_text("utf-8")
    assert "@import" not in css
    for url in re.findall(r"url\(([^)]*)\)", css):
        assert not re.match(r"""\s*['"]?([a-z]+:|//)""", url, re.I), url


def test_web_files_ship_as_package_data() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["agtaild"]
    assert "web/*" in globs
    shipped = {p.name for p in WEB.iterdir() if p.is_file()}
    assert {name for name, _ in FILES.values()} <= shipped
    # Nothing in web/ that the routes do not serve (and nothing nested, which web/* would miss).
    assert shipped == {name for name, _ in FILES.values()}
    assert not [p for p in WEB.iterdir() if p.is_dir() and p.name != "__pycache__"]
