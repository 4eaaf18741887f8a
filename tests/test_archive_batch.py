"""The archive's deferred durability and its mirror process.

A catalog row that is committed names bytes that are on disk: blobs written during an index
are fsynced together before the rows that name them commit, and a file is marked archived
only after that. Killed (SIGKILL) at any point of a batch, the archive verifies clean, every
catalogued file reads back byte-exact, and the next mirror stores what the batch lost.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agtaild.adapters import get_adapter
from agtaild.config import Config, load_config
from agtaild.query.service import Service
from agtaild.store.archive import catchup as archive_catchup
from agtaild.store.archive import durable
from agtaild.store.archive import mirror_proc as archive_proc
from agtaild.store.archive.archiver import Archiver, archiver_for, read_archived
from agtaild.store.archive.hook import after_read_hook
from agtaild.store.archive.view import verify_store

CLAUDE = "real/claude-2.1.197/projects"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def machine(tmp_path: Path, corpus: Path) -> tuple[Any, Path]:
    """A Claude Code root with a few dozen sessions (the corpus's, copied under new names)."""
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    for n, src in enumerate(sorted(native.glob("*/*.jsonl"))[:6]):
        for k in range(4):
            shutil.copy(src, src.with_name(f"copy{n}{k}-{src.name}"))
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    return config, native


def units(native: Path) -> list[Any]:
    return list(get_adapter("claude-code").discover(native))


def files(native: Path) -> dict[str, bytes]:
    return {f"claude-code/{p.relative_to(native)}": p.read_bytes() for p in native.rglob("*") if p.is_file()}


def marked(config: Any) -> set[str]:
    """Native files the hash cache says are archived (skipped by the next mirror)."""
    db = sqlite3.connect(Path(config.data_dir) / "sync" / "hashes.sqlite3")
    try:
        return {r[0][len("archived:"):] for r in db.execute("SELECT path FROM hashes WHERE path LIKE 'archived:%'")}
    finally:
        db.close()


def committed_rows(config: Any) -> dict[str, tuple[str, int]]:
    """path → (source, size) of the catalog rows another process sees (committed ones)."""
    catalog = Path(config.archive_dir) / ".zstore" / "catalog.sqlite3"
    if not catalog.exists():
        return {}
    db = sqlite3.connect(catalog)
    try:
        return {r[0]: (r[1], r[2]) for r in db.execute("SELECT path, source, size FROM files")}
    finally:
        db.close()


def assert_consistent(config: Any, native: Path) -> None:
    """Every committed row reads back byte-exact; every file marked archived has its row."""
    originals = files(native)
    assert verify_store(config)["damaged"] == []
    rows = committed_rows(config)
    for path in rows:
        assert read_archived(config, path) == originals[path]
    by_source = {source: size for source, size in rows.values()}
    for source in marked(config):
        assert by_source.get(source) == os.path.getsize(source)


def assert_complete(config: Any, native: Path) -> None:
    originals = files(native)
    assert set(committed_rows(config)) == set(originals)
    for path, data in originals.items():
        assert read_archived(config, path) == data
    assert verify_store(config)["damaged"] == []
    assert not list((Path(config.archive_dir) / ".zstore").rglob("*.partial"))


def test_deferred_rows_are_invisible_and_unmarked_until_flushed(machine: tuple) -> None:
    config, native = machine
    hook = after_read_hook(config)
    for unit in units(native):
        hook(get_adapter("claude-code"), unit, config.roots[0])
    assert archiver_for(config).store.pending() > 0
    assert committed_rows(config) == {} and marked(config) == set()
    hook.flush()
    assert archiver_for(config).store.pending() == 0
    assert_complete(config, native)
    assert marked(config) == {str(p) for p in native.rglob("*") if p.is_file()}


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from agtaild.adapters import get_adapter
    from agtaild.config import Config, load_config
    from agtaild.store.archive import archiver as archive
    from agtaild.store.archive import durable

    data, native, where, at, batch = sys.argv[1:6]
    at = int(at)
    archive.BATCH_BYTES = int(batch)
    archive.BATCH_SECONDS = 1e9
    calls = {"n": 0}

    def kill_on_nth(real):
        def wrapped(*a, **kw):
            calls["n"] += 1
            if calls["n"] == at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*a, **kw)
        return wrapped

    if where == "file":
        archive.Archiver._mirror_file = kill_on_nth(archive.Archiver._mirror_file)
    elif where == "fsync":
        durable.fsync_path = kill_on_nth(durable.fsync_path)
    elif where == "mark":
        archive.TextKeyHashCache.put_many = kill_on_nth(archive.TextKeyHashCache.put_many)
    config = load_config(data_dir=data, root_options=[f"claude-code={native}"], only_roots=True)
    from agtaild.store.archive.hook import after_read_hook
    hook = after_read_hook(config)
    for unit in get_adapter("claude-code").discover(native):
        hook(get_adapter("claude-code"), unit, config.roots[0])
    hook.flush()
    """
)


@pytest.mark.parametrize(
    ("where", "at"), [("file", 2), ("file", 9), ("file", 25), ("fsync", 1), ("fsync", 6), ("mark", 2)]
)
def test_kill_9_mid_mirror_leaves_no_row_without_its_bytes(
    machine: tuple, tmp_path: Path, where: str, at: int
) -> None:
    config, native = machine
    batch = sum(len(b) for b in files(native).values()) // 4  # a few batches in all
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, str(script), config.data_dir, str(native), where, str(at), str(batch)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert_consistent(config, native)
    assert len(committed_rows(config)) < len(files(native))  # it did die mid-way
    report = Archiver(config).mirror_units(units(native))  # the next mirror stores the rest
    assert report["errors"] == []
    assert_complete(config, native)


def test_a_batch_that_cannot_be_synced_is_not_recorded(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    real = durable.fsync_path

    def eio(path: Path) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(durable, "fsync_path", eio)
    hook = after_read_hook(config)
    for unit in units(native):
        hook(get_adapter("claude-code"), unit, config.roots[0])
    with pytest.raises(Exception, match="could not make the archive durable"):
        hook.flush()
    assert committed_rows(config) == {} and marked(config) == set()
    monkeypatch.setattr(durable, "fsync_path", real)
    assert Archiver(config).mirror_units(units(native))["errors"] == []
    assert_complete(config, native)


_real_serve = archive_proc.serve


def serve_recording_pid(conn: Any, raw: bytes) -> None:
    """The mirror process's entry point, saying which process it runs in."""
    config = msgspec.msgpack.decode(raw, type=Config)
    (Path(config.data_dir) / "mirror-pid").write_text(str(os.getpid()))
    _real_serve(conn, raw)


class Pipe:
    """The mirror process's end of its pipe, with ``before`` called before each message is
    received (the mirror's serve() reads its messages through recv_bytes and poll)."""

    def __init__(self, conn: Any, before: Any) -> None:
        self.conn, self.before = conn, before

    def recv_bytes(self) -> bytes:
        self.before()
        data: bytes = self.conn.recv_bytes()
        return data

    def poll(self) -> bool:
        return bool(self.conn.poll())

    def send_bytes(self, data: bytes) -> None:
        self.conn.send_bytes(data)


def serve_dying(conn: Any, raw: bytes) -> None:
    """The mirror process, killed (SIGKILL) when its fifth message arrives."""
    left = [5]

    def count() -> None:
        left[0] -= 1
        if left[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)

    _real_serve(Pipe(conn, count), raw)


def unpinnable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files that cannot be pinned (another file system: a hard link cannot cross it), so a
    big update mirrors them in a process of its own (agtaild.store.archive.pins)."""

    def cross_device(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)


def mirror_process(monkeypatch: pytest.MonkeyPatch, serve: Any) -> None:
    """Every update is big and its files cannot be pinned: it mirrors them in a process of its
    own, which runs ``serve``."""
    unpinnable(monkeypatch)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    monkeypatch.setattr(archive_proc, "serve", serve)


def test_a_big_update_mirrors_in_its_own_process(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    mirror_process(monkeypatch, serve_recording_pid)
    pid = Path(config.data_dir) / "mirror-pid"
    svc = Service(config, workers=2)
    try:
        report = svc.update_index()
        assert report["errors"] == []
        assert int(pid.read_text()) != os.getpid()
        assert_complete(config, native)
        assert marked(config) == {str(p) for p in native.rglob("*") if p.is_file()}
        target = max(native.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        with open(target, "ab") as fh:  # a small update afterwards: on the thread, appended
            fh.write(b'{"type":"user","message":{"role":"user","content":"more"},"uuid":"zz","sessionId":"s"}\n')
        pid.unlink()
        monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 1 << 40)
        assert svc.update_index()["errors"] == []
        assert not pid.exists()
        assert_complete(config, native)
    finally:
        svc.close()


def serve_recording_niceness(conn: Any, raw: bytes) -> None:
    """The mirror process, writing down its niceness once it starts receiving units."""
    config = msgspec.msgpack.decode(raw, type=Config)

    def record() -> None:
        (Path(config.data_dir) / "mirror-nice").write_text(str(os.getpriority(os.PRIO_PROCESS, 0)))

    _real_serve(Pipe(conn, record), raw)


def test_the_mirror_process_runs_below_the_index(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """It takes the gaps the writer and the readers leave, not their time (archive_proc.NICENESS)."""
    config, native = machine
    mirror_process(monkeypatch, serve_recording_niceness)
    svc = Service(config, workers=2)
    try:
        assert svc.update_index()["errors"] == []
    finally:
        svc.close()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert int((Path(config.data_dir) / "mirror-nice").read_text()) == min(19, ours + archive_proc.NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours  # the index itself is untouched
    assert_complete(config, native)


def test_a_mirror_process_that_dies_is_made_up_for(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config, native = machine
    mirror_process(monkeypatch, serve_dying)
    svc = Service(config, workers=2)
    try:
        report = svc.update_index()
        assert report["errors"] == []
        assert any("mirror process stopped" in r.getMessage() for r in caplog.records)
        assert_complete(config, native)
        assert marked(config) == {str(p) for p in native.rglob("*") if p.is_file()}
    finally:
        svc.close()


KILLED_UPDATE = textwrap.dedent(
    """
    import os, signal, sys
    from agtaild.config import load_config
    from agtaild.query.service import Service
    from agtaild.store.archive import blobs as archive_store

    data, native = sys.argv[1:3]

    def killed(self):
        os.kill(os.getpid(), signal.SIGKILL)

    archive_store.ZStore.flush = killed  # the index has committed; the copies are not durable
    config = load_config(data_dir=data, root_options=[f"claude-code={native}"], only_roots=True)
    Service(config, workers=1).update_index()
    """
)


def test_an_update_killed_before_its_copies_were_durable_is_made_up_for(machine: tuple, tmp_path: Path) -> None:
    """The index will not read its units again (they are stored and unchanged): the next
    update mirrors them all the same."""
    config, native = machine
    for p in native.rglob("*"):  # settled files: the index reads them once
        os.utime(p, (1_700_000_000, 1_700_000_000))
    script = tmp_path / "killed.py"
    script.write_text(KILLED_UPDATE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, str(script), config.data_dir, str(native)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert committed_rows(config) == {} and marked(config) == set()
    marks = list((Path(config.archive_dir) / ".zstore").glob("open-*"))
    assert len(marks) == 1
    svc = Service(config, workers=1)
    try:
        report = svc.update_index()
        assert report["errors"] == [] and report["read"] == 0  # nothing for the index to read
        assert_complete(config, native)
        assert not list((Path(config.archive_dir) / ".zstore").glob("open-*"))
    finally:
        svc.close()


def test_open_marks_start_a_catch_up_only_once_their_update_is_over(machine: tuple) -> None:
    """A sync push while this process's update runs does not take its open mark for a dead
    one; a mark left by an update whose copies could not be made durable, or by a process
    that is gone, does start a catch-up."""
    config, native = machine
    arch = archiver_for(config)
    archive_catchup.open_mark(arch, durable=True)
    assert archive_catchup.stale_marks(arch) == []
    archive_catchup.close_mark(arch, durable=False)
    assert [m.name for m in archive_catchup.stale_marks(arch)] == [f"open-{os.getpid()}"]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (arch.store.root / f"open-{int(dead.stdout)}").touch()
    assert len(archive_catchup.stale_marks(arch)) == 2
    errors: list[dict[str, str]] = []
    assert archive_catchup.catch_up(arch, errors) == len(files(native))
    assert errors == [] and archive_catchup.stale_marks(arch) == []
    assert_complete(config, native)
