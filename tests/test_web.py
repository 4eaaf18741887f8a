"""The web viewer's routes and static files: headers, caching, and what the files may not do."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agtaild.api import viewer as web_routes
from agtaild.api.viewer import CSP, load_assets, served_files, setup_web_routes

WEB = Path(web_routes.__file__).resolve().parent.parent / "web"
REPO = Path(__file__).resolve().parent.parent
FILES = served_files()
SCRIPTS = sorted(p for p in WEB.rglob("*.js") if "__pycache__" not in p.parts)
#: The page's script (the entry module), as index.html loads it.
SCRIPT = "/web/main.js"


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
    if url.endswith(".js"):  # a module script with another type is refused by the browser
        assert resp.headers["Content-Type"] == "text/javascript; charset=utf-8"
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
    first = await client.get(SCRIPT)
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "no-cache"
    again = await client.get(SCRIPT, headers={"If-None-Match": etag})
    assert again.status == 304
    assert await again.read() == b""
    assert again.headers["Content-Security-Policy"] == CSP
    other = await client.get(SCRIPT, headers={"If-None-Match": '"something-else"'})
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
    [
        "/web/", "/web/../pyproject.toml", "/web/%2e%2e/web_routes.py", "/web/index.html", "/web/app.js.map",
        "/app.js", "/web//app.js", "/web/%2fapp.js", "/web/__init__.py", "/web/views/", "/web/..%2fweb_routes.py",
        "/web/APP.JS", "/web/app.js/",
    ],
)
async def test_nothing_else_is_served(client: Any, url: str) -> None:
    resp = await client.get(url)
    assert resp.status == 404


@pytest.mark.parametrize(
    "target",
    [
        "/web/../web_routes.py", "/web/%2e%2e/web_routes.py", "/web/..%2fweb_routes.py", "/web/%2e%2e%2f__init__.py",
        "/web/./../../pyproject.toml", "/web/views/../../web_routes.py", "/web/..\\web_routes.py",
        "/web/%252e%252e/web_routes.py", "//etc/passwd", "/web/%00app.js",
    ],
)
async def test_raw_traversal_attempts_reach_no_other_file(aiohttp_server: Any, target: str) -> None:
    """Sent as written (no client-side normalisation): the answer is a 404 or the bytes of a
    served file, never another file of the package."""
    app = web.Application()
    setup_web_routes(app)
    server = await aiohttp_server(app)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    served = {(WEB / rel).read_bytes() for rel, _ in FILES.values()}
    assert status in (400, 404) or (status == 200 and body in served), (status, head)


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
    assert audit.scripts == [{"type": "module", "src": "/web/main.js"}]
    assert not audit.inline_script
    assert audit.handlers == []
    assert audit.styles == []
    assert audit.external == []


def test_the_served_files_are_the_web_folders_files_of_known_types(tmp_path: Path) -> None:
    """The allow-list is built from the folder's files, subfolders included; dot files,
    __pycache__, unknown types, odd names, symlinks and deep folders are left out."""
    (tmp_path / "index.html").write_text("<!doctype html>")
    (tmp_path / "main.js").write_text("export const a = 1;")
    (tmp_path / "style.css").write_text("body {}")
    (tmp_path / "views" / "deep").mkdir(parents=True)
    (tmp_path / "views" / "list.js").write_text("export const b = 2;")
    (tmp_path / "views" / "deep" / "icon.svg").write_text("<svg/>")
    (tmp_path / "views" / "notes.txt").write_text("not served")
    (tmp_path / "views" / "list.js.map").write_text("{}")
    (tmp_path / ".hidden.js").write_text("secret")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.js").write_text("cached")
    (tmp_path / "sp ace.js").write_text("odd name")
    (tmp_path / "a" / "b" / "c" / "d" / "e").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "d" / "ok.js").write_text("depth 4")
    (tmp_path / "a" / "b" / "c" / "d" / "e" / "far.js").write_text("depth 5")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.js"
    outside.write_text("outside the folder")
    os.symlink(outside, tmp_path / "link.js")
    os.symlink(tmp_path / "views", tmp_path / "linked-views")
    files = served_files(tmp_path)
    assert files == {
        "/": ("index.html", "text/html; charset=utf-8"),
        "/web/main.js": ("main.js", "text/javascript; charset=utf-8"),
        "/web/style.css": ("style.css", "text/css; charset=utf-8"),
        "/web/views/list.js": ("views/list.js", "text/javascript; charset=utf-8"),
        "/web/views/deep/icon.svg": ("views/deep/icon.svg", "image/svg+xml"),
        "/web/a/b/c/d/ok.js": ("a/b/c/d/ok.js", "text/javascript; charset=utf-8"),
    }
    assets = load_assets(tmp_path)
    assert set(assets) == set(files)
    assert assets["/web/views/list.js"].body == b"export const b = 2;"


def test_the_package_serves_every_file_of_its_web_folder() -> None:
    shipped = {p.relative_to(WEB).as_posix() for p in WEB.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert {rel for rel, _ in FILES.values()} == shipped
    assert set(FILES) == {"/"} | {f"/web/{rel}" for rel in shipped if rel != "index.html"}


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.relative_to(WEB).as_posix() for p in SCRIPTS])
def test_script_never_parses_markup_or_evaluates_code(script: Path) -> None:
    js = script.read_text("utf-8")
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


def test_only_dom_js_turns_strings_into_nodes() -> None:
    """The escaping rules live in one module: every other module builds its nodes through
    web/dom.js (h, richText, snippetNodes …), never with the DOM's own constructors."""
    for script in SCRIPTS:
        rel = script.relative_to(WEB).as_posix()
        code = re.sub(r"^\s*//.*$", "", script.read_text("utf-8"), flags=re.M)
        if rel == "dom.js":
            assert "createElement(" in code and "textContent" in code
            continue
        for forbidden in ("createElement", "createTextNode", "setAttribute('href'", ".href =", ".src =", "srcset"):
            assert forbidden not in code, f"{rel}: {forbidden}"
        if rel.startswith("views/"):
            assert re.search(r"^import \{[^}]*\bh\b[^}]*\} from '\.\./dom\.js';$", code, re.M), rel


def test_stylesheet_loads_nothing_from_elsewhere() -> None:
    css = (WEB / "style.css").read_text("utf-8")
    assert "@import" not in css
    for url in re.findall(r"url\(([^)]*)\)", css):
        assert not re.match(r"""\s*['"]?([a-z]+:|//)""", url, re.I), url


def test_web_files_ship_as_package_data(tmp_path: Path) -> None:
    """A wheel built from the project holds every file the routes serve (subfolders too)."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["agtaild"]
    assert "web/**" in globs
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the dev extra asks (>= 77): run make setup")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(REPO / "agtaild", src / "agtaild", ignore=skip)
    shutil.copytree(REPO / "clients" / "python", src / "clients" / "python", ignore=skip)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(src)],
        capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("agtaild-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"agtaild/web/{rel}" for rel, _ in FILES.values()} <= names
