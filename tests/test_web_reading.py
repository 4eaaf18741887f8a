"""The viewer's reading features in headless Chromium, on a real agtaild over real Claude Code
files: the branch switch at a rewind, search hits on an inactive branch, compaction dividers."""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_rewind import last_uuid, rewound_session
from tests.test_web_daemon import Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

REWOUND = str(uuidlib.UUID(int=0xB1A2C3D4_0000_4000_8000_00000000BEEF))
VISIBLE_TEXT = "document.getElementById('view-session').innerText"


@pytest.fixture(scope="module")
def reading_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, dict[str, str]]]:
    d = Daemon(tmp_path_factory.mktemp("web-reading"))
    try:
        d.start()
        ids = rewound_session(d.root / "-tmp-rewind" / f"{REWOUND}.jsonl")
        d.wait_indexed({REWOUND})
        yield d, ids
    finally:
        d.stop()


async def test_branch_switch_shows_the_other_continuation(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser, shots: Path
) -> None:
    daemon, _ids = reading_daemon
    await login(browser, daemon, f"#/session/claude-code/{REWOUND}")
    await browser.wait_for("!!document.querySelector('.branch-switch')", what="the branch switch")
    switch = "document.querySelector('.branch-switch .branch-label').textContent"
    assert await browser.eval(switch) == "branch 2 of 2"
    text = await browser.eval(VISIBLE_TEXT)
    assert "Ajouté farewell() en français" in text and "first try" not in text
    # The trunk before the fork is shown whatever the branch.
    assert "Create hello.py with a greet() function" in text

    await browser.click(".branch-switch .branch-prev")
    assert await browser.eval(switch) == "branch 1 of 2 · not the current branch"
    text = await browser.eval(VISIBLE_TEXT)
    assert "Added farewell() to hello.py (first try)" in text and "en français" not in text
    assert "Create hello.py with a greet() function" in text
    await browser.eval("document.querySelector('.branch-switch').scrollIntoView({block: 'center'})")
    await browser.screenshot(shots / "branch-switch.png", full_page=False)

    await browser.click(".branch-switch .branch-next")
    assert await browser.eval(switch) == "branch 2 of 2"
    assert "en français" in await browser.eval(VISIBLE_TEXT)
    assert unexpected(browser.errors) == []


async def test_a_hit_on_an_inactive_branch_says_so_and_opens_that_branch(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser
) -> None:
    daemon, _ids = reading_daemon
    await login(browser, daemon, "#/search?q=" + "first%20try")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0", what="search hits")
    tags = await browser.eval(
        "[...document.querySelectorAll('#view-search .hit .branch-tag')].map((t) => t.textContent)"
    )
    assert tags == ["inactive branch"]
    href = await browser.eval("document.querySelector('#view-search .hit').getAttribute('href')")
    await browser.eval(f"location.hash = {json.dumps(href)}")
    seq = href.rsplit("=", 1)[1]
    await browser.wait_for(f"document.querySelector('.ev.target')?.id === 'ev-{seq}'", what="the hit's event")
    assert not await browser.eval(f"document.getElementById('ev-{seq}').hidden")
    label = await browser.eval("document.querySelector('.branch-switch .branch-label').textContent")
    assert label.startswith("branch 1 of 2")
    assert last_uuid()[:8] in await browser.eval("document.querySelector('.branch-switch').dataset.fork")
    assert unexpected(browser.errors) == []
