"""kill -9 in the middle of indexing, then index again: the index is consistent and complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agtaild.query.service import Service
from tests.index_toy import (
    REPO_TESTS,
    ToyAdapter,
    append,
    sample_lines,
    snapshot,
    toy_config,
    toy_line,
    toy_registry,
    write_session,
)

__all__ = ["toy_registry"]

#: Indexes the toy corpus and SIGKILLs itself after the Nth unit has been applied.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    sys.path.insert(0, {repo!r})
    import agtaild.adapters as registry
    from tests.index_toy import ToyAdapter, toy_config
    registry.BUILTIN[:] = []
    registry.register(ToyAdapter())
    import agtaild.index.update as update
    update.COMMIT_SECONDS = {commit_seconds}
    update.CHECKPOINT_THREAD_BYTES = {checkpoint_thread_bytes}
    from pathlib import Path
    from agtaild.query.service import Service
    svc = Service(toy_config(Path({tmp!r}), Path({root!r})))

    def progress(tracker):
        if tracker.files_done == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)

    svc.update_index(full={full}, progress=progress)
    print("finished without being killed")
    """
)


def run_and_kill(
    tmp: Path,
    root: Path,
    *,
    kill_at: int,
    commit_seconds: float,
    full: bool = False,
    checkpoint_thread: bool = False,
) -> None:
    code = CHILD.format(
        checkpoint_thread_bytes=0 if checkpoint_thread else 1 << 40,
        tests=str(REPO_TESTS),
        repo=str(REPO_TESTS.parent),
        commit_seconds=commit_seconds,
        tmp=str(tmp),
        root=str(root),
        kill_at=kill_at,
        full=full,
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr


def make_corpus(root: Path, n: int = 8) -> list[Path]:
    return [write_session(root / f"p{i % 3}" / f"S{i}.jsonl", sample_lines(f"S{i}", 3 + i)) for i in range(n)]


def reference(tmp: Path, root: Path) -> dict[str, object]:
    other = tmp / "reference"
    other.mkdir()
    svc = Service(toy_config(other, root))
    try:
        svc.update_index()
    finally:
        svc.close()
    return snapshot(other / "data" / "index.sqlite3")


@pytest.mark.parametrize("checkpoint_thread", [False, True], ids=["", "checkpoint-thread"])
@pytest.mark.parametrize(
    ("kill_at", "commit_seconds"),
    [(1, 0.0), (4, 0.0), (7, 0.0), (5, 3600.0)],
    ids=["first-unit", "after-commits", "near-the-end", "mid-transaction"],
)
def test_kill_during_a_cold_index(
    tmp_path: Path, toy_registry: ToyAdapter, kill_at: int, commit_seconds: float, checkpoint_thread: bool
) -> None:
    """Also with the log checkpointed on a thread of its own after every commit (a big update's
    way: agtaild.index.checkpoints)."""
    root = tmp_path / "root"
    make_corpus(root)
    run_and_kill(
        tmp_path, root, kill_at=kill_at, commit_seconds=commit_seconds, checkpoint_thread=checkpoint_thread
    )
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
    finally:
        svc.close()
    assert snapshot(tmp_path / "data" / "index.sqlite3") == reference(tmp_path, root)


def test_kill_during_an_incremental_update_and_a_reindex(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    files = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    svc.update_index()
    svc.close()
    for f in files[:5]:
        append(
            f,
            [
                toy_line(t="result", id=f"{f.stem}-c0", output="late"),
                toy_line(t="msg", role="user", text=f"appended to {f.stem}", ts="2026-01-09T00:00:00Z"),
            ],
        )
    files[6].unlink()
    run_and_kill(tmp_path, root, kill_at=3, commit_seconds=0.0)
    run_and_kill(tmp_path, root, kill_at=2, commit_seconds=0.0, full=True)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
    finally:
        svc.close()
    assert snapshot(tmp_path / "data" / "index.sqlite3") == reference(tmp_path, root)
    assert os.path.exists(tmp_path / "data" / "index.sqlite3")
