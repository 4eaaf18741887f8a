"""The connection-level defences (agtaild/api/guard.py; issue #9, items 18 and 19) on a real
loopback TCP site with short limits: slow heads, stalled bodies, idle connections, the
per-client cap, an announced body far over the limit, malformed requests in the log — and a
long-lived answer that the deadlines leave alone."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from agtaild.api import guard
from agtaild.api.app import create_app
from agtaild.api.guard import GuardedAppRunner, GuardLimits
from agtaild.api.security import Security
from tests.daemon_fakes import FAKE_METHODS, FakeService

TOKEN = "g" * 43
LIMITS = GuardLimits(head_timeout=0.6, body_idle_timeout=0.6, keepalive_timeout=0.8, max_per_client=5)
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
async def site() -> AsyncIterator[tuple[str, int]]:
    svc = FakeService()
    svc.add("claude-code", "abc123", ["hello"])
    app = create_app(svc, methods=FAKE_METHODS, security=Security(TOKEN))
    app.router.add_get("/test/stream", _stream)
    runner = GuardedAppRunner(app, limits=LIMITS)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    guard.ABUSE_LOG._last.clear()
    yield "127.0.0.1", port
    await runner.cleanup()


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


async def test_connections_per_client_are_capped(site: tuple[str, int]) -> None:
    held = [await _open(site) for _ in range(LIMITS.max_per_client)]
    await asyncio.sleep(0.1)
    extra_reader, extra_writer = await _open(site)
    assert await _closed_within(extra_reader, 1) == b""  # closed at once, nothing answered
    extra_writer.close()
    for _, w in held:
        w.close()
    await asyncio.sleep(0.2)
    assert b"200 OK" in await _health(site)  # the slots are free again


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
