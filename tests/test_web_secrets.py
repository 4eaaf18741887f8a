"""The viewer's secrets: a badge on the sessions that hold secrets not allowlisted, the findings
page (what to rotate: one line per distinct secret, masked, where it appeared, newest first)
with its allowlist action — in headless Chromium on a real agtaild, over a Claude Code session
holding one planted secret of every rule (tests/secrets). Every response the page received is
read back from the browser: none holds a planted secret's bytes."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_sync_redact import claude_lines, forms, planted
from tests.test_web_daemon import BASIC, Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)
LEAKY = "5ec0e7a1-0000-4000-8000-00000000c0de"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-secrets"))
    try:
        d.start()
        folder = d.root / "-home-dev-src-app"
        folder.mkdir()
        (folder / f"{LEAKY}.jsonl").write_text("\n".join(claude_lines(planted().records)) + "\n")
        d.wait_indexed({BASIC, LEAKY})
        deadline = time.monotonic() + 60
        while d.get("/api/v1/secrets?limit=1")["pending"] or not d.get("/api/v1/secrets?limit=1")["secrets"]:
            assert time.monotonic() < deadline, "the secrets pass did not finish"
            time.sleep(0.2)
        yield d
    finally:
        d.stop()


def leaked(blobs: dict[str, bytes]) -> list[tuple[str, str]]:
    return [
        (p.family, url)
        for p in planted().planted
        for url, b in blobs.items()
        if any(f in b for f in forms(p.secret))
    ]


async def test_badge_findings_page_and_allowlist_never_send_a_secret(
    daemon: Daemon, browser: Browser, shots: Path
) -> None:
    await browser.record_network()
    await login(browser, daemon, "#/")
    await browser.wait_for(
        f"!!document.querySelector('.srow[data-id=\"{LEAKY}\"] .tag.secret')", what="the badge"
    )
    badge = await browser.text(f'.srow[data-id="{LEAKY}"] .tag.secret')
    total = daemon.get("/api/v1/secrets?limit=10000&places=0")["secrets"]
    assert badge == f"{len(total)} secrets" and len(total) > 100
    assert await browser.eval(f"!document.querySelector('.srow[data-id=\"{BASIC}\"] .tag.secret')")

    # The session page links to its secrets.
    await browser.eval(f"location.hash = '#/session/claude-code/{LEAKY}'")
    await browser.wait_for(
        "!!document.querySelector('#view-session .secrets-note a')", what="the session's link"
    )
    await browser.click("#view-session .secrets-note a")
    await browser.wait_for(
        "document.querySelectorAll('#view-secrets .secret-row').length > 0 && location.hash.includes('session=')",
        what="the session's secrets",
    )

    await browser.eval("location.hash = '#/secrets'")
    await browser.wait_for(
        f"document.querySelectorAll('#view-secrets .secret-row').length === {len(total)}",
        what="every secret, one line each",
    )
    rows = await browser.eval(
        "[...document.querySelectorAll('#view-secrets .secret-row')].map((r) => [r.dataset.fingerprint, r.querySelector('.masked').textContent])"
    )
    assert [r[0] for r in rows] == [s["fingerprint"] for s in total]  # newest first, as the API says
    assert all(m.startswith("«secret:") for _, m in rows)
    where = await browser.text("#view-secrets .secret-row .places")
    assert LEAKY[:8] in where
    await browser.screenshot(shots / "secrets-page.png", full_page=False)

    # Allowlist the first one: it leaves the list and the badge counts one fewer.
    first = rows[0][0]
    await browser.eval(
        f"document.querySelector('#view-secrets .secret-row[data-fingerprint=\"{first}\"] .allow-reason').value = 'revoked'"
    )
    await browser.click(f'#view-secrets .secret-row[data-fingerprint="{first}"] button.allow')
    await browser.wait_for(
        f"document.querySelectorAll('#view-secrets .secret-row').length === {len(total) - 1}",
        what="one line fewer",
    )
    listed = daemon.get("/api/v1/secrets?limit=10000&places=0&allowlisted=true")["secrets"]
    assert [s["allowlisted"] for s in listed if s["fingerprint"] == first] == [True]
    session = daemon.get(f"/api/v1/sessions/claude-code/{LEAKY}")["session"]
    assert session["secrets"] == len(total) - 1
    # Shown again with the allowlisted ones, and taken off the allowlist from there.
    await browser.click("#view-secrets .show-allowlisted")
    await browser.wait_for(
        f"!!document.querySelector('#view-secrets .secret-row.allowlisted[data-fingerprint=\"{first}\"]')",
        what="the allowlisted line",
    )
    await browser.click(f'#view-secrets .secret-row[data-fingerprint="{first}"] button.unallow')
    await browser.wait_for(
        "!document.querySelector('#view-secrets .secret-row.allowlisted')", what="no allowlisted line"
    )
    assert daemon.get(f"/api/v1/sessions/claude-code/{LEAKY}")["session"]["secrets"] == len(total)

    # Nothing the page received holds a secret: the API answers, the shell, the scripts.
    bodies = await browser.response_bodies()
    api = [u for u in bodies if "/api/v1/secrets" in u]
    assert api and all(bodies[u] for u in api)
    assert any(
        f"/sessions/claude-code/{LEAKY}/events" in u and bodies[u] for u in bodies
    )  # the transcript was read
    assert leaked(bodies) == []
    html = await browser.eval("document.documentElement.outerHTML")
    assert leaked({"dom": html.encode()}) == []
    assert unexpected(browser.errors) == []


def test_the_session_answer_says_how_many_secrets(daemon: Daemon) -> None:
    doc = daemon.get("/api/v1/sessions?limit=200")
    counts = {s["id"]: s.get("secrets") for s in doc["sessions"]}
    assert counts[LEAKY] and counts[BASIC] is None
    assert LEAKY in json.dumps(daemon.get("/api/v1/sessions?has_secret=true&limit=200"))
