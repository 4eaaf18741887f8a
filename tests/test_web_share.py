"""The viewer's Export row in headless Chromium: a click downloads the session as Markdown,
HTML or JSON from the API's export endpoint (the same document `agtail export` writes, secrets
masked), signed in by the viewer's cookie; "hide home and user name" adds redact_paths.

Over agtaild's own API application and the real service on the sample corpus.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.app import create_app
from agtaild.api.security import Security
from agtaild.config import Config, RootSpec
from agtaild.query.methods import METHODS
from agtaild.query.service import Service
from agtaild.share.export import export
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

REPO = Path(__file__).resolve().parent.parent
CLAUDE = REPO / "tests/corpus/real/claude-2.1.197/projects"
BASIC = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
TOKEN = "share-token-" + "y" * 40


@pytest.fixture
def service(tmp_path: Path) -> Service:
    svc = Service(Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("claude-code", str(CLAUDE))], archive=False))
    svc.update_index()
    yield svc
    svc.close()


async def download(browser: Browser, folder: Path, selector: str) -> Path:
    """Click ``selector`` and wait for the file Chromium saves in ``folder``."""
    done = asyncio.get_running_loop().create_future()
    begun: dict[str, str] = {}
    observe = browser._observe

    def watching(method: str, params: dict[str, Any]) -> None:
        if method == "Browser.downloadWillBegin":
            begun[params["guid"]] = params["suggestedFilename"]
        elif method == "Browser.downloadProgress" and params.get("state") in ("completed", "canceled") and not done.done():
            done.set_result(params)
        observe(method, params)

    browser._observe = watching
    try:
        await browser.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder), "eventsEnabled": True}, browser=True)
        await browser.click(selector)
        result = await asyncio.wait_for(done, 30)
    finally:
        browser._observe = observe
    assert result["state"] == "completed", result
    return folder / begun[result["guid"]]


async def test_the_export_row_downloads_each_format(service: Service, aiohttp_server: Any, browser: Browser, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/tmp/rt/claude/home")  # the recording's home: what redact_paths hides
    server = await aiohttp_server(create_app(service, methods=METHODS, security=Security(TOKEN), readers=2), host="127.0.0.1")
    base = f"http://127.0.0.1:{server.port}"
    await browser.goto(f"{base}/login?token={TOKEN}")
    await browser.wait_for("location.pathname === '/' && !!window.agtail", what="the viewer after login")
    await browser.eval(f"location.hash = {json.dumps('#/session/claude-code/' + BASIC[:8])}")
    labels = await browser.wait_for("(() => { const l = [...document.querySelectorAll('.export .export-link')].map((a) => a.textContent); return l.length && l; })()",
                                    what="the export row")  # fmt: skip
    assert labels == ["Markdown", "HTML", "JSON"]
    href = await browser.eval("document.querySelector('.export a[data-format=md]').href")
    assert href == f"{base}/api/v1/sessions/claude-code/{BASIC}/export?format=md"  # the whole id, not the route's prefix

    for fmt in ("md", "html", "json"):
        folder = tmp_path / f"dl-{fmt}"
        folder.mkdir()
        saved = await download(browser, folder, f".export a[data-format={fmt}]")
        assert saved.name == f"claude-code-{BASIC}.{fmt}"
        expected = io.StringIO()
        export(service.call, "claude-code", BASIC, fmt, expected)
        assert saved.read_text(encoding="utf-8") == expected.getvalue()
        assert "/tmp/rt/claude/home/src/demo-app" in expected.getvalue()

    # the page stayed where it was: a download, not a navigation
    assert await browser.eval("location.hash") == "#/session/claude-code/" + BASIC[:8]
    await browser.click(".export .export-redact")
    assert (await browser.eval("document.querySelector('.export a[data-format=html]').href")).endswith("?format=html&redact_paths=true")
    folder = tmp_path / "dl-redacted"
    folder.mkdir()
    saved = await download(browser, folder, ".export a[data-format=md]")
    expected = io.StringIO()
    export(service.call, "claude-code", BASIC, "md", expected, redact_paths=True)
    assert saved.read_text(encoding="utf-8") == expected.getvalue()
    assert "/tmp/rt/claude/home" not in expected.getvalue() and "~/src/demo-app" in expected.getvalue()
    assert browser.errors == []
