"""Reading in worker processes gives the same index as reading in-process (real adapters)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import agtaild.index.readers as readers
from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from tests.index_toy import snapshot


def build(tmp: Path, corpus: Path, name: str, workers: int) -> dict[str, object]:
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    config = Config(data_dir=str(tmp / name), roots=roots, archive=False)
    svc = Service(config, workers=workers)
    try:
        report = svc.update_index()
        assert report["errors"] == [] and report["sessions"] > 50
    finally:
        svc.close()
    return snapshot(config.index_path)


def test_worker_processes_build_the_same_index(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_process = build(tmp_path, corpus, "one", workers=1)
    monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)  # every update goes to the pool
    pooled = build(tmp_path, corpus, "pool", workers=2)
    assert pooled == in_process
    # The heap is frozen only while the workers are forked (agtaild.index.readers.ReadingPool._read_in_pool).
    assert gc.get_freeze_count() == 0


def test_small_units_travel_in_batches_in_order_and_big_ones_alone() -> None:
    def item(name: str, cost: int) -> tuple[object, object, int]:
        return (name, None, cost)

    mb = readers.BATCH_BYTES
    jobs = [item("a", mb // 4), item("b", mb // 4), item("c", mb // 2), item("d", 1), item("big", 3 * mb)]
    jobs += [item(f"s{i}", 0) for i in range(readers.BATCH_UNITS + 1)]
    got = [[name for name, _, _ in batch] for batch in readers.batches(jobs)]  # type: ignore[arg-type]
    assert got[0] == ["a", "b", "c"]  # exactly BATCH_BYTES
    assert got[1] == ["d"]  # the next one would pass the limit
    assert got[2] == ["big"]
    assert got[3] == [f"s{i}" for i in range(readers.BATCH_UNITS)]
    assert got[4] == [f"s{readers.BATCH_UNITS}"]
    assert [n for batch in got for n in batch] == [name for name, _, _ in jobs]


def test_one_unit_per_batch_builds_the_same_index(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)
    batched = build(tmp_path, corpus, "batched", workers=2)
    monkeypatch.setattr(readers, "BATCH_UNITS", 1)
    single = build(tmp_path, corpus, "single", workers=2)
    assert batched == single


def test_a_failed_batch_reports_each_of_its_units_and_indexing_goes_on(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agtaild.index.prepare as prepare_mod

    monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)
    monkeypatch.setattr(readers, "HEAD_UNITS", 0)  # every unit goes to the pool ...
    monkeypatch.setattr(readers, "BATCH_BYTES", 1 << 40)
    monkeypatch.setattr(readers, "BATCH_UNITS", 5)  # ... in batches of 5
    real = readers.decode_prepared_batch
    calls = {"n": 0}

    def flaky(raw: bytes) -> list[prepare_mod.Prepared]:
        calls["n"] += 1
        out = real(raw)
        if calls["n"] == 1:  # the first batch back: as if its worker had died
            raise RuntimeError("boom")
        return out

    monkeypatch.setattr(readers, "decode_prepared_batch", flaky)
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    config = Config(data_dir=str(tmp_path / "d"), roots=roots, archive=False)
    svc = Service(config, workers=2)
    try:
        report = svc.update_index()
    finally:
        svc.close()
    failed = [e for e in report["errors"] if "worker failed" in e["error"] and "boom" in e["error"]]
    assert len(failed) == 5  # every unit of the batch, and only those
    assert report["sessions"] > 0 and report["read"] == report["sessions"] + len(failed)


def test_a_result_that_cannot_be_sent_fails_only_its_own_unit(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agtaild.index.prepare as prepare_mod
    from agtaild.adapters import get_adapter
    from agtaild.index.timed import run_jobs

    adapter = get_adapter("claude-code")
    units = [
        u for root in sorted((corpus / "claude-code").glob("*/projects")) for u in adapter.discover(root)
    ][:3]
    jobs = [prepare_mod.Job("claude-code", u, None, "native", None, 1.0) for u in units]
    real = prepare_mod.prepare

    def lone_surrogate_in_the_second(job: prepare_mod.Job) -> prepare_mod.Prepared:
        prep = real(job)
        if job.unit.path == units[1].path:  # an adapter that let a lone surrogate through
            seq, kind, epoch, _text, *rest = prep.events[0]
            prep.events[0] = (seq, kind, epoch, "bad \ud800 text", *rest)  # type: ignore[assignment]
        return prep

    monkeypatch.setattr(prepare_mod, "prepare", lone_surrogate_in_the_second)
    got = prepare_mod.decode_prepared_batch(run_jobs(prepare_mod.encode_jobs(jobs)))
    assert [p.path for p in got] == [str(u.path) for u in units]
    assert got[1].error is not None and "could not be sent" in got[1].error and not got[1].rows
    for good in (got[0], got[2]):
        assert good.error is None and good.rows and good.events == []  # text columns sent as bytes
        assert all(isinstance(r[3], (bytes, type(None))) for r in good.rows)


EARLY_FORK = """
import json, multiprocessing, sys
from pathlib import Path
import agtaild.index.readers as readers
from agtaild.config import Config
from agtaild.index.discovery import Discovery
from agtaild.query.service import Service
sys.path.insert(0, sys.argv[3])
from tests.test_index_pool import build

seen = []
real = Discovery.candidates

def candidates(self, *args, **kwargs):
    seen.append(len(multiprocessing.active_children()))
    return real(self, *args, **kwargs)

Discovery.candidates = candidates
corpus, tmp = Path(sys.argv[1]), Path(sys.argv[2])
out = {}
readers.POOL_THRESHOLD_BYTES = 0
first = build(tmp, corpus, "pool", workers=2)
out["first"] = (seen[:], len(multiprocessing.active_children()))
out["same"] = first == build(tmp, corpus, "one", workers=1)
seen.clear()
svc = Service(Config(data_dir=str(tmp / "pool"), roots=[], archive=False), workers=2)
try:
    svc.update_index()
finally:
    svc.close()
out["later"] = seen[:]
seen.clear()
readers.POOL_THRESHOLD_BYTES = 1 << 40
build(tmp, corpus, "small", workers=2)
out["small"] = (seen[:], len(multiprocessing.active_children()))
print(json.dumps(out))
"""


def test_a_first_index_forks_its_workers_before_discovery(corpus: Path, tmp_path: Path) -> None:
    """Forked after discovery, a worker would start as big as the writer then is (every unit
    discovered): a first index forks them first. Later updates fork (when they need to) as
    before; a first index too small for the pool shuts it down unused. In a process of its own:
    the pool forks only where no other thread runs (this test process has the others' threads)."""
    import json
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, "-c", EARLY_FORK, str(corpus), str(tmp_path), str(repo)],
        capture_output=True, text=True, timeout=300, cwd=str(repo),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["first"] == [[2], 0]  # two workers alive at discovery, none left after
    assert out["same"] is True  # the same index as read in one process
    assert out["later"] == [0]  # not a first index: nothing forked before discovery
    assert out["small"] == [[2], 0]
