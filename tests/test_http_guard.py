"""The connection-level defences (agtaild/api/guard.py, agtaild/api/admission.py; issue #9,
items 18 and 19; issue 22, item 1) on a real loopback TCP site (and a unix socket beside it)
with short limits: slow heads, stalled bodies, idle connections, the budgets of connections
that have not authenticated and of those that have, the total deadline of the former, an
announced body far over the limit, malformed requests in the log — and a long-lived answer
that the deadlines leave alone."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from agtaild.api import guard
from agtaild.api.app import create_app
from agtaild.api.guard import GuardedAppRunner, GuardLimits
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "g" * 43
LIMITS = GuardLimits(head_timeout=2.0, body_idle_timeout=0.6, keepalive_timeout=0.8, unauthenticated_timeout=1.5,
                     max_unauthenticated=5, max_authenticated=3)
HEALTH = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def _stream(request: web.Request) -> web.StreamResponse:
    """A long-lived answer (like SSE): 2 s, longer than every deadline above."""
    resp = web.StreamResponse()
    resp.content_type = "text/event-stream"
    await resp.prepare(request)
    for n in range(10):
        await resp.write(f"data: {n}\n\n".encode())
        await asyncio.sleep(0.2)
    return resp


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[tuple[str, int], str, GuardedAppRunner]]:
    """The app on 127.0.0.1 and on a unix socket: ((host, port), socket path, runner)."""
    svc = FakeService()
    svc.add("claude-code", "abc123", ["hello"])
    app = create_app(svc, methods=FAKE_METHODS, security=Security(TOKEN))
    app.router.add_get("/test/stream", _stream)
    runner = GuardedAppRunner(app, limits=LIMITS)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    sock_path = str(tmp_path / "d.sock")
    await web.UnixSite(runner, sock_path).start()
    guard.ABUSE_LOG._last.clear()
    yield ("127.0.0.1", port), sock_path, runner
    await runner.cleanup()


@pytest.fixture
def site(served: tuple[tuple[str, int], str, GuardedAppRunner]) -> tuple[str, int]:
    return served[0]


async def _open(addr: tuple[str, int]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(*addr)


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sends until it closes; fails if it is still open after ``seconds``."""
    data = b""
    async with asyncio.timeout(seconds):
        while chunk := await reader.read(65536):
            data += chunk
    return data


async def _health(addr: tuple[str, int]) -> bytes:
    reader, writer = await _open(addr)
    writer.write(HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
    data = await _closed_within(reader, 2)
    writer.close()
    return data


async def test_an_unfinished_request_head_is_cut_off(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    writer.write(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
    start = time.monotonic()
    assert await _closed_within(reader, 3) == b""
    assert time.monotonic() - start < 2.5
    writer.close()


async def test_a_connection_that_sends_nothing_is_closed(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    assert await _closed_within(reader, 3) == b""
    writer.close()


async def test_a_slowloris_trickle_does_not_extend_the_deadline(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    start = time.monotonic()
    with pytest.raises((ConnectionError, OSError)):
        for byte in HEALTH[:-2]:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.1)
            if reader.at_eof() or time.monotonic() - start > 5:
                raise ConnectionResetError
    assert time.monotonic() - start < 3
    writer.close()


async def test_a_stalled_body_is_cut_off_without_an_error_in_the_log(
    site: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    reader, writer = await _open(site)
    head = (f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")  # fmt: skip
    writer.write(head.encode() + b'{"jsonrpc": "2.0"')
    with caplog.at_level(logging.DEBUG):
        await _closed_within(reader, 3)
        await asyncio.sleep(0.2)
    writer.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert b"200 OK" in await _health(site)


async def test_a_long_lived_answer_outlives_every_deadline(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    writer.write(f"GET /test/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    data = b""
    async with asyncio.timeout(5):
        while b"data: 9" not in data:
            chunk = await reader.read(65536)
            assert chunk, f"closed early after {data!r}"
            data += chunk
    writer.close()


async def test_an_sse_stream_stays_open_past_every_deadline(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    writer.write(f"GET /api/v1/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    async with asyncio.timeout(2):
        status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 200"), status
    await asyncio.sleep(2 * max(LIMITS.head_timeout, LIMITS.body_idle_timeout, LIMITS.keepalive_timeout))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            while await reader.read(65536):  # heartbeats or nothing, but no close
                pass
    assert not reader.at_eof()
    writer.close()


async def _is_closed(reader: asyncio.StreamReader, within: float = 0.5) -> bool:
    """Did the server close this connection (within ``within`` seconds)?"""
    try:
        async with asyncio.timeout(within):
            return await reader.read(65536) == b""
    except TimeoutError:
        return False
    except ConnectionError:
        return True


def _authed(target: str, *, close: bool = False) -> bytes:
    extra = "Connection: close\r\n" if close else ""
    return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n{extra}\r\n".encode()


async def _answer(reader: asyncio.StreamReader) -> bytes:
    """One answer with a Content-Length, read whole."""
    async with asyncio.timeout(2):
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        return head + await reader.readexactly(length)


async def _newcomer(site: tuple[str, int]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A new connection that asks /health (no token) and stays open, answered."""
    reader, writer = await _open(site)
    writer.write(HEALTH)
    assert b"200 OK" in await _answer(reader)
    return reader, writer


async def test_a_full_budget_closes_an_idle_stranger_not_the_newcomer(site: tuple[str, int]) -> None:
    """0.2 refused every connection past 64 from one address, and on loopback every user is
    one address: whoever held 64 idle ones locked the viewer out."""
    held = [await _open(site) for _ in range(LIMITS.max_unauthenticated)]
    await asyncio.sleep(0.05)
    newcomers = [await _newcomer(site) for _ in range(3)]  # each answered: an idle one made room
    assert [await _is_closed(r, 0.05) for r, _ in held] == [True, True, True, False, False]  # oldest first
    for _, w in [*held, *newcomers]:
        w.close()


async def test_idle_strangers_go_before_those_that_sent_something(site: tuple[str, int]) -> None:
    slow = [await _open(site) for _ in range(2)]
    for _, w in slow:
        w.write(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the end
    await asyncio.sleep(0.05)
    idle = [await _open(site) for _ in range(LIMITS.max_unauthenticated - 2)]  # younger, but idle
    await asyncio.sleep(0.05)
    newcomers = [await _newcomer(site) for _ in range(len(idle))]
    assert all([await _is_closed(r, 0.05) for r, _ in idle])
    assert not any([await _is_closed(r, 0.05) for r, _ in slow])
    newcomers.append(await _newcomer(site))  # now the oldest of those that sent something goes
    assert [await _is_closed(r, 0.05) for r, _ in slow] == [True, False]
    for _, w in [*slow, *idle, *newcomers]:
        w.close()


async def test_a_stranger_is_closed_at_its_total_deadline_however_often_it_asks(site: tuple[str, int]) -> None:
    """Public requests (/health, the viewer's shell) keep no connection open past the deadline
    of one that has not authenticated, nor does a head trickled byte by byte."""
    reader, writer = await _open(site)
    start = time.monotonic()
    answered = 0
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        while time.monotonic() - start < 5:
            writer.write(HEALTH)
            await _answer(reader)
            answered += 1
            await asyncio.sleep(0.2)
    assert answered >= 2  # it was served while it lasted
    assert time.monotonic() - start < LIMITS.unauthenticated_timeout + 0.6
    writer.close()


async def test_an_authenticated_connection_lives_past_that_deadline(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    start = time.monotonic()
    while time.monotonic() - start < 2 * LIMITS.unauthenticated_timeout:
        writer.write(_authed("/api/v1/health"))
        assert b"200 OK" in await _answer(reader)
        await asyncio.sleep(0.2)
    writer.close()


async def test_strangers_cannot_take_the_places_of_authenticated_streams(site: tuple[str, int]) -> None:
    streams = []
    for _ in range(LIMITS.max_authenticated):
        reader, writer = await _open(site)
        writer.write(_authed("/api/v1/changes"))
        async with asyncio.timeout(2):
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        streams.append((reader, writer))
    crowd = [await _open(site) for _ in range(4 * LIMITS.max_unauthenticated)]
    await asyncio.sleep(0.2)
    assert b"200 OK" in await _health(site)
    for reader, _ in streams:
        assert not reader.at_eof() and not await _is_closed(reader, 0.05)
    for _, w in [*streams, *crowd]:
        w.close()


async def test_a_full_authenticated_budget_closes_an_idle_one_else_answers_busy(site: tuple[str, int]) -> None:
    idle_reader, idle_writer = await _open(site)
    idle_writer.write(_authed("/api/v1/health"))
    assert b"200 OK" in await _answer(idle_reader)  # authenticated, then idle (kept alive)
    streams = []
    for _ in range(LIMITS.max_authenticated):  # the last of these takes the idle one's place
        reader, writer = await _open(site)
        writer.write(_authed("/api/v1/changes"))
        async with asyncio.timeout(2):
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        streams.append((reader, writer))
    assert await _is_closed(idle_reader, 0.5)
    reader, writer = await _open(site)  # every authenticated place is busy now
    writer.write(_authed("/api/v1/health", close=True))
    reply = await _closed_within(reader, 2)
    assert reply.startswith(b"HTTP/1.1 503"), reply[:200]
    assert json.loads(reply.partition(b"\r\n\r\n")[2])["error"]["code"] == "busy"
    for _, w in [*streams, (reader, writer), (idle_reader, idle_writer)]:
        w.close()


async def test_the_unix_socket_is_in_no_budget(served: tuple[tuple[str, int], str, GuardedAppRunner]) -> None:
    site, sock_path, _runner = served
    tcp_idle = [await _open(site) for _ in range(LIMITS.max_unauthenticated)]
    local = [await asyncio.open_unix_connection(sock_path) for _ in range(3 * LIMITS.max_unauthenticated)]
    await asyncio.sleep(0.05)
    assert not any([await _is_closed(r, 0.02) for r, _ in tcp_idle])  # none pushed out by the unix ones
    reader, writer = local[-1]
    start = time.monotonic()
    while time.monotonic() - start < LIMITS.unauthenticated_timeout + 0.3:  # no token, and no deadline
        writer.write(HEALTH)
        assert b"200 OK" in await _answer(reader)
        await asyncio.sleep(0.2)
    assert all([await _is_closed(r, 0.05) for r, _ in tcp_idle])  # the TCP strangers' deadline
    for _, w in [*tcp_idle, *local]:
        w.close()


async def test_a_huge_content_length_is_refused_from_the_header(site: tuple[str, int]) -> None:
    reader, writer = await _open(site)
    head = (f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n")  # fmt: skip
    writer.write(head.encode())
    start = time.monotonic()
    async with asyncio.timeout(2):
        status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 413"), status
    assert time.monotonic() - start < 1
    writer.close()


async def test_malformed_requests_log_one_warning_line(
    site: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        for _ in range(20):
            reader, writer = await _open(site)
            writer.write(b"GET /\x00bad HTTP/1.1\r\nHost: \x01\r\n\r\n")
            await _closed_within(reader, 2)
            writer.close()
    bad = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(bad) == 1, caplog.text  # rate-limited
    assert bad[0].levelno == logging.WARNING and bad[0].exc_info is None
    assert "bad request" in bad[0].getMessage()


def test_the_rate_limit_counts_what_it_leaves_out() -> None:
    records: list[str] = []

    class Sink(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("agtail.test.ratelimit")
    logger.addHandler(Sink())
    limiter = guard.RateLimitedLog(logger, every=0.2)
    for _ in range(5):
        limiter.warning("k", "x %s", 1)
    time.sleep(0.25)
    limiter.warning("k", "x %s", 2)
    assert records == ["x 1", "x 2 (4 more like it not logged)"]


async def test_a_client_gone_mid_body_is_not_an_internal_error(
    site: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        _, writer = await _open(site)
        head = (f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n")  # fmt: skip
        writer.write(head.encode() + b"[" * 100)
        await writer.drain()
        writer.transport.abort()
        await asyncio.sleep(0.5)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert b"200 OK" in await _health(site)



async def test_a_stream_whose_client_left_ends_at_once(site: tuple[str, int]) -> None:
    """An SSE stream ends when its connection closes, not at its next keepalive (15 s later):
    /health's live_streams counts only the streams clients still hold."""

    async def live_streams() -> int:
        reader, writer = await _open(site)
        writer.write(HEALTH.replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n".encode()))
        body = (await _closed_within(reader, 2)).partition(b"\r\n\r\n")[2]
        writer.close()
        return int(json.loads(body)["live_streams"])

    head = f"Host: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    held = []
    for target in ("/api/v1/changes", "/api/v1/sessions/claude-code/abc123/follow"):
        reader, writer = await _open(site)
        writer.write(f"GET {target} HTTP/1.1\r\n{head}".encode())
        async with asyncio.timeout(2):
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        held.append(writer)
    assert await live_streams() == 2
    for writer in held:
        writer.close()
    start = time.monotonic()
    while (n := await live_streams()) > 0:
        assert time.monotonic() - start < 2, f"{n} streams still open after their clients left"
        await asyncio.sleep(0.05)
