#!/usr/bin/env python3
"""The viewer on a huge session, in headless Chromium: first screen, and opening a search hit deep
inside it. Measures what a person waits for, in the page itself (performance.now() from setting
the route to the frame after the target is on screen).

    python bench/make_huge_claude.py /tmp/huge/projects --mb 50
    python bench/viewer_huge.py /tmp/huge/projects --at 24000

Starts its own agtaild (temporary data dir, loopback port, only the given root) and Chromium
(/usr/bin/chromium). ``--pythonpath DIR`` runs agtaild from another checkout (e.g. an export of
an older commit, to measure the viewer before a change). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.web_cdp import Browser  # noqa: E402

MEASURE = """(() => {
  window.__took = null;
  const t0 = performance.now();
  const check = () => {
    if (%(cond)s) requestAnimationFrame(() => { window.__took = performance.now() - t0; });
    else requestAnimationFrame(check);
  };
  location.hash = %(hash)s;
  requestAnimationFrame(check);
})()"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_daemon(root: Path, work: Path, pythonpath: str | None) -> tuple[subprocess.Popen[bytes], str, str]:
    port = _port()
    data = work / "data"
    env = {**os.environ, "HOME": str(work / "home"), "XDG_RUNTIME_DIR": str(work / "run")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    (work / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(work / "agtaild.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agtaild.daemon", "--data-dir", str(data), "--socket", str(work / "run" / "s.sock"),
             "--listen", f"127.0.0.1:{port}", "--only-roots", "--root", f"claude-code={root}"],
            env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, cwd=pythonpath or None,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (data / "token").exists() or not (data / "agtaild.json").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"agtaild did not start: {(work / 'agtaild.log').read_text()}")
        time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}", (data / "token").read_text().strip()


def get(url: str, token: str) -> Any:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


async def measure(browser: Browser, url: str, hash_: str, cond: str, timeout: float = 120.0) -> float:
    """From setting the route on a freshly loaded viewer (nothing of the session in memory)."""
    # A blank page first, as when a person opens the viewer afresh. (Chromium keeps the page
    # it leaves in its back-forward cache; the viewer closes its live streams on pagehide, or
    # the cached pages' streams would take the six connections a host gets: bench/VIEWER.md.)
    await browser.goto("about:blank")
    measure.loads = getattr(measure, "loads", 0) + 1  # type: ignore[attr-defined]
    await browser.goto(f"{url}/?load={measure.loads}#/")  # type: ignore[attr-defined]
    await browser.wait_for("document.querySelectorAll('#view-sessions .srow').length > 0", timeout=60)
    await browser.eval(MEASURE % {"cond": cond, "hash": json.dumps(hash_)})
    took = await browser.wait_for("window.__took", timeout=timeout, what=hash_)
    slow = await browser.eval(
        "performance.getEntriesByType('resource').filter((e) => e.duration > 2000)"
        ".map((e) => [e.name.replace(location.origin, ''), Math.round(e.duration), Math.round(e.startTime)])"
    )
    SLOW.extend(slow)
    return round(float(took) / 1000.0, 3)


#: Requests of the measured pages that took over 2 s (url, ms, start ms): where a stall came from.
SLOW: list[Any] = []


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="agtail-viewer-bench-"))
    proc, url, token = start_daemon(args.root, work, args.pythonpath)
    browser = Browser()
    try:
        deadline = time.monotonic() + 300
        while True:
            sessions = get(f"{url}/api/v1/sessions?limit=5", token)["sessions"]
            if sessions:
                break
            if time.monotonic() > deadline:
                raise SystemExit("the session was not indexed")
            time.sleep(0.5)
        s = sessions[0]
        total: int | None = None
        try:
            page = get(
                f"{url}/api/v1/sessions/{s['agent']}/{s['id']}/events?before_seq=100000000&limit=1", token
            )
            total = page["events"][0]["seq"] + 1 if page.get("events") else 0
        except urllib.error.HTTPError:  # an agtaild from before before_seq
            pass
        await browser.start()
        await browser.goto(f"{url}/login?token={token}")
        await browser.wait_for("location.pathname === '/' && !!window.agtail", timeout=30)
        route = f"#/session/{s['agent']}/{s['id']}"
        first, jump = [], []
        for _ in range(args.repeat):
            first.append(
                await measure(browser, url, route, "document.querySelectorAll('.transcript .ev').length > 0")
            )
            target = f"document.querySelector('.ev.target')?.id === 'ev-{args.at}'"
            jump.append(await measure(browser, url, f"{route}?at={args.at}", target))
        in_dom = await browser.eval("document.querySelectorAll('.transcript .ev').length")
        # Scroll to the end of the window a few times: pages load, the DOM stays bounded.
        for _ in range(args.scrolls):
            await browser.eval("window.scrollTo(0, document.documentElement.scrollHeight)")
            await asyncio.sleep(0.4)
        after_scroll = await browser.eval("document.querySelectorAll('.transcript .ev').length")
        return {
            "session_bytes": os.path.getsize(s["path"]),
            "events": total,
            "target_seq": args.at,
            "first_screen_s": first,
            "first_screen_median_s": statistics.median(first),
            "jump_to_hit_s": jump,
            "jump_to_hit_median_s": statistics.median(jump),
            "events_in_dom_after_jump": in_dom,
            f"events_in_dom_after_{args.scrolls}_scrolls": after_scroll,
            "slow_requests": SLOW,
            "load": os.getloadavg(),
            "cpus": os.cpu_count(),
        }
    finally:
        await browser.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a Claude projects folder holding the huge session")
    parser.add_argument("--at", type=int, default=24000, help="the event a search hit opens (default 24000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scrolls", type=int, default=12)
    parser.add_argument("--pythonpath", help="run agtaild from this checkout instead")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
