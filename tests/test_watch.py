"""The watcher (watchdog → asyncio, polling fallback, roots that appear later) and the one
writer (debounce per path, batching, full scans, shutdown that finishes the update in flight)."""

from __future__ import annotations

import asyncio
import errno
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers import Observer

from agtaild.api.hub import ChangeHub
from agtaild.daemon import watcher as watch
from agtaild.daemon.scheduler import IndexWriter, expand_dirs
from agtaild.daemon.watcher import Watcher, _outermost
from tests.daemon_fakes import FakeService


class Sink:
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.gone: set[str] = set()
        self.event = asyncio.Event()

    def __call__(self, paths: set[str], gone: set[str]) -> None:
        self.paths |= paths
        self.gone |= gone
        self.event.set()

    async def wait_for(self, path: Path, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while str(path) not in self.paths:
                self.event.clear()
                await self.event.wait()


@pytest.fixture
async def started() -> Any:
    watchers: list[Watcher] = []

    async def start(w: Watcher) -> Watcher:
        watchers.append(w)
        await asyncio.to_thread(w.start)
        return w

    yield start
    for w in watchers:
        await asyncio.to_thread(w.stop)


async def test_native_watch_reports_appends_creates_and_deletes(tmp_path: Path, started: Any) -> None:
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    sink = Sink()
    w = await started(Watcher([("claude-code", str(root))], sink, asyncio.get_running_loop()))
    assert w.status()["mode"] == "native"
    f = root / "p" / "s.jsonl"
    f.write_text('{"a": 1}\n')
    await sink.wait_for(f)
    sink.paths.clear()
    with f.open("a") as fh:
        fh.write('{"b": 2}\n')
    await sink.wait_for(f)
    sink.paths.clear()
    new_dir = root / "q" / "deep"
    new_dir.mkdir(parents=True)
    g = new_dir / "t.jsonl"
    g.write_text("{}\n")
    await sink.wait_for(g)
    sink.paths.clear()
    f.unlink()
    await sink.wait_for(f)


async def test_reading_a_file_wakes_nobody(tmp_path: Path, started: Any) -> None:
    (tmp_path / "s.jsonl").write_text("{}\n")
    sink = Sink()
    await started(Watcher([("codex", str(tmp_path))], sink, asyncio.get_running_loop()))
    for _ in range(5):
        (tmp_path / "s.jsonl").read_bytes()
    await asyncio.sleep(0.3)
    assert sink.paths == set()


async def test_a_file_root_is_watched_through_its_directory(tmp_path: Path, started: Any) -> None:
    db = tmp_path / "opencode.db"
    db.write_bytes(b"x")
    sink = Sink()
    await started(Watcher([("opencode", str(db))], sink, asyncio.get_running_loop()))
    (tmp_path / "unrelated.txt").write_text("nope")
    (tmp_path / "opencode.db-wal").write_bytes(b"wal")
    await sink.wait_for(tmp_path / "opencode.db-wal")
    assert str(tmp_path / "unrelated.txt") not in sink.paths


async def test_a_vanished_directory_is_reported(tmp_path: Path, started: Any) -> None:
    d = tmp_path / "proj"
    d.mkdir()
    sink = Sink()
    await started(Watcher([("claude-code", str(tmp_path))], sink, asyncio.get_running_loop()))
    d.rename(tmp_path.parent / f"{tmp_path.name}-moved-away")
    async with asyncio.timeout(5):
        while str(d) not in sink.gone:
            sink.event.clear()
            await sink.event.wait()


async def test_missing_root_is_armed_when_it_appears(tmp_path: Path, started: Any) -> None:
    root = tmp_path / "later"
    sink = Sink()
    w = await started(Watcher([("codex", str(root))], sink, asyncio.get_running_loop()))
    assert w.status()["roots"][0]["mode"] == "missing"
    assert w.recheck() == []
    root.mkdir()
    assert w.recheck() == [str(root)]
    assert w.status()["roots"][0]["mode"] == "native"
    (root / "x.jsonl").write_text("{}\n")
    await sink.wait_for(root / "x.jsonl")


async def test_polling_mode_is_reported_and_still_sees_changes(tmp_path: Path, started: Any) -> None:
    sink = Sink()
    w = await started(Watcher([("codex", str(tmp_path))], sink, asyncio.get_running_loop(), mode="polling", poll_interval=0.2))
    st = w.status()
    assert st["mode"] == "polling" and "requested" in st["fallback_reason"]
    (tmp_path / "x.jsonl").write_text("{}\n")
    await sink.wait_for(tmp_path / "x.jsonl")


class _LimitedObserver(Observer):  # type: ignore[misc,valid-type]
    """A native observer that hits the inotify watch limit on start."""

    def start(self) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


async def test_watch_limit_falls_back_to_polling_and_says_so(tmp_path: Path, started: Any) -> None:
    sink = Sink()
    w = await started(
        Watcher([("codex", str(tmp_path))], sink, asyncio.get_running_loop(), poll_interval=0.2, native_observer=_LimitedObserver)
    )
    st = w.status()
    assert st["mode"] == "polling"
    assert "max_user_watches" in st["fallback_reason"]
    (tmp_path / "y.jsonl").write_text("{}\n")
    await sink.wait_for(tmp_path / "y.jsonl")


async def test_silently_missing_watches_below_the_root_fall_back(tmp_path: Path, started: Any, monkeypatch: Any) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.setattr(watch, "_watched_dirs", lambda observer: 1)  # watchdog dropped the rest
    w = await started(Watcher([("codex", str(tmp_path))], Sink(), asyncio.get_running_loop(), poll_interval=0.2))
    st = w.status()
    assert st["mode"] == "polling" and "1 of 3 directories" in st["fallback_reason"]


async def test_off_mode_watches_nothing(tmp_path: Path, started: Any) -> None:
    w = await started(Watcher([("codex", str(tmp_path))], Sink(), asyncio.get_running_loop(), mode="off"))
    assert w.status()["mode"] == "off" and w.roots[0].observer is None


def test_nested_roots_are_watched_once(tmp_path: Path) -> None:
    a, b = str(tmp_path / "data"), str(tmp_path / "data" / "imported" / "c1" / "codex")
    assert _outermost([("", a), ("codex", b), ("", a)]) == [("", a)]
    assert _outermost([("x", str(tmp_path / "ab")), ("y", str(tmp_path / "a"))]) == [
        ("x", str(tmp_path / "ab")),
        ("y", str(tmp_path / "a")),
    ]


# -- the writer --------------------------------------------------------------------------


@pytest.fixture
async def writer() -> Any:
    made: list[IndexWriter] = []

    def make(service: Any, **kw: Any) -> IndexWriter:
        kw.setdefault("debounce", 0.05)
        kw.setdefault("max_delay", 0.5)
        w = IndexWriter(service, ChangeHub(), **kw)
        w.start()
        made.append(w)
        return w

    yield make
    for w in made:
        await w.stop()


async def until(cond: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            await asyncio.sleep(0.01)


async def test_writer_scans_at_start_then_batches_debounced_paths(writer: Any) -> None:
    svc = FakeService()
    w = writer(svc)
    await until(lambda: len(svc.updates) == 1)
    assert svc.updates[0] == {"full": False, "only_paths": None}
    for i in range(1000):
        w.note({f"/nonexistent/{i}.jsonl"})
    for _ in range(5):
        w.note({"/nonexistent/0.jsonl"})
    await until(lambda: sum(len(u["only_paths"] or ()) for u in svc.updates) >= 1000)
    await asyncio.sleep(0.2)
    batches = [u["only_paths"] for u in svc.updates[1:]]
    assert len(batches) <= 2  # one transaction for the burst (two if a timer tick splits it)
    read = [p for b in batches for p in b]
    assert len(read) == len(set(read)) == 1000  # each path once, the repeated one too


async def test_a_path_that_never_goes_quiet_is_still_read(writer: Any) -> None:
    svc = FakeService()
    w = writer(svc, debounce=0.2, max_delay=0.4)
    await until(lambda: len(svc.updates) == 1)
    started = time.monotonic()
    while len(svc.updates) < 2 and time.monotonic() - started < 3:
        w.note({"/busy.jsonl"})
        await asyncio.sleep(0.05)
    assert len(svc.updates) >= 2 and svc.updates[1]["only_paths"] == ["/busy.jsonl"]
    assert time.monotonic() - started < 1.0


async def test_changes_are_published_and_index_update_waits_for_its_report(writer: Any) -> None:
    svc = FakeService()
    w = writer(svc)
    await until(lambda: len(svc.updates) == 1)
    svc.next_report = [{"agent": "codex", "id": "s1", "path": "/p", "action": "added"}]
    report = await w.request(full=True)
    assert svc.updates[-1] == {"full": True, "only_paths": None}
    assert report["changed"][0]["id"] == "s1"
    assert w.hub.last == 1 and w.hub.since(0)[0][0].action == "added"
    assert w.status()["last_report"]["changed"] == 1


async def test_a_vanished_directory_asks_for_a_scan(writer: Any) -> None:
    svc = FakeService()
    w = writer(svc)
    await until(lambda: len(svc.updates) == 1)
    w.note(set(), {"/gone/dir"})
    await until(lambda: len(svc.updates) == 2)
    assert svc.updates[1]["only_paths"] is None


async def test_periodic_rescan_and_tick(writer: Any) -> None:
    svc = FakeService()
    ticks: list[float] = []
    writer(svc, rescan_interval=0.2, on_tick=lambda: ticks.append(1) or [], tick_interval=0.1)
    await until(lambda: len(svc.updates) >= 3 and len(ticks) >= 2)
    assert all(u["only_paths"] is None for u in svc.updates)


async def test_a_failing_update_is_counted_and_the_writer_goes_on(writer: Any) -> None:
    class Flaky(FakeService):
        def update_index(self, **kw: Any) -> dict[str, Any]:
            if not self.updates:
                self.updates.append({"failed": True})
                raise RuntimeError("database is locked")
            return super().update_index(**kw)

    svc = Flaky()
    w = writer(svc)
    await until(lambda: w.errors == 1)
    assert "database is locked" in w.status()["last_error"]
    w.note({"/a.jsonl"})
    await until(lambda: len(svc.updates) == 2)


async def test_stop_finishes_the_update_in_flight() -> None:
    class Slow(FakeService):
        entered = threading.Event()
        finished = False

        def update_index(self, **kw: Any) -> dict[str, Any]:
            self.entered.set()
            time.sleep(0.3)
            report = super().update_index(**{**kw, "progress": None})
            self.finished = True
            return report

    svc = Slow()
    w = IndexWriter(svc, ChangeHub(), debounce=0.01)
    w.start()
    await asyncio.to_thread(svc.entered.wait, 5)
    await w.stop()
    assert svc.finished
    assert w.updates == 1


async def test_stop_cuts_a_long_update_short_through_progress() -> None:
    class Long(FakeService):
        entered = threading.Event()
        steps = 0

        def update_index(self, *, progress: Any = None, **kw: Any) -> dict[str, Any]:
            self.entered.set()
            for _ in range(500):
                time.sleep(0.01)
                self.steps += 1
                progress()
            return super().update_index(**kw)

    svc = Long()
    w = IndexWriter(svc, ChangeHub())
    w.start()
    await asyncio.to_thread(svc.entered.wait, 5)
    await w.stop()
    assert svc.steps < 400


def test_expand_dirs(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "a.jsonl").write_text("")
    (tmp_path / "d" / "e" / "b.jsonl").write_text("")
    out = expand_dirs([str(tmp_path / "d"), str(tmp_path / "gone.jsonl")])
    assert out == sorted([str(tmp_path / "d" / "a.jsonl"), str(tmp_path / "d" / "e" / "b.jsonl"), str(tmp_path / "gone.jsonl")])
