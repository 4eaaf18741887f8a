"""Sessions deleted while the archive's finisher is still pending stay listed.

A first index pins the files it read (agtaild.store.archive.pins) and a finisher archives
them after it. An agent may delete its files in that window: a pinned file is as good as an
archived one — the next update's discovery serves it from its pin (written back into the
archive's view), and the finisher's completion asks for the update that makes the index
whole. Driven in a loop: sessions (subagent files among them) added every round, indexed,
then deleted at random moments while a slowed finisher works, with every session listed
after every ``agtail index``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from agtaild.cli import main
from agtaild.config import load_config
from agtaild.store.archive import finish as archive_finish
from agtaild.store.archive import mirror_proc as archive_proc
from agtaild.store.archive import pinned as archive_pins
from agtaild.store.archive.view import prepare_view

from .test_archive_batch import committed_rows

CLAUDE = "real/claude-2.1.197/projects"
REPO = Path(__file__).resolve().parent.parent

#: A finisher that takes its time: two files a batch, a pause before each (the window in
#: which the agent deletes files is the finisher's whole run).
SLOW_FINISHER = textwrap.dedent(
    """
    import sys, time
    from agtaild.store.archive import finish as archive_finish
    from agtaild.store.archive.archiver import Archiver

    real = Archiver.mirror_files

    def slow(self, *args, **kwargs):
        time.sleep(float(sys.argv[2]))
        return real(self, *args, **kwargs)

    Archiver.mirror_files = slow
    archive_finish.BATCH_FILES = 2
    sys.exit(archive_finish.main(sys.argv[1:2]))
    """
)


def add_sessions(native: Path, corpus: Path, rng: random.Random) -> list[Path]:
    """A project folder of new sessions (the corpus's, under new ids), one of them with a
    subagent folder copied under two more parents; its files, settled."""
    src = next((corpus / CLAUDE).glob("*/*/subagents")).parent.parent
    project = native / f"-round-{uuid.UUID(int=rng.getrandbits(128))}"
    shutil.copytree(src, project)
    parent = next(project.glob("*/subagents")).parent
    for _ in range(2):
        new = str(uuid.UUID(int=rng.getrandbits(128)))
        shutil.copytree(parent, parent.with_name(new))
        shutil.copy(parent.with_suffix(".jsonl"), parent.with_name(new + ".jsonl"))
    made = [p for p in project.rglob("*") if p.is_file()]
    for p in made:
        os.utime(p, (1_700_000_000, 1_700_000_000))
    return made


def listed(data_dir: Path) -> set[tuple[str, str]]:
    """The sessions the index lists: (session id, path below its root) — a subagent's id is
    not unique, its place is."""
    db = sqlite3.connect(data_dir / "index.sqlite3")
    try:
        rows = db.execute("SELECT s.sid, f.path, f.root FROM sessions s JOIN files f ON f.id = s.file_id").fetchall()
    finally:
        db.close()
    return {(sid, os.path.relpath(path, root)) for sid, path, root in rows}


def delete_some(made: list[Path], rng: random.Random) -> None:
    """What an agent's pruning does: a few session files, a subagent's files, a whole
    session folder (its subagents with it)."""
    live = [p for p in made if p.exists()]
    subagents = [p for p in live if p.parent.name == "subagents" and p.suffix == ".jsonl"]
    sessions = [p for p in live if p.parent.name.startswith("-round-") and p.suffix == ".jsonl"]
    for p in rng.sample(sessions, min(len(sessions), rng.randint(1, 2))):
        p.unlink()
        folder = p.with_suffix("")
        if folder.is_dir() and rng.random() < 0.5:
            shutil.rmtree(folder)
    if subagents and rng.random() < 0.7:
        victim = rng.choice(subagents)
        victim.unlink(missing_ok=True)
        victim.with_suffix(".meta.json").unlink(missing_ok=True)


def test_no_session_goes_missing_while_the_finisher_is_pending(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = int(os.environ.get("AGTAIL_TEST_SEED", "22"))
    rng = random.Random(seed)
    native = tmp_path / "claude" / "projects"
    native.mkdir(parents=True)
    data = tmp_path / "data"
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)  # every update with reads pins
    script = tmp_path / "slow_finisher.py"
    script.write_text(SLOW_FINISHER)
    started: list[subprocess.Popen[bytes]] = []

    def spawn(store_root: Path) -> subprocess.Popen[bytes]:
        pause = f"{rng.uniform(0.02, 0.08):.3f}"
        proc = subprocess.Popen(
            [sys.executable, str(script), str(store_root), pause],
            env={**os.environ, "PYTHONPATH": str(REPO)}, cwd="/",
        )
        started.append(proc)
        return proc

    monkeypatch.setattr(archive_finish, "spawn", spawn)
    monkeypatch.setattr(archive_finish, "_started", {})
    argv = ["--no-daemon", "--data-dir", str(data), "--only-roots", "--root", f"claude-code={native}", "--json"]
    store = data / "archive" / ".zstore"
    expected: set[tuple[str, str]] = set()
    deleted_while_pending = 0
    try:
        for round_ in range(20):
            made = add_sessions(native, corpus, rng)
            assert main([*argv, "index"]) == 0
            now = listed(data)
            assert expected <= now, f"round {round_} (seed {seed}): missing {sorted(expected - now)}"
            expected = now
            for _wave in range(2):
                time.sleep(rng.uniform(0.0, 0.25))
                pending = archive_pins.pending(store)
                delete_some(made, rng)
                deleted_while_pending += bool(pending)
                assert main([*argv, "index"]) == 0
                now = listed(data)
                assert expected <= now, f"round {round_} (seed {seed}): missing {sorted(expected - now)}"
        assert deleted_while_pending >= 10  # the deletions did land while pins waited
        assert archive_finish.wait(store, 120)
        assert main([*argv, "index"]) == 0
        assert listed(data) == expected
        assert archive_pins.pending(store) == 0
        rows = committed_rows(load_config(data_dir=str(data), root_options=[f"claude-code={native}"], only_roots=True))
        assert len(rows) >= len(expected)
    finally:
        for proc in started:
            proc.kill()
            proc.wait()


def test_a_pinned_file_whose_native_copy_is_gone_is_written_back_from_its_pin(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before any finisher ran: the view copy comes from the pin, byte for byte, with the
    native file's mtime; once the finisher has archived it the copy is the archived one."""
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    for p in native.rglob("*"):
        os.utime(p, (1_700_000_000, 1_700_000_000))
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    monkeypatch.setattr(archive_finish, "spawn", lambda root: None)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    argv = ["--no-daemon", "--data-dir", config.data_dir, "--only-roots", "--root", f"claude-code={native}", "--json"]
    assert main([*argv, "index"]) == 0
    victim = next(native.glob("*/*/subagents/*.jsonl"))
    rel = victim.relative_to(native)
    data = victim.read_bytes()
    victim.unlink()
    assert main([*argv, "index"]) == 0
    view = Path(config.archive_dir) / "claude-code" / rel
    assert view.read_bytes() == data
    assert os.stat(view).st_mtime_ns == 1_700_000_000 * 10**9
    assert (victim.stem, str(rel)) in listed(Path(config.data_dir))
    assert archive_finish.finish(Path(config.archive_dir) / ".zstore")["errors"] == []
    from agtaild.store.archive.archiver import archiver_for

    errors: list[dict[str, str]] = []
    prepare_view(archiver_for(config), errors)
    assert errors == [] and view.read_bytes() == data


def test_the_daemon_scans_once_the_finisher_is_done(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's tick (agtaild.daemon.main.tick_checks) asks for a scan of the roots after
    a finisher has finished, once."""
    from agtaild.daemon.main import tick_checks

    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    monkeypatch.setattr(archive_proc, "PROCESS_BYTES", 0)
    monkeypatch.setattr(archive_finish, "spawn", lambda root: None)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    tick = tick_checks(config, lambda: [])
    assert tick() == []
    argv = ["--no-daemon", "--data-dir", config.data_dir, "--only-roots", "--root", f"claude-code={native}", "--json"]
    assert main([*argv, "index"]) == 0
    assert tick() == []  # pinned, not finished
    assert archive_finish.finish(Path(config.archive_dir) / ".zstore")["sets"] == 1
    assert tick() == [str(Path(config.archive_dir) / ".zstore")]
    assert tick() == []
    assert archive_finish.finish(Path(config.archive_dir) / ".zstore")["sets"] == 0  # nothing to finish: no news
    assert tick() == []


def test_a_pin_newer_than_the_archived_copy_is_the_one_written_back(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file archived earlier, then appended to and pinned by a small update while the
    archive was busy, then deleted: the view serves the pin's bytes (the appended line
    included), not the older archived copy."""
    from agtaild.store.archive.lock import WriterLock

    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    monkeypatch.setattr(archive_finish, "spawn", lambda root: None)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    argv = ["--no-daemon", "--data-dir", config.data_dir, "--only-roots", "--root", f"claude-code={native}", "--json"]
    assert main([*argv, "index"]) == 0  # small: mirrored at once
    store = Path(config.archive_dir) / ".zstore"
    assert archive_pins.pending(store) == 0
    target = sorted(native.glob("*/*.jsonl"))[0]
    with open(target, "ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"appended while busy"},"uuid":"u-b","sessionId":"s"}\n')
    busy = WriterLock(store)
    assert busy.acquire()
    try:
        assert main([*argv, "index"]) == 0
    finally:
        busy.release()
    assert archive_pins.pending(store) == 1
    data = target.read_bytes()
    target.unlink()
    assert main([*argv, "index"]) == 0
    view = Path(config.archive_dir) / "claude-code" / target.relative_to(native)
    assert view.read_bytes() == data


def test_a_set_written_by_0_2_is_finished(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its manifest lines have five fields (no inode, no size): its pins are archived, opened
    without following a symlink, and a pinned file it names is written back all the same."""
    import msgspec

    from agtaild.store.archive.archiver import read_archived

    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    store = Path(config.archive_dir) / ".zstore"
    folder = store / "pins" / "99999997-1"
    folder.mkdir(parents=True)
    (folder / "config").write_bytes(msgspec.msgpack.encode(config))
    lines = []
    sources = sorted(p for p in native.rglob("*.jsonl"))
    for n, src in enumerate(sources):
        os.link(src, folder / str(n))
        rel = f"claude-code/{src.relative_to(native)}"
        lines.append(json.dumps([str(n), rel, str(src), "claude-code", rel]))
    (folder / "manifest").write_text("\n".join(lines) + "\n")
    (folder / "ready").write_bytes(b"")
    victim = sources[0]
    data = victim.read_bytes()
    victim.unlink()
    errors: list[dict[str, str]] = []
    from agtaild.store.archive.archiver import archiver_for

    prepare_view(archiver_for(config), errors)
    assert errors == []
    assert (Path(config.archive_dir) / "claude-code" / victim.relative_to(native)).read_bytes() == data
    report = archive_finish.finish(store)
    assert report["errors"] == [] and report["sets"] == 1
    assert read_archived(config, f"claude-code/{victim.relative_to(native)}") == data
    assert not folder.exists()
