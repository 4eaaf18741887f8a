"""The viewer's cost card and tables show the known cost beside the unpriced part (issue 23,
item 10), in Chromium at 1400 and 390 px, against a real agtaild reading Claude Code (priced)
and pi (its mock model has no price)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.test_web_daemon import Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

PI_ROOT = CORPUS / "real" / "pi-0.73.1" / "sessions"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-cost"))
    d.extra_args = ["--root", f"pi={PI_ROOT}"]
    try:
        d.start()
        d.wait_indexed({"cd61be5e-6fcd-4c16-b5d5-281dd40378d1", "01a229d9-21cd-772b-b9f1-55b93a74b414"})
        yield d
    finally:
        d.stop()


@pytest.mark.parametrize("width", [1400, 390])
async def test_the_cost_card_shows_the_known_part(daemon: Daemon, browser: Browser, shots: Path, width: int) -> None:
    totals = daemon.get("/api/v1/stats?by=day")["totals"]
    assert totals["cost_usd"] is None and totals["cost_known_usd"] > 0
    known = f"${totals['cost_known_usd']:.2f}"
    await browser.set_viewport(width, 900)
    await login(browser, daemon, "#/stats?days=all")
    card = await browser.wait_for(
        "(() => { const c = [...document.querySelectorAll('#view-stats .ucard')].find((x) => "
        "x.querySelector('.ulabel').textContent === 'cost'); return c && [c.querySelector('.uval').textContent, c.title]; })()",
        what="the cost card",
    )
    assert card[0] == f"{known} + ?", card
    assert "without a known price" in card[1] and "claude-mock-4" in card[1], card
    # The by-agent table: Claude's priced row, pi's unknown one ("—", with the reason in its title).
    cells = await browser.eval(
        "[...document.querySelectorAll('#view-stats table')].flatMap((t) => [...t.querySelectorAll('tbody tr')])"
        ".map((r) => [r.querySelector('.key')?.textContent, r.lastElementChild.textContent, r.lastElementChild.title])"
    )
    by_key = {k: (v, t) for k, v, t in cells}
    assert by_key["pi"][0] == "—" and "without a known price" in by_key["pi"][1]
    assert by_key["claude-code"][0].startswith("$")
    await browser.screenshot(shots / f"cost-card-{width}.png")
    assert unexpected(browser.errors) == []
