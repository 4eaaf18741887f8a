"""Search by meaning in the viewer (issue 31), in Chromium, against a real agtaild.

The daemon reads a copy of real Claude Code sessions; its backend is the tests' fake
OpenAI-compatible endpoint (tests/semantic_fakes.py: a deterministic hashing embedder, no
model). The page is followed through what a person sees: with no backend the semantic and
hybrid choices are disabled with the reason; once ``semantic.json`` is written and a build
asked for, the status line and the top bar follow the embedder live; each hit says which
ranking found it, in every mode; and when the endpoint starts failing, the top bar shows the
error and the backoff, the choices are disabled again with the reason, and full-text search
answers as before.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.semantic_fakes import FakeEndpoint
from tests.test_web_daemon import BASIC, HOSTILE, HOSTILE_DIR, Daemon, appended_line, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

OPTIONS = (
    "[...document.querySelectorAll('#view-search .mode-select option')].map((o) => [o.value, o.disabled])"
)
NOTE = "(() => { const n = document.querySelector('#view-search .mode-note'); return n && !n.hidden ? n.textContent : ''; })()"
TOPBAR = "(() => { const n = document.querySelector('.embed-progress'); return n && !n.hidden ? n.textContent : ''; })()"
FOUND_BY = "[...document.querySelectorAll('#view-search .hit .found-by')].map((t) => t.textContent)"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[FakeEndpoint]:
    server = FakeEndpoint()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-semantic"))
    try:
        d.start()
        d.wait_indexed({BASIC, HOSTILE})
        yield d
    finally:
        d.stop()


def rpc(daemon: Daemon, method: str, params: dict[str, Any]) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(
        daemon.url + "/rpc",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {daemon.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


async def test_modes_status_and_failure_in_the_viewer(
    daemon: Daemon, endpoint: FakeEndpoint, browser: Browser, shots: Path
) -> None:
    # No backend: full-text only, the other two choices disabled with the reason.
    await login(browser, daemon, "#/search?q=greet")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0", what="full-text hits")
    options = await browser.wait_for(
        f"(() => {{ const o = {OPTIONS}; return o.length === 3 && o[1][1] && o; }})()",
        what="disabled semantic and hybrid",
    )
    assert options == [["phrase", False], ["semantic", True], ["hybrid", True]]
    assert "Search by meaning is off: no backend configured" in await browser.eval(NOTE)
    assert set(await browser.eval(FOUND_BY)) == {"full-text"}
    assert await browser.eval("document.querySelector('#view-search .mode-select').value") == "phrase"
    assert await browser.eval(TOPBAR) == ""

    # A backend configured and a build asked for: the page follows it without a reload.
    (daemon.data / "semantic.json").write_text(
        json.dumps({"backend": "openai", "url": endpoint.url, "model": "hash"})
    )
    answer = rpc(daemon, "embeddings.build", {})
    assert answer["result"]["enabled"] is True, answer
    line = await browser.wait_for(
        "(() => { const n = document.querySelector('#view-search .meaning-line');"
        " return n && !n.hidden && n.textContent.includes('(100%)') && n.textContent; })()",
        timeout=40,
        what="the status line at full coverage",
    )
    status = daemon.get("/api/v1/embeddings")
    assert status["ready"] is True and status["model"].startswith("openai:hash@"), status
    assert line.startswith(f"Search by meaning: backend openai, model {status['model']}, ")
    assert f"{status['events']}/{status['events']} events (100%)" in line
    assert f"{status['chunks']:,} vectors" in line and "texts/s" in line
    await browser.wait_for(f"{OPTIONS}.every((o) => !o[1])", what="every mode enabled")
    assert await browser.eval(NOTE) == ""

    # Without a mode the daemon picks hybrid now; the menu says so and every hit its ranking.
    await browser.eval("location.hash = '#/search?q=greeting+in+japanese'")
    await browser.wait_for(
        "document.querySelector('#view-search .mode-select').value === 'hybrid'"
        " && document.querySelectorAll('#view-search .hit').length > 0",
        what="hybrid hits",
    )
    hybrid = await browser.eval(FOUND_BY)
    assert hybrid and set(hybrid) <= {"full-text", "semantic", "full-text + semantic"}
    assert "semantic" in " ".join(hybrid)
    api_hits = daemon.get("/api/v1/search?q=greeting+in+japanese&mode=hybrid&limit=40")["hits"]
    assert hybrid == [" + ".join(h["found_by"]) for h in api_hits]
    await browser.screenshot(shots / "search-hybrid.png")

    # Choosing a mode puts it in the address and asks again.
    await browser.eval(
        "(() => { const s = document.querySelector('#view-search .mode-select');"
        " s.value = 'semantic'; s.dispatchEvent(new Event('change')); })()"
    )
    await browser.wait_for("location.hash.includes('mode=semantic')", what="the mode in the address")
    semantic = await browser.wait_for(
        f"(() => {{ const f = {FOUND_BY}; return f.length && f.every((x) => x === 'semantic') && f; }})()",
        what="semantic hits",
    )
    assert len(semantic) == len(
        daemon.get("/api/v1/search?q=greeting+in+japanese&mode=semantic&limit=40")["hits"]
    )

    # The endpoint fails, and the index changes so that the daemon's embedder tries it.
    endpoint.behaviour = "error500"
    session = daemon.root / HOSTILE_DIR / f"{HOSTILE}.jsonl"
    with session.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(appended_line()) + "\n")
    topbar = await browser.wait_for(
        f"(() => {{ const t = {TOPBAR}; return t.startsWith('Embeddings failing · retry in') && t; }})()",
        timeout=40,
        what="the failure and its backoff in the top bar",
    )
    assert topbar.endswith(" s")
    title = await browser.eval("document.querySelector('.embed-progress').title")
    assert "500" in title and "retrying in" in title
    await browser.eval("location.hash = '#/search?q=greet'")
    await browser.wait_for(f"{OPTIONS}[1][1] === true", what="semantic disabled again")
    assert (await browser.eval(NOTE)).startswith("The model is failing: ")
    await browser.wait_for(
        "document.querySelectorAll('#view-search .hit').length > 0", what="full-text still answering"
    )
    assert await browser.eval("document.querySelector('#view-search .mode-select').value") == "phrase"
    assert set(await browser.eval(FOUND_BY)) == {"full-text"}
    health = daemon.get("/api/v1/health")["embeddings"]
    assert health["state"] == "error" and health["retry_in"] > 0
    await browser.screenshot(shots / "search-meaning-failing.png")
    assert unexpected(browser.errors) == []
