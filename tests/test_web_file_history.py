"""The viewer's file page (#/file?path=…, issue 27), in Chromium: a file's recorded changes,
newest first, each linked to its session's event with the prompt that led to it and its diff;
reached from the file name above a diff in a transcript."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_web_daemon import Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

HELLO = "/tmp/rt/claude/home/src/demo-app/hello.py"
BASIC = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-file"))
    try:
        d.start()
        d.wait_indexed({BASIC})
        yield d
    finally:
        d.stop()


@pytest.mark.parametrize("width", [1400, 390])
async def test_a_diff_leads_to_its_file_s_history(daemon: Daemon, browser: Browser, shots: Path, width: int) -> None:
    await browser.set_viewport(width, 900)
    await login(browser, daemon, f"#/session/claude-code/{BASIC}")
    href = await browser.wait_for(
        "(() => { const a = document.querySelector('.transcript .diff-file a'); return a && a.getAttribute('href'); })()",
        what="a diff's file link",
    )
    assert href == "#/file?path=" + HELLO.replace("/", "%2F")
    await browser.eval(f"location.hash = {href!r}")
    changes = await browser.wait_for(
        "(() => { const c = [...document.querySelectorAll('#view-file .change')]; return c.length && c.map((x) => ["
        "x.dataset.kind, x.querySelector('.change-session').getAttribute('href'),"
        "(x.querySelector('.change-prompt') || {}).textContent, x.querySelectorAll('.dl').length]); })()",
        what="the file's changes",
    )
    assert [c[0] for c in changes] == ["edit", "create"]  # newest first
    assert changes[0][1] == f"#/session/claude-code/{BASIC}?at=7" and changes[1][1].endswith("?at=4")
    assert changes[0][2].startswith("> Create hello.py with a greet() function")
    assert all(c[3] > 1 for c in changes)  # each with its diff (the new file's lines too)
    title = await browser.eval("document.querySelector('#view-file h1').textContent")
    assert title == HELLO
    await browser.screenshot(shots / f"file-history-{width}.png")
    await browser.eval("location.hash = '#/file?path=%2Fnowhere%2Fnever.py'")
    empty = await browser.wait_for(
        "(() => { const e = document.querySelector('#view-file .empty'); return e && e.textContent; })()",
        what="the empty answer",
    )
    assert empty == "No recorded agent session changed this file (it does not exist)."
    assert unexpected(browser.errors) == []
