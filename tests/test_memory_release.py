"""After a big update the daemon gives memory back (agtaild.index.memory): the writer thread
releases once an update read at least BIG_UPDATE_BYTES, and never after a small one; a
released service answers as before."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from agtaild.api.hub import ChangeHub
from agtaild.config import load_config
from agtaild.daemon.scheduler import IndexWriter
from agtaild.index.memory import BIG_UPDATE_BYTES
from agtaild.index.progress import IndexProgress
from agtaild.query.service import Service
from tests.conftest import CORPUS
from tests.daemon_fakes import FakeService


class SizedUpdates(FakeService):
    """Each update reports reading ``sizes[i]`` bytes through its progress tracker."""

    def __init__(self, sizes: list[int]) -> None:
        super().__init__()
        self.sizes = sizes
        self.released = 0

    def update_index(
        self, *, full: bool = False, only_paths: Any = None, progress: Any = None
    ) -> dict[str, Any]:
        tracker = IndexProgress()
        size = self.sizes[min(len(self.updates), len(self.sizes) - 1)]
        tracker.reading(1, size)
        if progress is not None:
            progress(tracker)
        return super().update_index(full=full, only_paths=only_paths, progress=progress)

    def release_memory(self) -> bool:
        self.released += 1
        return True


async def test_the_writer_releases_after_a_big_update_only() -> None:
    service = SizedUpdates([BIG_UPDATE_BYTES, 10_000, BIG_UPDATE_BYTES - 1])
    writer = IndexWriter(service, ChangeHub())
    serving = asyncio.Event()
    serving.set()
    writer.start(after=serving)
    async with asyncio.timeout(10):
        while not service.updates:
            await asyncio.sleep(0.01)
    assert service.released == 1  # the first scan read BIG_UPDATE_BYTES
    async with asyncio.timeout(10):
        await writer.request()  # 10 kB
        await writer.request()  # one byte short
    assert len(service.updates) == 3 and service.released == 1
    await writer.stop()


def test_a_released_service_answers_as_before(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "real" / "claude-2.1.197" / "projects", tmp_path / "claude")
    config = load_config(
        data_dir=str(tmp_path / "data"), only_roots=True, root_options=[f"claude-code={tmp_path / 'claude'}"]
    )
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        asks = [("search", {"q": "the"}), ("stats", {"by": "day"}), ("sessions.list", {"limit": 5})]
        before = [svc.call(m, p) for m, p in asks]
        assert isinstance(svc.release_memory(), bool)
        assert [svc.call(m, p) for m, p in asks] == before
        svc.update_index()  # and the writer still writes
    finally:
        svc.close()


def test_the_helper_processes_stop_and_start_again_for_the_next_pool() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import forkserver

    from agtaild.index import memory

    ctx = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        first = pool.submit(abs, -1).result()
    assert forkserver._forkserver._forkserver_pid is not None
    memory.stop_helpers()
    assert forkserver._forkserver._forkserver_pid is None
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        assert pool.submit(abs, -2).result() == 2 and first == 1


class PendingSecrets(SizedUpdates):
    """A big first update that leaves its secrets pass to the writer: three steps of it."""

    def __init__(self) -> None:
        super().__init__([BIG_UPDATE_BYTES, 10_000])
        self.steps = [5, 2, 0]  # what is left after each step
        self.released_at: list[int] = []

    def update_index(
        self, *, full: bool = False, only_paths: Any = None, progress: Any = None
    ) -> dict[str, Any]:
        report = super().update_index(full=full, only_paths=only_paths, progress=progress)
        if len(self.updates) == 1:
            report["secrets"] = {"scanned": 0, "findings": 0, "pending": 8}
        return report

    def scan_secrets(self, *, max_seconds: float | None = None) -> dict[str, Any]:
        return {"scanned": 3, "findings": 0, "pending": self.steps.pop(0)}

    def release_memory(self) -> bool:
        self.released_at.append(len(self.steps))
        return super().release_memory()


async def test_the_writer_releases_again_when_the_secrets_pass_of_a_big_update_ends() -> None:
    service = PendingSecrets()
    writer = IndexWriter(service, ChangeHub())
    serving = asyncio.Event()
    serving.set()
    writer.start(after=serving)
    async with asyncio.timeout(10):
        while service.steps:
            await asyncio.sleep(0.01)
        while len(service.released_at) < 2:
            await asyncio.sleep(0.01)
    # Once after the update (three steps to go), once when the last step left nothing pending.
    assert service.released_at == [3, 0]
    async with asyncio.timeout(10):
        await writer.request()  # a small update, no pass pending: no release
    assert service.released_at == [3, 0] and writer.status()["secrets"]["pending"] == 0
    await writer.stop()


class Marker:
    """Something a report carries, to see whether anything still holds the report."""


class MarkedReports(FakeService):
    def __init__(self) -> None:
        super().__init__()
        self.markers: list[Any] = []

    def update_index(
        self, *, full: bool = False, only_paths: Any = None, progress: Any = None
    ) -> dict[str, Any]:
        import weakref

        report = super().update_index(full=full, only_paths=only_paths, progress=progress)
        marker = Marker()
        self.markers.append(weakref.ref(marker))
        # What a report holds per session it read (here one, with the marker riding along).
        report["changed"] = [
            {"agent": "toy", "id": "s1", "path": "/toy/s1", "action": "added", "marker": marker}
        ]
        return report


async def test_the_writer_keeps_no_scan_report_once_it_is_handed_out() -> None:
    import gc

    service = MarkedReports()
    writer = IndexWriter(service, ChangeHub())
    serving = asyncio.Event()
    serving.set()
    writer.start(after=serving)
    async with asyncio.timeout(10):
        while not service.updates:
            await asyncio.sleep(0.01)
        report = await writer.request()  # a scan someone waits for gets the whole report
    assert isinstance(report["changed"][0]["marker"], Marker)
    del report
    await asyncio.sleep(0.05)  # the writer is idle again, waiting for the next change
    gc.collect()
    assert len(service.markers) == 2 and all(ref() is None for ref in service.markers)
    await writer.stop()
