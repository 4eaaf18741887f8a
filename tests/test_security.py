"""The security model: token over TCP, Host/Origin against DNS rebinding, the one-time login
link and its cookie, size limits, the unix socket without a token, file permissions."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from agtaild.api.app import create_app
from agtaild.api.security import (
    COOKIE_NAME,
    SHELL_PATHS,
    Security,
    ensure_private_dir,
    host_of,
    load_or_create_token,
)
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "s" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def security() -> Security:
    return Security(TOKEN)


@pytest.fixture
def app(security: Security) -> web.Application:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["secret: sk-live-123"])
    return create_app(svc, methods=FAKE_METHODS, security=security)


@pytest.fixture
async def client(aiohttp_client: Any, app: web.Application) -> Any:
    return await aiohttp_client(app)


def every_api_get(app: web.Application) -> list[str]:
    """A concrete URL for every GET route of the app (path parameters filled in)."""
    urls = []
    for resource in app.router.resources():
        info = resource.get_info()
        path = info.get("path") or info.get("formatter")
        if path is None:
            continue
        if any(r.method == "GET" for r in resource):
            urls.append(path.replace("{agent}", "claude-code").replace("{id}", "abc123"))
    return sorted(urls)


async def test_no_token_is_401_everywhere_but_health_and_login(client: Any, app: web.Application) -> None:
    urls = every_api_get(app)
    assert "/api/v1/sessions" in urls and "/api/v1/sessions/claude-code/abc123/follow" in urls
    # The viewer's shell (its page and every file under /web/) is all that is public besides.
    assert "/" in app[SHELL_PATHS] and app[SHELL_PATHS] == {u for u in urls if u == "/" or u.startswith("/web/")}
    for url in urls:
        resp = await client.get(url)
        if url == "/api/v1/health":
            assert resp.status == 200
            body = await resp.json()
            assert set(body) == {"ok", "status", "version"}  # no paths, roots or pids without a token
            continue
        if url == "/login":
            assert resp.status == 400  # needs ?token= or ?code=
            continue
        if url in app[SHELL_PATHS]:
            assert resp.status == 200, url  # the viewer's shell holds no data: its sign-in screen shows
            assert b"agtail_session" not in await resp.read()
            continue
        assert resp.status == 401, url
        body = await resp.json()
        assert body == {"ok": False, "error": {"code": "unauthorized", "message": body["error"]["message"]}, "status": 401}
    for method, url in (("POST", "/rpc"), ("POST", "/api/v1/login-link")):
        resp = await client.request(method, url, data=b"{}")
        assert resp.status == 401


async def test_wrong_token_and_wrong_scheme_are_401(client: Any) -> None:
    for header in (f"Bearer {TOKEN}x", "Bearer ", f"Basic {TOKEN}", TOKEN):
        resp = await client.get("/api/v1/sessions", headers={"Authorization": header})
        assert resp.status == 401, header


@pytest.mark.parametrize("host", ["evil.example", "evil.example:7717", "127.0.0.1.nip.io", "attacker.localhost.evil", ""])
async def test_foreign_host_is_refused_even_with_the_token(client: Any, host: str) -> None:
    resp = await client.get("/api/v1/sessions", headers={**AUTH, "Host": host})
    assert resp.status == 403
    body = await resp.json()
    assert body["error"]["code"] == "forbidden" and body["status"] == 403
    health = await client.get("/api/v1/health", headers={"Host": host})
    assert health.status == 403  # DNS rebinding must not even reach health


@pytest.mark.parametrize("host", ["localhost", "localhost:7717", "127.0.0.1:7717", "[::1]:7717", "LOCALHOST"])
async def test_loopback_hosts_are_accepted(client: Any, host: str) -> None:
    resp = await client.get("/api/v1/sessions", headers={**AUTH, "Host": host})
    assert resp.status == 200


async def test_allow_host_adds_a_name(aiohttp_client: Any) -> None:
    app = create_app(FakeService(), methods=FAKE_METHODS, security=Security(TOKEN, allow_hosts=["box.lan"]))
    client = await aiohttp_client(app)
    assert (await client.get("/api/v1/sessions", headers={**AUTH, "Host": "box.lan:7717"})).status == 200


async def test_cross_site_origin_is_refused(client: Any) -> None:
    bad = await client.get("/api/v1/sessions", headers={**AUTH, "Origin": "https://evil.example"})
    assert bad.status == 403
    null = await client.get("/api/v1/sessions", headers={**AUTH, "Origin": "null"})
    assert null.status == 403
    same = await client.get("/api/v1/sessions", headers={**AUTH, "Origin": "http://127.0.0.1:7717"})
    assert same.status == 200


async def test_one_time_login_code_sets_a_strict_cookie(client: Any, security: Security) -> None:
    minted = await client.post("/api/v1/login-link", headers=AUTH)
    path = (await minted.json())["path"]
    resp = await client.get(path, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/"
    cookie = resp.headers["Set-Cookie"]
    assert f"{COOKIE_NAME}=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert TOKEN not in cookie  # the cookie is derived, not the token itself
    # The test client's jar now holds the cookie: the API answers without a header.
    assert (await client.get("/api/v1/sessions")).status == 200
    assert (await client.get("/")).status == 200
    # The code was for one use.
    client.session.cookie_jar.clear()
    again = await client.get(path, allow_redirects=False)
    assert again.status == 401
    assert (await client.get("/api/v1/sessions")).status == 401


async def test_login_with_the_token_and_with_a_wrong_one(client: Any) -> None:
    bad = await client.get("/login", params={"token": "nope"}, allow_redirects=False)
    assert bad.status == 401 and (await bad.json())["error"]["code"] == "unauthorized"
    good = await client.get("/login", params={"token": TOKEN}, allow_redirects=False)
    assert good.status == 303
    assert (await client.get("/api/v1/sessions")).status == 200


async def test_forged_cookie_is_401(client: Any) -> None:
    resp = await client.get("/api/v1/sessions", headers={"Cookie": f"{COOKIE_NAME}={TOKEN}"})
    assert resp.status == 401


async def test_expired_code_is_refused(security: Security) -> None:
    code = security.new_login_code(ttl=-1)
    assert not security.take_login_code(code)


async def test_request_size_limit(client: Any) -> None:
    resp = await client.post("/rpc", data=b"x" * (1 << 21), headers=AUTH)
    assert resp.status == 413
    assert (await resp.json())["error"]["code"] == "too_large"


async def test_unix_socket_needs_no_token(app: web.Application) -> None:
    path = Path(tempfile.mkdtemp(prefix="agt", dir="/tmp")) / "s.sock"
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.UnixSite(runner, str(path)).start()
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(path))) as session:
            async with session.get("http://localhost/api/v1/sessions") as resp:
                assert resp.status == 200
                assert (await resp.json())["sessions"][0]["id"] == "abc123"
            async with session.get("http://localhost/api/v1/health") as resp:
                assert "uptime_seconds" in await resp.json()  # trusted: details
    finally:
        await runner.cleanup()
        path.unlink(missing_ok=True)
        path.parent.rmdir()


def test_token_file_is_private_created_once_and_reused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ensure_private_dir(data)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    token = load_or_create_token(data)
    assert len(token) >= 40
    assert stat.S_IMODE((data / "token").stat().st_mode) == 0o600
    assert load_or_create_token(data) == token
    os.chmod(data / "token", 0o644)
    os.chmod(data, 0o755)
    ensure_private_dir(data)
    assert load_or_create_token(data) == token
    assert stat.S_IMODE((data / "token").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700


def test_an_empty_token_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("\n")
    token = load_or_create_token(tmp_path)
    assert len(token) >= 40 and (tmp_path / "token").read_text().strip() == token


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost:7717", "localhost"),
        ("[::1]:7717", "::1"),
        ("[::1]", "::1"),
        ("http://127.0.0.1:7717", "127.0.0.1"),
        ("https://Evil.Example/path", "evil.example"),
        ("::1", "::1"),
    ],
)
def test_host_of(header: str, host: str) -> None:
    assert host_of(header) == host
