"""The first minute of a new install: the index fills newest first and is readable while it
does; /health carries the running update's progress; `agtail index` draws a bar on a terminal
and nothing on a pipe."""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.hub import ChangeHub
from agtaild.cli.progress import ProgressBar, line
from agtaild.daemon import main as daemon
from agtaild.index import readers, update
from agtaild.index.progress import IndexProgress
from agtaild.query.service import Service
from tests.conftest import CORPUS
from tests.index_toy import ToyAdapter, sample_lines, toy_config, toy_registry, write_session
from tests.web_cdp import Browser, chromium_available

__all__ = ["toy_registry"]  # the fixture

PROGRESS_KEYS = {
    "kind",
    "phase",
    "files_done",
    "files_total",
    "bytes_done",
    "bytes_total",
    "rate_bytes_per_second",
    "eta_seconds",
    "elapsed_seconds",
    "started",
}


def toy_sessions(root: Path, n: int) -> list[Path]:
    """``n`` toy sessions, s000 the oldest file and s{n-1} the newest (by mtime)."""
    return [write_session(root / f"s{i:03d}.jsonl", sample_lines(f"s{i:03d}", 2)) for i in range(n)]


# -- newest first, readable early ----------------------------------------------------------


def test_update_reads_newest_first_and_commits_the_first_page_early(
    tmp_path: Path, toy_registry: ToyAdapter
) -> None:
    n = update.FIRST_PAGE + 30
    toy_sessions(tmp_path / "root", n)
    svc = Service(toy_config(tmp_path, tmp_path / "root"))
    seen_mid_update: list[list[str]] = []

    def progress(p: IndexProgress) -> None:
        # The update is still running (its thread is here): what can a reader see?
        if p.phase == "reading" and p.files_done == update.FIRST_PAGE + 1:
            page = svc.call("sessions.list", {"limit": update.FIRST_PAGE})
            seen_mid_update.append([s["id"] for s in page["sessions"]])

    try:
        report = svc.update_index(progress=progress)
    finally:
        svc.close()
    newest = [f"s{i:03d}" for i in range(n - 1, n - 1 - update.FIRST_PAGE, -1)]
    # Read newest file first...
    assert [c["id"] for c in report["changed"]] == [f"s{i:03d}" for i in range(n - 1, -1, -1)]
    # ...and the first page was committed (visible to another connection) mid-update.
    assert len(seen_mid_update) == 1
    assert sorted(seen_mid_update[0]) == sorted(newest)


def test_head_start_takes_small_units_in_order_and_leaves_big_ones_to_the_pool() -> None:
    def job(name: str, cost: int) -> Any:
        return (name, None, cost)

    small, big = 1000, readers.HEAD_BYTES  # big: more than a quarter of the head's budget
    jobs = [job("big-newest", big), *(job(f"s{i}", small) for i in range(readers.HEAD_UNITS + 5))]
    head, rest = readers.head_start(jobs)
    assert [j[0] for j in head] == [f"s{i}" for i in range(readers.HEAD_UNITS - 1)]
    assert [j[0] for j in rest] == [
        "big-newest",
        *(f"s{i}" for i in range(readers.HEAD_UNITS - 1, readers.HEAD_UNITS + 5)),
    ]
    # The byte budget bounds the head too.
    quarter = readers.HEAD_BYTES // 4
    head, rest = readers.head_start([job(f"q{i}", quarter) for i in range(6)])
    assert [j[0] for j in head] == ["q0", "q1", "q2", "q3"]
    assert [j[0] for j in rest] == ["q4", "q5"]


# -- /health progress ----------------------------------------------------------------------


async def test_health_carries_progress_while_the_daemon_indexes(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon's own /health wiring (daemon.local_parts) over a slow adapter."""
    paths = toy_sessions(tmp_path / "root", 12)
    total_bytes = sum(p.stat().st_size for p in paths)
    real_prepare = readers.prepare

    def slow_prepare(job: Any) -> Any:
        time.sleep(0.08)
        return real_prepare(job)

    monkeypatch.setattr(readers, "prepare", slow_prepare)
    args = daemon.build_parser().parse_args(["--watch", "off"])
    config = toy_config(tmp_path, tmp_path / "root")
    service, _methods, _update, health, background = await daemon.local_parts(args, config, ChangeHub(), {})
    assert health()["progress"] is None  # nothing runs yet
    life = background(None)  # the daemon's start-up: watcher, then the writer's first scan
    await life.__anext__()
    try:
        seen: list[dict[str, Any]] = []
        async with asyncio.timeout(30):
            while True:
                progress = health()["progress"]
                if progress is not None:
                    seen.append(progress)
                elif seen and health()["index"]["updates"] >= 1:
                    break
                await asyncio.sleep(0.02)
        reading = [p for p in seen if p["phase"] == "reading" and 0 < p["files_done"] < p["files_total"]]
        assert reading, seen
        p = reading[-1]
        assert set(p) == PROGRESS_KEYS
        assert p["kind"] == "update"
        assert p["files_total"] == 12
        assert p["bytes_total"] == total_bytes
        assert 0 < p["bytes_done"] < total_bytes
        assert p["elapsed_seconds"] > 0
        # Rate and ETA once the reading has run long enough to measure them.
        timed = [q for q in reading if q["rate_bytes_per_second"] is not None]
        assert timed, reading
        assert timed[-1]["rate_bytes_per_second"] > 0 and timed[-1]["eta_seconds"] >= 0
        # Progress only moves forward.
        done = [q["bytes_done"] for q in seen if q["phase"] == "reading"]
        assert done == sorted(done)
        assert health()["progress"] is None  # idle again
        assert health()["index"]["last_report"]["sessions"] == 12
    finally:
        with pytest.raises(StopAsyncIteration):
            await life.__anext__()
        await asyncio.to_thread(service.close)


def test_progress_snapshot_phases() -> None:
    p = IndexProgress("rebuild")
    s = p.snapshot()
    assert s["phase"] == "scanning" and s["eta_seconds"] is None and s["rate_bytes_per_second"] is None
    p.reading(4, 4000)
    p._reading_since = time.monotonic() - 2.0  # as if two seconds of reading had passed
    p.stored(1000)
    s = p.snapshot()
    assert (s["files_done"], s["bytes_done"], s["kind"]) == (1, 1000, "rebuild")
    assert 400 <= s["rate_bytes_per_second"] <= 500
    assert 6.0 <= s["eta_seconds"] <= 7.5  # 3000 bytes left at ~500 B/s
    p.finishing()
    assert p.snapshot()["eta_seconds"] == 0.0


# -- the CLI's bar -------------------------------------------------------------------------


def test_bar_line_fits_the_width_and_names_the_phase() -> None:
    doc = IndexProgress().snapshot()
    assert line("indexing", doc, 80) == "indexing: scanning the agents' files…"
    doc.update(phase="reading", files_done=3, files_total=10, bytes_done=5_000_000, bytes_total=20_000_000,
               rate_bytes_per_second=2_500_000, eta_seconds=6.0)  # fmt: skip
    text = line("indexing", doc, 120)
    assert text.startswith("indexing [#######.......................]  25% 3/10 files · 5.0/20.0 MB")
    assert text.endswith("2.5 MB/s · 6 s left")
    for width in (10, 40, 79):
        assert len(line("indexing", doc, width)) <= width
    doc.update(phase="finishing")
    assert line("reindexing", doc, 120).endswith("finishing…")


def test_bar_draws_through_the_sanitiser_only_with_trusted_sequences(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """What reaches the terminal: agtail's own CR + erase-line, and a label whose control
    characters are shown, not obeyed (the bar text goes through textsafe like any other)."""
    from agtaild.textsafe import SafeStream

    monkeypatch.setattr(sys, "stderr", SafeStream(sys.__stderr__))  # type: ignore[arg-type]
    bar = ProgressBar("idx\x1b[2J")
    bar.enabled = True
    tracker = IndexProgress()
    bar(tracker)
    bar.close()
    err = capfd.readouterr().err
    assert err.count("\r\x1b[K") == 2
    assert "\x1b[2J" not in err and "idx␛[2J" in err


def run_index_on(stderr_is_pty: bool, tmp_path: Path) -> bytes:
    """`agtail --no-daemon index` over the sample corpus; what its stderr received."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "COLUMNS": "100"}
    env.pop("AGTAIL_DATA_DIR", None)
    argv = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())", "--no-daemon", "--data-dir", str(tmp_path / "data"),
            "--only-roots", "--root", f"claude-code={CORPUS / 'real' / 'claude-2.1.197' / 'projects'}",
            "--root", f"codex={CORPUS / 'real' / 'codex-0.171.0' / 'sessions'}", "index"]  # fmt: skip
    if not stderr_is_pty:
        proc = subprocess.run(argv, capture_output=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert b"sessions" in proc.stdout
        return proc.stderr
    master, slave = pty.openpty()
    try:
        proc2 = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, env=env)
        os.close(slave)
        got = b""
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            got += chunk
        out, _ = proc2.communicate(timeout=120)
        assert proc2.returncode == 0, got
        assert b"sessions" in out
        return got
    finally:
        os.close(master)


def test_index_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    got = run_index_on(True, tmp_path)
    assert b"\r\x1b[K" in got  # drawn in place, and erased at the end
    assert b"indexing: scanning the agents' files" in got
    assert b" files \xc2\xb7 " in got  # the reading line: "N/M files · …"
    assert got.endswith(b"\r\x1b[K")  # nothing left on the line for the summary


def test_index_is_silent_on_a_pipe(tmp_path: Path) -> None:
    assert run_index_on(False, tmp_path) == b""


def test_daemon_update_draws_from_health(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a daemon, `agtail index` draws the bar from /health while its call waits."""
    from agtaild.cli import query

    steps = [
        {"phase": "scanning"},
        {"phase": "reading", "files_done": 1, "files_total": 2, "bytes_done": 5, "bytes_total": 10},
    ]

    class SlowBackend:
        def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            assert method == "index.update"
            time.sleep(0.7)
            return {"sessions": 2}

    class Watcher:
        def health(self, *, timeout: float | None = None) -> dict[str, Any]:
            return {"progress": steps[0] if len(shown) < 1 else steps[1]}

        def close(self) -> None:
            pass

    shown: list[Any] = []

    class Bar:
        def show(self, doc: Any) -> None:
            shown.append(doc)

    import agtail_client

    monkeypatch.setattr(agtail_client.Client, "discover", classmethod(lambda cls, data_dir: Watcher()))
    ctx = argparse.Namespace(args=argparse.Namespace(full=False), resolved_data_dir="/nonexistent")
    assert query._daemon_update(ctx, SlowBackend(), Bar()) == {"sessions": 2}
    assert shown[0] == steps[0] and steps[1] in shown


# -- the viewer ----------------------------------------------------------------------------


@pytest.mark.skipif(not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium")
async def test_viewer_shows_index_progress_in_the_top_bar(aiohttp_server: Any, browser: Browser) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from tests.test_web_browser import METHODS, TOKEN, FakeService, login

    progress: list[dict[str, Any] | None] = [
        {
            **IndexProgress().snapshot(),
            "phase": "reading",
            "files_done": 3,
            "files_total": 10,
            "bytes_done": 5_000_000,
            "bytes_total": 20_000_000,
            "eta_seconds": 6.2,
        }
    ]
    app = create_app(
        FakeService(),
        methods=METHODS,
        security=Security(TOKEN),
        hub=ChangeHub(),
        readers=2,
        health=lambda: {"progress": progress[0]},
    )
    server = await aiohttp_server(app, host="127.0.0.1")
    await login(browser, argparse.Namespace(url=lambda path="/": f"http://127.0.0.1:{server.port}{path}"))
    text = await browser.wait_for(
        "(() => { const n = document.querySelector('.topbar .index-progress');"
        " return n && !n.hidden && n.textContent; })()",
        what="the progress line",
    )
    assert text == "Indexing 3/10 · 5.0/20.0 MB · 6 s left"
    width = await browser.eval("document.querySelector('.index-progress-fill').style.width")
    assert width == "25%"
    progress[0] = None  # the update ended: the next poll (1 s) hides it
    await browser.wait_for(
        "document.querySelector('.topbar .index-progress').hidden", what="hidden when idle"
    )
    assert browser.errors == []


async def test_the_first_scan_waits_until_the_daemon_serves() -> None:
    """The daemon answers before its first (on a new install, long) scan takes the writer."""
    from agtaild.daemon.scheduler import IndexWriter
    from tests.daemon_fakes import FakeService

    service = FakeService()
    writer = IndexWriter(service, ChangeHub())
    serving = asyncio.Event()
    writer.start(after=serving)
    writer.note(["/somewhere/a.jsonl"])  # a watcher event meanwhile does not start it either
    await asyncio.sleep(0.3)
    assert service.updates == []
    serving.set()
    async with asyncio.timeout(10):
        while not service.updates:
            await asyncio.sleep(0.01)
    assert service.updates[0] == {"full": False, "only_paths": None}  # the scan of every root
    await writer.stop()


async def test_a_writer_that_never_served_stops() -> None:
    from agtaild.daemon.scheduler import IndexWriter
    from tests.daemon_fakes import FakeService

    service = FakeService()
    writer = IndexWriter(service, ChangeHub())
    writer.start(after=asyncio.Event())  # never set: the daemon failed to bind
    async with asyncio.timeout(10):
        await writer.stop()
    assert service.updates == []


async def test_the_first_scan_waits_for_the_sockets_then_the_watchers_and_runs_if_watching_fails(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """daemon.local_parts: the watchers are armed once the daemon serves (answering does not
    wait for them) and before the first scan; a watcher that cannot start is logged, and the
    first scan runs all the same."""
    from agtaild.daemon import watcher as watch

    toy_sessions(tmp_path / "root", 3)
    order: list[str] = []

    def failing_start(self: Any) -> None:
        order.append("watch")
        raise RuntimeError("no watching today")

    monkeypatch.setattr(watch.Watcher, "start", failing_start)
    args = daemon.build_parser().parse_args(["--watch", "auto"])
    config = toy_config(tmp_path, tmp_path / "root")
    serving = asyncio.Event()
    service, _methods, _update, health, background = await daemon.local_parts(args, config, ChangeHub(), {}, serving)
    life = background(None)
    await life.__anext__()
    try:
        await asyncio.sleep(0.3)
        assert order == [] and health()["index"]["updates"] == 0  # not serving yet: nothing armed or read
        order.append("serving")
        serving.set()
        async with asyncio.timeout(30):
            while health()["index"]["updates"] < 1:
                await asyncio.sleep(0.02)
        assert order == ["serving", "watch"]
        assert health()["index"]["last_report"]["sessions"] == 3
    finally:
        with pytest.raises(StopAsyncIteration):
            await life.__anext__()
        service.close()
