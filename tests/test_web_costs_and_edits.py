"""The viewer, in Chromium at 1400 and 390 px, against a real agtaild reading Claude Code
(priced), pi (its mock model has no price), Codex and Aider (issue 23): the cost card and
tables show the known cost beside the unpriced part (item 10); an apply_patch call names the
files it touches, not the flattened patch, and hunk headers are real unified ones (items 6, 7);
Aider's SEARCH/REPLACE blocks show as a diff, Codex's reasoning headers bold (item 8)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.adapters.aider.adapter import file_digest
from tests.conftest import CORPUS
from tests.test_web_daemon import Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

PI_ROOT = CORPUS / "real" / "pi-0.73.1" / "sessions"
CODEX_ROOT = CORPUS / "real" / "codex-0.171.0" / "sessions"
CODEX_BASIC = "01a229d7-c676-78a1-a3ee-2b022b275b04"
AIDER_ROOT = CORPUS / "real" / "aider-0.86.2" / "demo-app"
#: An Aider id begins with a digest of the history file's real path (it differs per checkout).
AIDER_EDIT = file_digest(str(AIDER_ROOT / ".aider.chat.history.md")) + "-20261130T160439"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-cost"))
    d.extra_args = ["--root", f"pi={PI_ROOT}", "--root", f"codex={CODEX_ROOT}", "--root", f"aider={AIDER_ROOT}"]
    try:
        d.start()
        d.wait_indexed({"cd61be5e-6fcd-4c16-b5d5-281dd40378d1", "01a229d9-21cd-772b-b9f1-55b93a74b414", CODEX_BASIC, AIDER_EDIT})
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


@pytest.mark.parametrize("width", [1400, 390])
async def test_an_apply_patch_names_its_files(daemon: Daemon, browser: Browser, shots: Path, width: int) -> None:
    await browser.set_viewport(width, 900)
    await login(browser, daemon, f"#/session/codex/{CODEX_BASIC}")
    hints = await browser.wait_for(
        "(() => { const s = [...document.querySelectorAll('.transcript details.tool summary')]"
        ".filter((x) => x.querySelector('.tool-name').textContent === 'apply_patch')"
        ".map((x) => x.querySelector('.fold-hint').textContent); return s.length === 2 && s; })()",
        what="the two apply_patch calls",
    )
    assert hints == ["hello.py (new file)", "hello.py"]
    headers = await browser.eval("[...document.querySelectorAll('.transcript .dl.hunk .code')].map((x) => x.textContent)")
    assert headers[0] == "@@ -0,0 +1,6 @@" and all("~-" not in x for x in headers), headers
    # The reasoning's **header** is bold text, without its asterisks.
    strong = await browser.eval(
        "[...document.querySelectorAll('.transcript details.thinking')].map((d) => "
        "[d.querySelector('.fold-hint').textContent, d.querySelector('.rich strong')?.textContent])"
    )
    assert strong[0][1] == "Inspecting the workspace" and "**" not in strong[0][0], strong
    # The exec_command result is the command's output, without Codex's wrapper lines.
    body = await browser.eval("document.querySelector('#view-session').textContent")  # closed folds too
    assert "total 12" in body and "Chunk ID" not in body and "Original token count" not in body
    await browser.screenshot(shots / f"apply-patch-{width}.png")
    assert unexpected(browser.errors) == []


@pytest.mark.parametrize("width", [1400, 390])
async def test_an_aider_reply_shows_its_edit_as_a_diff(daemon: Daemon, browser: Browser, shots: Path, width: int) -> None:
    await browser.set_viewport(width, 900)
    await login(browser, daemon, f"#/session/aider/{AIDER_EDIT}")
    shown = await browser.wait_for(
        "(() => { const d = document.querySelector('.transcript .diff'); return d && "
        "[document.querySelector('.transcript').textContent, [...d.querySelectorAll('.dl')].map((x) => x.textContent)]; })()",
        what="the reply's diff",
    )
    text, diff_lines = shown
    assert "<<<<<<< SEARCH" not in text and ">>>>>>> REPLACE" not in text
    assert "\u270e (an edit: its diff follows)" in text and "日本語の挨拶も追加しました。" in text
    assert any('-    return "Hello, " + name' in x for x in diff_lines)
    await browser.screenshot(shots / f"aider-edit-{width}.png")
    assert unexpected(browser.errors) == []
