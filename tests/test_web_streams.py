"""The viewer's live streams and a browser's six connections per host (bench/VIEWER.md, "Stalls").

Chromium keeps a page the reader left in its back-forward cache for about a minute, and with it
the page's open EventSources; each holds one of the six HTTP/1.1 connections the browser allows
a host. The viewer used to keep its streams open there, so after a few page loads in a row every
API request of the new page waited ≈ 55 s for a cached page to be dropped. These tests load the
viewer many times in a row against a real agtaild, fail on a stall, and check that a page closes
its streams when it is hidden or left and opens them again when it is shown.

A page holds one stream, /changes, whatever it shows: a session page follows its session over
it too (issue 32: with a second stream per page, three agtail tabs held all six connections).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from tests.conftest import CORPUS
from tests.test_web_daemon import BASIC, CLAUDE_ROOT, Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

#: More loads than the browser has connections for one host (6), with room to spare.
LOADS = 10
#: A page load with its session on screen takes well under a second here; a stall is ≈ 55 s.
STALL = 12.0


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    if not CLAUDE_ROOT.is_dir():
        pytest.fail(f"the sample corpus is missing at {CORPUS}")
    d = Daemon(tmp_path_factory.mktemp("web-streams"))
    try:
        d.start()
        d.wait_indexed({BASIC})
        yield d
    finally:
        d.stop()


async def _live_streams(browser: Browser) -> int:
    """The daemon's count of open SSE streams, asked from the page (its cookie)."""
    doc = await browser.eval("fetch('/api/v1/health').then((r) => r.json())")
    return int(doc["live_streams"])


async def _streams_become(browser: Browser, want: int, what: str) -> None:
    deadline = time.monotonic() + 5
    while (n := await _live_streams(browser)) != want:
        assert time.monotonic() < deadline, f"{what}: the daemon holds {n} live streams, expected {want}"
        await asyncio.sleep(0.05)


async def test_many_page_loads_in_a_row_never_stall(daemon: Daemon, browser: Browser) -> None:
    await login(browser, daemon)
    route = f"#/session/claude-code/{BASIC}"
    took: list[float] = []
    for n in range(LOADS):
        # As a person opening the viewer afresh: the previous page is left (and cached), not closed.
        await browser.goto("about:blank")
        start = time.monotonic()
        what = f"load {n + 1} of {LOADS} (the earlier ones took {took} s)"
        try:
            await browser.goto(f"{daemon.url}/?load={n}{route}", timeout=STALL)
        except TimeoutError:
            pytest.fail(f"{what}: the page itself did not load within {STALL} s")
        await browser.wait_for(
            "document.querySelectorAll('.transcript .ev').length > 0 && document.querySelector('#live-toggle').dataset.state === 'on'",
            timeout=STALL - (time.monotonic() - start), what=what,
        )  # fmt: skip
        took.append(round(time.monotonic() - start, 2))
    # Only this page's stream is open (/changes; the session is followed over it).
    assert await _live_streams(browser) == 1
    assert not unexpected(browser.errors)


async def test_streams_close_while_the_page_is_hidden_or_left_and_come_back(daemon: Daemon, browser: Browser) -> None:
    await login(browser, daemon, f"#/session/claude-code/{BASIC}")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length > 0")
    await browser.wait_for("document.querySelector('#live-toggle').dataset.state === 'on'")
    # A session page holds one stream: /changes, over which it also follows its session.
    open_streams = 1
    await _streams_become(browser, open_streams, "the session page open")

    # Hidden (another tab in front): the page lets go of its connections, and takes them again.
    async def visibility(hidden: bool) -> None:
        await browser.eval(
            f"Object.defineProperty(document, 'hidden', {{ configurable: true, get: () => {json.dumps(hidden)} }});"
            "document.dispatchEvent(new Event('visibilitychange'))"
        )

    await visibility(True)
    await _streams_become(browser, 0, "hidden")
    await visibility(False)
    await _streams_become(browser, open_streams, "shown again")

    # Left for another page, then back (restored from the back-forward cache, not reloaded).
    await browser.eval("window.__same_page = true")
    await browser.goto("about:blank")
    # Navigating from inside the evaluation can lose its answer ("Inspected target navigated or
    # closed"): the evaluation returns first, the navigation follows.
    await browser.eval("setTimeout(() => history.back(), 0)")
    await browser.wait_for("window.__same_page === true && document.querySelector('#live-toggle').dataset.state === 'on'",
                           what="the cached page, live again")  # fmt: skip
    await _streams_become(browser, open_streams, "back from the cache")
    assert not unexpected(browser.errors)


async def test_a_page_opened_hidden_opens_its_streams_when_first_shown(daemon: Daemon, browser: Browser) -> None:
    await login(browser, daemon)
    await browser.wait_for("document.querySelector('#live-toggle').dataset.state === 'on'")
    # The next page believes it is in a background tab from its first script on.
    await browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "window.__hidden = true;"
        "Object.defineProperty(document, 'hidden', { configurable: true, get: () => window.__hidden });"
        "Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (window.__hidden ? 'hidden' : 'visible') });"
    )})  # fmt: skip
    await browser.goto("about:blank")
    await browser.goto(f"{daemon.url}/?hidden=1#/session/claude-code/{BASIC}")
    await browser.wait_for("document.querySelectorAll('.transcript .ev').length > 0")
    await _streams_become(browser, 0, "opened in the background")
    await browser.eval("window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))")
    await browser.wait_for("document.querySelector('#live-toggle').dataset.state === 'on'", what="live once shown")
    await _streams_become(browser, 1, "shown")
    assert not unexpected(browser.errors)


async def test_three_tabs_on_sessions_leave_connections_for_a_fourth(daemon: Daemon, browser: Browser) -> None:
    """Three agtail pages, each showing a session in a window of its own (so all are visible: a
    background tab lets go of its stream), hold one stream each, and a fourth still loads at
    once. With two streams a page, the three held all six connections Chromium gives a host."""
    await login(browser, daemon)
    route = f"#/session/claude-code/{BASIC}"
    tabs = []
    try:
        for n in range(3):
            made = await browser.send(
                "Target.createTarget", {"url": f"{daemon.url}/?tab={n}{route}", "newWindow": True}, browser=True
            )
            tabs.append(made["targetId"])
        # This page sits on about:blank, so what the daemon counts is the three tabs' streams.
        await browser.goto("about:blank")
        deadline = time.monotonic() + 10
        while (held := int(daemon.get("/api/v1/health")["live_streams"])) < 3:
            assert time.monotonic() < deadline, f"the three tabs hold {held} streams"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # a second stream of a tab would be open by now
        assert int(daemon.get("/api/v1/health")["live_streams"]) == 3
        start = time.monotonic()
        try:
            await browser.goto(f"{daemon.url}/?tab=4{route}", timeout=STALL)
        except TimeoutError:
            pytest.fail(f"a fourth tab did not load within {STALL} s beside three open ones")
        await browser.wait_for(
            "document.querySelectorAll('.transcript .ev').length > 0 && !document.querySelector('.live-badge').hidden",
            timeout=STALL - (time.monotonic() - start), what="the fourth tab's session, followed live",
        )  # fmt: skip
        await _streams_become(browser, 4, "four tabs")
    finally:
        for target in tabs:
            await browser.send("Target.closeTarget", {"targetId": target}, browser=True)
    assert not unexpected(browser.errors)

