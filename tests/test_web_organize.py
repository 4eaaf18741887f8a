"""The viewer's labels, star, title edit, hide with undo and label filter, in headless Chromium
on a real agtaild over real Claude Code files (tests/test_web_daemon.py's daemon)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_web_daemon import BASIC, CLAUDE_ROOT, SUBAGENT_PARENT, Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)
BAR = "#view-session .state-bar"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    if not CLAUDE_ROOT.is_dir():
        pytest.fail(f"the sample corpus is missing at {CLAUDE_ROOT}")
    d = Daemon(tmp_path_factory.mktemp("web-organize"))
    try:
        d.start()
        d.wait_indexed({BASIC, SUBAGENT_PARENT})
        yield d
    finally:
        d.stop()


def state_of(daemon: Daemon, sid: str) -> dict[str, Any]:
    return daemon.get(f"/api/v1/sessions/claude-code/{sid}")["session"].get("state") or {}


def post(daemon: Daemon, sid: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(f"{daemon.url}/api/v1/sessions/claude-code/{sid}/state", data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {daemon.token}", "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200


async def type_enter(browser: Browser, selector: str, text: str) -> None:
    await browser.eval(
        f"(() => {{ const n = document.querySelector({json.dumps(selector)}); n.value = {json.dumps(text)};"
        " n.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); })()"
    )


async def test_star_label_title_and_hide_a_session_with_undo(daemon: Daemon, browser: Browser, shots: Path) -> None:
    await login(browser, daemon, f"#/session/claude-code/{BASIC}")
    await browser.wait_for(f"!!document.querySelector('{BAR} .star-toggle')", what="the state bar")
    await browser.click(f"{BAR} .star-toggle")
    await browser.wait_for(f"!!document.querySelector('{BAR} .star-toggle.on')", what="the star on")
    assert state_of(daemon, BASIC)["starred"] is True

    await type_enter(browser, f"{BAR} .label-add", "client=acme")
    await browser.wait_for(f"!!document.querySelector('{BAR} .label-chip[data-key=\"client\"]')", what="the label chip")
    await type_enter(browser, f"{BAR} .label-add", "wip")
    await browser.wait_for(f"document.querySelectorAll('{BAR} .label-chip').length === 2", what="two chips")
    assert state_of(daemon, BASIC)["labels"] == {"client": "acme", "wip": ""}
    await browser.click(f"{BAR} .label-chip[data-key=\"wip\"] .label-remove")
    await browser.wait_for(f"document.querySelectorAll('{BAR} .label-chip').length === 1", what="one chip")
    assert state_of(daemon, BASIC)["labels"] == {"client": "acme"}
    # a bad label is refused with the API's reason, and nothing changes
    await type_enter(browser, f"{BAR} .label-add", "bad key")
    err = await browser.wait_for(f"document.querySelector('{BAR} .state-error').textContent", what="the refusal")
    assert "label key" in err and state_of(daemon, BASIC)["labels"] == {"client": "acme"}

    await browser.click(f"{BAR} .title-edit")
    await browser.wait_for(f"!!document.querySelector('{BAR} .title-input')", what="the title editor")
    await type_enter(browser, f"{BAR} .title-input", "Greeting script")
    await browser.wait_for("document.querySelector('#view-session .session-title').textContent === 'Greeting script'",
                           what="the new title")  # fmt: skip
    session = daemon.get(f"/api/v1/sessions/claude-code/{BASIC}")["session"]
    assert session["title"] == "Greeting script" and session["agent_title"].startswith("Create hello.py")

    await browser.click(f"{BAR} .hide-toggle")
    await browser.wait_for(f"!!document.querySelector('{BAR} .hidden-note')", what="the hidden note")
    assert state_of(daemon, BASIC)["hidden"] is True
    await browser.screenshot(shots / "organize-session.png", full_page=False)
    await browser.click(f"{BAR} .hide-undo")
    await browser.wait_for(f"!document.querySelector('{BAR} .hidden-note')", what="undo")
    assert state_of(daemon, BASIC)["hidden"] is False
    # the one error the page met is the refused label's 400
    assert all("/state" in e and "400" in e for e in unexpected(browser.errors)), browser.errors


async def test_the_list_filters_by_label_and_star_and_shows_hidden_on_request(daemon: Daemon, browser: Browser, shots: Path) -> None:
    post(daemon, SUBAGENT_PARENT, {"label": "client=beta", "hide": True})
    post(daemon, BASIC, {"label": "note=<img src=x onerror=\"window.__pwned=1\">", "star": True})
    every = daemon.get("/api/v1/sessions?limit=200&hidden=include")["sessions"]
    await login(browser, daemon)
    rows = "[...document.querySelectorAll('#view-sessions .srow')].map((r) => r.dataset.id)"
    shown = await browser.wait_for(f"(() => {{ const r = {rows}; return r.length > 0 && r; }})()", what="the list")
    assert SUBAGENT_PARENT not in shown and BASIC in shown and len(shown) == len(every) - 1
    chips = await browser.wait_for(
        "(() => { const c = [...document.querySelectorAll('#view-sessions .label-filter .label-chip')]; return c.length && c.map((x) => x.textContent); })()",
        what="the label chips",
    )
    assert any(c.startswith("note=<img") for c in chips)
    assert await browser.eval("window.__pwned === undefined && !document.querySelector('#main img')")
    await browser.eval("location.hash = '#/?label=client%3Dbeta&hidden=include'")
    await browser.wait_for(f"JSON.stringify({rows}) === {json.dumps(json.dumps([SUBAGENT_PARENT]))}", what="the label filter")
    await browser.eval("location.hash = '#/?hidden=only'")
    await browser.wait_for(f"JSON.stringify({rows}) === {json.dumps(json.dumps([SUBAGENT_PARENT]))}", what="only hidden")
    await browser.eval("location.hash = '#/'")
    # the list drawn again for '#/' (its filters too) before the star filter is clicked
    await browser.wait_for(f"document.querySelector('#view-sessions .hidden-select').value === '' && {rows}.length === {len(every) - 1}",
                           what="the whole list again")  # fmt: skip
    await browser.click("#view-sessions .starred-filter")
    await browser.wait_for(f"JSON.stringify({rows}) === {json.dumps(json.dumps([BASIC]))}", what="only starred")
    assert await browser.eval("location.hash") == "#/?starred=true"
    tags = await browser.eval("[...document.querySelectorAll('#view-sessions .srow .tag.label')].map((t) => t.textContent)")
    assert any(t.startswith("note=<img") for t in tags)
    await browser.screenshot(shots / "organize-list.png")
    assert unexpected(browser.errors) == []
