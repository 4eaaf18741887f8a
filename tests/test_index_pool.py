"""Reading in worker processes gives the same index as reading in-process (real adapters)."""

from __future__ import annotations

from pathlib import Path

import pytest

import agtaild.index.update as update
from agtaild.config import Config, RootSpec
from agtaild.service import Service
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
    monkeypatch.setattr(update, "POOL_THRESHOLD_BYTES", 0)  # every update goes to the pool
    pooled = build(tmp_path, corpus, "pool", workers=2)
    assert pooled == in_process
