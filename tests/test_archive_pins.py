"""A first index pins its files and the finisher archives them after it.

A big update hard-links each native file it reads under ``.zstore/pins/`` instead of storing
it; when the update is done a finisher process archives the pinned files and removes the pins.
Nothing the index read can be lost meanwhile: a file its agent deletes before the finisher
gets to it is archived from its pin. A finisher killed midway is followed by another; a set
of pins whose update was killed is finished from its manifest; files that cannot be pinned
are mirrored as before.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import load_config
from agtaild.fsnames import to_text
from agtaild.query.service import Service
from agtaild.store.archive import finish as archive_finish
from agtaild.store.archive import mirror_proc as archive_proc
from agtaild.store.archive import pinned as archive_pinned
from agtaild.store.archive import pins as archive_pins
from agtaild.store.archive.archiver import archive_usage, archiver_for, read_archived
from agtaild.store.archive.lock import WriterLock
from agtaild.store.archive.view import verify_store

from .test_archive_batch import assert_complete, assert_consistent, committed_rows, files, marked

CLAUDE = "real/claude-2.1.197/projects"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def machine(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path]:
    """A Claude Code root with a few dozen sessions, indexed as a big update (pinned)."""
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    for n, src in enumerate(sorted(native.glob("*/*.jsonl"))[:6]):
        for k in range(4):
            shutil.copy(src, src.with_name(f"copy{n}{k}-{src.name}"))
    for p in native.rglob("*"):  # settled files: read once
        os.utime(p, (1_700_000_000, 1_700_000_000))
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the finisher process imports this checkout
    return config, native


def store_root(config: Any) -> Path:
    return Path(config.archive_dir) / ".zstore"


def no_finisher(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Keep the update from starting a finisher; the stores it would have been started for."""
    asked: list[Path] = []
    monkeypatch.setattr(archive_finish, "spawn", lambda root: asked.append(root))
    return asked


def assert_archived_all(config: Any, native: Path) -> None:
    """Every native file archived, byte-exact (names that are not UTF-8 included: the catalog
    holds their text form, the store takes them as the file system has them)."""
    originals = files(native)
    assert set(committed_rows(config)) == {to_text(path) for path in originals}
    for path, data in originals.items():
        assert read_archived(config, path) == data
    assert verify_store(config)["damaged"] == []


def index(config: Any) -> dict[str, Any]:
    svc = Service(config, workers=1)
    try:
        report: dict[str, Any] = svc.update_index()
    finally:
        svc.close()
    return report


def test_a_big_update_pins_and_the_finisher_archives_after_it(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    started: list[Any] = []
    real_serve = archive_proc.serve
    monkeypatch.setattr(archive_proc, "serve", lambda *a: (started.append(a), real_serve(*a)))
    assert index(config)["errors"] == []
    assert archive_finish.wait(store_root(config), 60)
    assert started == []  # no mirror process: every file was pinned
    assert_complete(config, native)
    assert marked(config) == {str(p) for p in native.rglob("*") if p.is_file()}
    assert not list(archive_pinned.sets(store_root(config)))
    assert archive_pinned.pending(store_root(config)) == 0
    # The rows name the native files, not their pins.
    assert {source for source, _size in committed_rows(config).values()} == {
        str(p) for p in native.rglob("*") if p.is_file()
    }


def test_the_index_does_not_wait_for_the_archive(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the update returns, every file is pinned (a hard link: the same inode) and the
    set is sealed; nothing is stored yet."""
    config, native = machine
    asked = no_finisher(monkeypatch)
    report = index(config)
    assert report["errors"] == [] and report["read"] > 0
    assert asked == [store_root(config)]
    assert committed_rows(config) == {}
    [folder] = archive_pinned.sets(store_root(config))
    assert (folder / archive_pins.READY).exists()
    _config, pinned = archive_pinned.read_set(folder)
    assert {p.local.source for p in pinned} == {str(p) for p in native.rglob("*") if p.is_file()}
    for p in pinned:
        assert os.stat(folder / p.pin).st_ino == os.stat(p.local.source).st_ino
    assert archive_pinned.pending(store_root(config)) == len(pinned)
    usage = archive_usage(config)
    assert usage["pending_files"] == len(pinned) and "pins" not in usage["by_agent"]
    assert not list(store_root(config).glob("open-*"))  # the pins are durable: nothing to catch up


def test_a_file_deleted_before_the_finisher_runs_is_archived_from_its_pin(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    originals = files(native)
    assert index(config)["errors"] == []
    victim = sorted(native.glob("*/copy*.jsonl"))[0]
    rel = f"claude-code/{victim.relative_to(native)}"
    victim.unlink()  # the agent prunes it
    report = archive_finish.finish(store_root(config))
    assert report["errors"] == [] and report["sets"] == 1
    assert read_archived(config, rel) == originals[rel]
    assert verify_store(config)["damaged"] == []
    assert not list(archive_pinned.sets(store_root(config)))
    # The next update lists the session from the archive.
    svc = Service(config, workers=1)
    try:
        assert svc.update_index()["errors"] == []
        sid = victim.stem
        rows = svc._db.execute("SELECT archived FROM sessions WHERE sid = ?", (sid,)).fetchall()
        assert rows == [(1,)]
    finally:
        svc.close()


def test_a_file_appended_to_after_pinning_is_archived_whole(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pin is the same file: what the agent appends meanwhile is in it (and the next update
    sees the native file archived as it is)."""
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    target = sorted(native.glob("*/*.jsonl"))[0]
    with open(target, "ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"later"},"uuid":"u-later","sessionId":"s"}\n')
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_complete(config, native)
    assert index(config)["errors"] == []
    assert_complete(config, native)


def test_units_that_cannot_be_pinned_are_mirrored_as_before(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    real_link = os.link

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        if "copy0" in str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link)
    asked = no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    # The mirror process stored the units that could not be pinned, durably, before the
    # update returned; the rest wait for the finisher.
    stored = set(committed_rows(config))
    assert stored and all("copy0" in path for path in stored)
    assert asked
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_complete(config, native)


def test_an_sqlite_store_is_not_pinned(tmp_path: Path) -> None:
    """It must be copied with its journal, under its own name (a pin would be read without
    its -wal): the hook mirrors its unit instead."""
    native = tmp_path / "opencode"
    native.mkdir()
    import sqlite3

    db = sqlite3.connect(native / "opencode.db")
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={tmp_path / 'c'}"], only_roots=True)
    archiver = archiver_for(config)
    pins = archive_pins.PinSet.create(archiver, config)

    class Unit:
        pass

    local = archive_pins.LocalFile(path="claude-code/x/opencode.db", source=str(native / "opencode.db"), agent="claude-code")
    archiver.files_of = lambda pairs: [(local, local.path)]  # type: ignore[method-assign]
    assert pins.pin(get_adapter("claude-code"), Unit()) is False
    assert [n for n in os.listdir(pins.folder) if n.isdigit()] == []  # nothing left pinned
    pins.abandon()
    assert not pins.folder.exists()


FINISHER_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from agtaild.store.archive import finish as archive_finish
    from agtaild.store.archive.archiver import Archiver

    real_flush = Archiver._flush_into
    calls = [0]

    def flush(self, report):
        calls[0] += 1
        if calls[0] == 3:  # two batches durable (their pins removed), the third not yet
            os.kill(os.getpid(), signal.SIGKILL)
        return real_flush(self, report)

    Archiver._flush_into = flush
    archive_finish.BATCH_FILES = 4
    archive_finish.finish(sys.argv[1])
    """
)


def test_a_finisher_killed_midway_is_followed_by_another(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, native = machine
    asked = no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    script = tmp_path / "killed.py"
    script.write_text(FINISHER_KILLED)
    proc = subprocess.run(
        [sys.executable, str(script), str(store_root(config))],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert_consistent(config, native)
    done = len(committed_rows(config))
    assert 0 < done < len(files(native))
    assert archive_pinned.pending(store_root(config)) == len(files(native)) - done  # their pins went
    # The next update's before-discovery hook starts another finisher.
    monkeypatch.undo()
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    asked.clear()
    assert index(config)["errors"] == []
    assert archive_finish.wait(store_root(config), 60)
    assert_archived_all(config, native)


def test_the_pins_of_an_update_killed_before_sealing_are_finished(machine: tuple) -> None:
    """No ``ready``, and its process is gone: the finisher takes it, from the complete lines
    of its manifest (a torn last line is skipped)."""
    config, native = machine
    archiver = archiver_for(config)
    pins = archive_pins.PinSet.create(archiver, config)
    adapter = get_adapter("claude-code")
    for unit in adapter.discover(native):
        assert pins.pin(adapter, unit)
    pins._manifest.write(b'["999", "claude-code/torn')  # killed mid-line
    pins._manifest.close()
    assert list(archive_pinned.sets(store_root(config))) == []  # ours, alive, unsealed: not yet
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = pins.folder.with_name(f"{int(dead.stdout)}-1")
    pins.folder.rename(orphan)
    assert list(archive_pinned.sets(store_root(config))) == [orphan]
    report = archive_finish.finish(store_root(config))
    assert report["errors"] == [] and report["sets"] == 1
    assert_complete(config, native)
    assert not orphan.exists()


def test_one_finisher_at_a_time(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    held = archive_finish._lock(store_root(config))
    assert held is not None
    try:
        assert archive_finish.running(store_root(config))
        assert archive_finish.finish(store_root(config))["sets"] == 0
        assert archive_finish.kick(store_root(config)) is None
        assert committed_rows(config) == {}
    finally:
        held.release()
    assert not archive_finish.running(store_root(config))
    assert archive_finish.finish(store_root(config))["sets"] == 1
    assert_complete(config, native)


def test_a_set_that_keeps_failing_is_given_up(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """After MAX_ATTEMPTS its pins go (the native files are still mirrored when they change);
    before, each attempt leaves them for the next."""
    config, _native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    from agtaild.store.archive import blobs as archive_store

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(archive_store.ZStore, "put_whole", broken)
    for attempt in range(1, archive_finish.MAX_ATTEMPTS + 1):
        report = archive_finish.finish(store_root(config))
        assert report["errors"] and "No space left" in report["errors"][0]["message"]
        left = list(archive_pinned.sets(store_root(config)))
        assert len(left) == (0 if attempt == archive_finish.MAX_ATTEMPTS else 1)
    assert committed_rows(config) == {}


def test_one_archive_writer_at_a_time(tmp_path: Path) -> None:
    first, second = WriterLock(tmp_path), WriterLock(tmp_path)
    assert first.acquire()
    assert first.acquire()  # held: a no-op
    assert not second.acquire(wait=False)
    first.release()
    assert second.acquire(wait=False) and second.held
    second.release()
    assert not second.held
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(REPO)!r})
            from agtaild.store.archive.lock import WriterLock
            lock = WriterLock({str(tmp_path)!r}); lock.acquire(); print("held", flush=True); time.sleep(60)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert not first.acquire(wait=False)
        holder.kill()
        holder.wait()
        assert first.acquire(wait=False)  # the kernel dropped the dead holder's lock
    finally:
        holder.kill()
        first.release()


def test_a_tampered_manifest_writes_nothing_outside_the_archive(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    [folder] = archive_pinned.sets(store_root(config))
    some = next(p for p in native.rglob("*.jsonl"))
    os.link(some, folder / "9999")
    os.link(some, folder / "9998")
    with open(folder / archive_pins.MANIFEST, "ab") as fh:
        fh.write(b'["9999", "claude-code/../../../escaped.jsonl", "%s", "claude-code", "x"]\n' % str(some).encode())
        fh.write(b'["9998", "codex/other-agent.jsonl", "%s", "claude-code", "x"]\n' % str(some).encode())
        fh.write(b'["../../9997", "claude-code/a/b.jsonl", "%s", "claude-code", "x"]\n' % str(some).encode())
        fh.write(b"not json at all\n")
    _config, pinned = archive_pinned.read_set(folder)
    assert len(pinned) == len(files(native))
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_complete(config, native)
    assert not list(Path(config.data_dir).rglob("escaped*")) and not list(Path(config.archive_dir).rglob("other-agent*"))


def test_a_name_that_is_not_utf8_is_pinned_and_archived(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    project = next(p for p in native.iterdir() if p.is_dir())
    src = next(project.glob("*.jsonl"))
    odd = os.path.join(os.fsencode(project), b"odd\xff-" + os.fsencode(src.name))
    shutil.copy(src, odd)
    os.utime(odd, (1_700_000_000, 1_700_000_000))
    assert index(config)["errors"] == []
    assert archive_finish.wait(store_root(config), 60)
    assert_archived_all(config, native)


def test_agtail_index_says_the_archive_goes_on_in_the_background(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.cli import main

    config, native = machine
    no_finisher(monkeypatch)
    argv = ["--no-daemon", "--data-dir", config.data_dir, "--only-roots", "--root", f"claude-code={native}"]
    assert main([*argv, "index"]) == 0
    err = capsys.readouterr().err
    assert f"archive: storing {len(files(native))} files in the background" in err
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert main([*argv, "index"]) == 0  # nothing changed: nothing pinned
    assert "in the background" not in capsys.readouterr().err


def test_a_finisher_that_fails_is_not_started_again_at_every_update(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon kicks at every update: after a finisher that failed, the next waits RETRY_SECONDS."""
    config, _native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    started: list[Any] = []

    def failing(root: Path) -> Any:
        proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
        proc.wait()
        started.append(proc)
        return proc

    monkeypatch.setattr(archive_finish, "spawn", failing)
    monkeypatch.setattr(archive_finish, "_started", {})
    assert archive_finish.kick(store_root(config)) is not None
    assert archive_finish.kick(store_root(config)) is None  # failed just now: not yet
    monkeypatch.setattr(archive_finish, "RETRY_SECONDS", 0.0)
    assert archive_finish.kick(store_root(config)) is not None
    assert len(started) == 2


def test_a_small_update_does_not_wait_for_the_finisher(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """While another process writes the archive (a finisher), the daemon's append pins its file
    for it instead of waiting for the archive's writer lock."""
    config, native = machine
    assert index(config)["errors"] == []
    assert archive_finish.wait(store_root(config), 60)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 1 << 40)  # small updates from here
    asked = no_finisher(monkeypatch)
    other = WriterLock(store_root(config))  # another writer: a lock of its own on the same file
    assert other.acquire()
    try:
        target = sorted(native.glob("*/*.jsonl"))[0]
        with open(target, "ab") as fh:
            fh.write(b'{"type":"user","message":{"role":"user","content":"while busy"},"uuid":"u-busy","sessionId":"s"}\n')
        started = time.monotonic()
        assert index(config)["errors"] == []
        assert time.monotonic() - started < 10  # it did not wait for the lock
        [folder] = archive_pinned.sets(store_root(config))
        _config, pinned = archive_pinned.read_set(folder)
        assert [p.local.source for p in pinned] == [str(target)]
        assert asked  # the finisher was asked for
    finally:
        other.release()
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_complete(config, native)
