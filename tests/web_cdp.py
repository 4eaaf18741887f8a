"""A small headless-Chromium driver for the web viewer tests (Chrome DevTools Protocol).

Chromium is started with its own temporary profile and talks only to loopback; the driver
speaks CDP over aiohttp's websocket client (no selenium/playwright). It collects JavaScript
exceptions, console errors and CSP violations so a test can assert there were none.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = os.environ.get("AGTAIL_TEST_CHROMIUM", "/usr/bin/chromium")

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--hide-scrollbars",
]


def chromium_available() -> bool:
    return os.access(CHROMIUM, os.X_OK)


class CDPError(Exception):
    pass


class Browser:
    """One Chromium process and one page in it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.profile = tempfile.mkdtemp(prefix="agtail-chromium-")
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.session_id: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._waiters: list[tuple[str, asyncio.Future[dict[str, Any]]]] = []
        self._reader: asyncio.Task[None] | None = None
        self.errors: list[str] = []
        self.console: list[str] = []
        #: (request id, URL) of every response, once :meth:`record_network` was called
        self.responses: list[tuple[str, str]] = []

    async def start(self, width: int = 1280, height: int = 900) -> Browser:
        args = [
            CHROMIUM,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self.profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while True:
            if port_file.exists():
                lines = port_file.read_text().split("\n")
                if len(lines) >= 2 and lines[0].strip().isdigit():
                    break
            if self.proc.poll() is not None:
                raise CDPError(f"chromium exited with {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise CDPError("chromium did not open its DevTools port")
            await asyncio.sleep(0.05)
        port, path = int(lines[0]), lines[1].strip()
        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        target = await self.send("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True
        )
        self.session_id = attached["sessionId"]
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        await self.send("Log.enable")
        await self.set_viewport(width, height)
        return self

    async def set_viewport(self, width: int, height: int) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.http is not None:
            await self.http.close()
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    if "error" in data:
                        fut.set_exception(CDPError(str(data["error"])))
                    else:
                        fut.set_result(data.get("result", {}))
                continue
            method = data.get("method", "")
            params = data.get("params", {})
            self._observe(method, params)
            for waiter in list(self._waiters):
                name, fut = waiter
                if name == method and not fut.done():
                    fut.set_result(params)
                    self._waiters.remove(waiter)

    def _observe(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.responseReceived":
            self.responses.append((params.get("requestId", ""), params.get("response", {}).get("url", "")))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            exc = details.get("exception", {})
            self.errors.append("exception: " + str(exc.get("description") or details.get("text")))
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append(f"{params.get('type')}: {text}")
            if params.get("type") == "error":
                self.errors.append("console.error: " + text)
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            text = str(entry.get("text", ""))
            self.console.append(f"log {entry.get('level')}: {text}")
            if entry.get("level") == "error" or "Content Security Policy" in text:
                self.errors.append(f"log: {text} ({entry.get('url', '')})")

    async def send(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> Any:
        assert self.ws is not None
        msg_id = next(self._ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if not browser:
            msg["sessionId"] = self.session_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        await self.ws.send_str(json.dumps(msg))
        return await asyncio.wait_for(fut, 30)

    def _wait_event(self, method: str) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((method, fut))
        return fut

    async def record_network(self) -> None:
        """Record every response from now on (:attr:`responses`, :meth:`response_bodies`)."""
        await self.send("Network.enable", {"maxTotalBufferSize": 64 << 20, "maxResourceBufferSize": 16 << 20})

    async def response_bodies(self) -> dict[str, bytes]:
        """URL → body of every recorded response whose body the browser still holds (a stream
        that never ended has none: its URL maps to b"")."""
        import base64

        out: dict[str, bytes] = {}
        for request_id, url in self.responses:
            try:
                got = await self.send("Network.getResponseBody", {"requestId": request_id})
            except CDPError:
                out.setdefault(url, b"")
                continue
            body = got.get("body", "")
            data = base64.b64decode(body) if got.get("base64Encoded") else body.encode()
            out[url] = out.get(url, b"") + data
        return out

    async def goto(self, url: str, timeout: float = 20) -> None:
        loaded = self._wait_event("Page.loadEventFired")
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"navigation to {url} failed: {result['errorText']}")
        await asyncio.wait_for(loaded, timeout)

    async def eval(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in result:
            raise CDPError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 15, what: str = "") -> Any:
        """Poll a JavaScript expression until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        value: Any = None
        while time.monotonic() < deadline:
            value = await self.eval(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise AssertionError(
            f"timed out waiting for {what or expression}; last value {value!r}; errors {self.errors}"
        )

    async def text(self, selector: str = "body") -> str:
        return str(await self.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText || ''"))

    async def click(self, selector: str) -> None:
        ok = await self.eval(
            f"(() => {{ const n = document.querySelector({json.dumps(selector)}); if (!n) return false; n.click(); return true; }})()"
        )
        if not ok:
            raise AssertionError(f"nothing to click at {selector}")

    async def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = await self.send("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics.get("contentSize")
            width = int(metrics.get("cssLayoutViewport", {}).get("clientWidth", size["width"]))
            height = min(int(size["height"]), 6000)
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = await self.send("Page.captureScreenshot", params)
        path.write_bytes(base64.b64decode(data["data"]))
        return path
