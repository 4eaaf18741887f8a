"""Reading the agents' SQLite stores never hangs and never writes (issue 22, items 10 and 11).

* A FIFO (or a device, a socket) named like an agent's database, its ``-wal``, or Crush's
  project registry never hangs an update: file types are checked before any open. One unit
  whose read blocks is given up after the per-unit time budget, in this process and in the
  reading workers, and the others are stored.
* Reading a WAL-mode database — closed cleanly, left with a ``-wal`` and no ``-shm`` (an agent
  killed, a copied folder), or in a read-only folder — leaves the agent's folder exactly as it
  was (listed before and after) and reads every session, the WAL's rows included.

Every store of the registry is attacked (tests/sqlite_stores.py); each update runs on a thread
so that a hang fails the test instead of stopping the run.
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import all_adapters, get_adapter
from tests.conftest import CORPUS
from tests.sqlite_stores import Store, copy_store, listed, listing, removed, service, sqlite_stores, to_wal

STORES = sqlite_stores()
HANG_SECONDS = 20.0
#: The FIFOs the running test made: released when an update hangs on one, so that the test
#: fails and the run goes on.
_FIFOS: list[Path] = []


def update_within(svc: Any, seconds: float = HANG_SECONDS, **kw: Any) -> dict[str, Any]:
    """``svc.update_index()`` on a thread; fails (instead of hanging) after ``seconds``."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["report"] = svc.update_index(**kw)
        except BaseException as exc:  # reported below
            out["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    hung = worker.is_alive()
    give_up = time.monotonic() + seconds
    while worker.is_alive() and time.monotonic() < give_up:
        for fifo in _FIFOS:
            _release(fifo)
        worker.join(0.2)
    assert not hung, f"the update still ran after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["report"]


def _release(fifo: Path) -> None:
    """Let a reader blocked on ``fifo`` go (old code opens it and waits for a writer)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    _FIFOS.clear()
    yield _FIFOS
    for fifo in _FIFOS:
        _release(fifo)
    _FIFOS.clear()


# -- 10. a FIFO named like an agent's database -----------------------------------------------------


@pytest.mark.parametrize("store", STORES, ids=str)
def test_a_fifo_in_place_of_the_database_hangs_nothing(store: Store, tmp_path: Path, fifos: list[Path]) -> None:
    root, db = copy_store(store, tmp_path / "root")
    svc = service(tmp_path / "data", store.agent, root)
    fresh = service(tmp_path / "fresh", store.agent, root)
    try:
        svc.update_index()
        before = listed(svc)
        db.unlink()
        os.mkfifo(db)
        fifos.append(db)
        again = update_within(svc)
        assert removed(again) == [] and listed(svc).keys() == before.keys()
        [error] = [e for e in again["errors"] if e["path"] == str(db)]
        assert "not a regular file" in error["error"]
        assert stat.S_ISFIFO(os.lstat(db).st_mode)
        update_within(fresh)  # a first index beside the FIFO, too
    finally:
        svc.close()
        fresh.close()


@pytest.mark.parametrize("store", STORES, ids=str)
def test_a_fifo_named_like_the_wal_hangs_nothing(store: Store, tmp_path: Path, fifos: list[Path]) -> None:
    root, db = copy_store(store, tmp_path / "root")
    to_wal(db)
    for suffix in ("-wal", "-shm"):
        os.mkfifo(str(db) + suffix)
        fifos.append(Path(str(db) + suffix))
    svc = service(tmp_path / "data", store.agent, root)
    try:
        report = update_within(svc)
        assert any(e["path"] == str(db) and "not a regular file" in e["error"] for e in report["errors"]), report
    finally:
        svc.close()


def test_a_fifo_for_crushs_project_registry_hangs_nothing(tmp_path: Path, fifos: list[Path]) -> None:
    store = next(s for s in STORES if s.agent == "crush")
    project, _db = copy_store(store, tmp_path / "project" / ".crush")
    data = tmp_path / "crush-data"
    data.mkdir()
    (data / "projects.json").write_text(f'{{"projects": [{{"path": "{project.parent}", "data_dir": "{project}"}}]}}')
    svc = service(tmp_path / "data", "crush", data)
    try:
        svc.update_index()
        before = listed(svc)
        assert before
        (data / "projects.json").unlink()
        os.mkfifo(data / "projects.json")
        fifos.append(data / "projects.json")
        again = update_within(svc)
        assert removed(again) == [] and listed(svc).keys() == before.keys()
        assert any("projects.json" in e["path"] for e in again["errors"]), again["errors"]
    finally:
        svc.close()


def test_a_transcript_replaced_by_a_fifo_is_kept_not_removed(tmp_path: Path, fifos: list[Path]) -> None:
    """The same rule for one-file-per-session agents: discovery skips the FIFO (it is no
    transcript), and the session indexed from that name is kept and reported, not removed."""
    root = tmp_path / "projects"
    shutil.copytree(CORPUS / "real/claude-2.1.197/projects", root)
    svc = service(tmp_path / "data", "claude-code", root)
    try:
        svc.update_index()
        before = listed(svc)
        victim = Path(next(s["path"] for s in before.values() if s["path"].endswith(".jsonl")))
        victim.unlink()
        os.mkfifo(victim)
        fifos.append(victim)
        again = update_within(svc)
        assert removed(again) == [] and listed(svc).keys() == before.keys()
        assert any(e["path"] == str(victim) and "a FIFO" in e["error"] for e in again["errors"]), again["errors"]
    finally:
        svc.close()


def _replace_every_file(folder: Path) -> list[Path]:
    """Every regular file below ``folder`` becomes, in turn, a FIFO, a link to /dev/null (a
    character device) and a unix socket (a FIFO where the socket's path would be too long)."""
    made = []
    files = sorted(Path(d, n) for d, _dirs, names in os.walk(folder) for n in names)
    for i, path in enumerate(f for f in files if stat.S_ISREG(os.lstat(f).st_mode)):
        path.unlink()
        if i % 3 == 1:
            path.symlink_to("/dev/null")
        elif i % 3 == 2 and len(str(path)) < 100:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(str(path))
        else:
            os.mkfifo(path)
            made.append(path)
    return made


@pytest.mark.parametrize("agent", sorted({a.id for a in all_adapters() if a.sample_roots}))
def test_no_adapter_opens_what_is_not_a_regular_file(agent: str, tmp_path: Path, fifos: list[Path]) -> None:
    """Every adapter, every sample: each file replaced by a FIFO, a device or a socket. The
    update and ``agtail doctor``'s discovery check finish (nothing is opened but regular files)."""
    from agtaild.cli.doctor import discovery_checks

    adapter = get_adapter(agent)
    roots = []
    for i, sample in enumerate(adapter.sample_roots):
        if (CORPUS / sample).exists():
            root, _ = copy_store(Store(agent, sample, "."), tmp_path / f"root{i}")
            roots.append(root)
    fifos.extend(f for root in roots for f in _replace_every_file(root if root.is_dir() else root.parent))
    svc = service(tmp_path / "data", agent, roots)
    try:
        update_within(svc)
        done: list[Any] = []
        checker = threading.Thread(target=lambda: done.append(discovery_checks(svc.config)), daemon=True)
        checker.start()
        checker.join(HANG_SECONDS)
        assert done, "agtail doctor's discovery check still ran"
    finally:
        svc.close()


def test_adapters_open_files_only_through_the_one_helper() -> None:
    """No adapter module calls ``open()``, ``os.open``, ``Path.read_bytes``/``read_text``/``open``
    itself: every agent file is opened by agtaild.adapters.kit.files (type checked first)."""
    package = Path(__file__).resolve().parent.parent / "agtaild" / "adapters"
    allowed = {package / "kit" / "files.py", package / "__init__.py"}  # plugin metadata, not agent files
    found = []
    for path in sorted(package.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            modes = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if modes and set(modes[0]) & set("wax+"):
                continue  # agtail's own files (a private copy), not an agent's
            if (isinstance(func, ast.Name) and func.id == "open") or (
                isinstance(func, ast.Attribute)
                and (func.attr in ("read_bytes", "read_text") or (func.attr == "open" and getattr(func.value, "id", "") in ("os", "io")))
            ):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize("workers", [1, 2])
def test_one_blocked_read_does_not_hold_the_writer(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One unit whose read blocks (a stuck mount, an adapter gone wrong) is given up after the
    per-unit budget; the others are stored. ``workers=2`` reads in worker processes."""
    from agtaild.adapters.goose.adapter import GooseAdapter
    from agtaild.index import readers, timed

    store = next(s for s in STORES if s.agent == "goose")
    root, _db = copy_store(store, tmp_path / "root")
    real_read = GooseAdapter.read
    stuck = "20251130_1"

    def read(self: Any, unit: Any, state: Any = None, *, now: Any = None) -> Any:
        if unit.path.endswith("#" + stuck):
            time.sleep(HANG_SECONDS)
        return real_read(self, unit, state, now=now)

    monkeypatch.setattr(GooseAdapter, "read", read)
    monkeypatch.setattr(timed, "UNIT_SECONDS", 1.0)
    if workers > 1:  # every unit in the worker processes, forked with the patches above
        monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)
        monkeypatch.setattr(readers, "HEAD_UNITS", 0)
        monkeypatch.setattr(readers, "start_method", lambda: "fork")
    svc = service(tmp_path / "data", "goose", root, workers=workers)
    try:
        started = time.monotonic()
        report = svc.update_index()
        assert time.monotonic() - started < 10
        [error] = [e for e in report["errors"] if e["path"].endswith("#" + stuck)]
        assert "1 s" in error["error"]
        ids = {sid for _agent, sid in listed(svc)}
        assert stuck not in ids and len(ids) >= 2
    finally:
        svc.close()


# -- 11. reading never writes in the agent's folder ---------------------------------------------------


def _sessions_of(store: Store, tmp_path: Path) -> set[tuple[str, str]]:
    """The sessions of the untouched sample, as a reference."""
    root, _db = copy_store(store, tmp_path / "reference")
    svc = service(tmp_path / "reference-data", store.agent, root)
    try:
        svc.update_index()
        return set(listed(svc))
    finally:
        svc.close()


def _wal_only(db: Path) -> None:
    """Rewrite ``db`` so that every row is in its ``-wal`` and there is no ``-shm``: what an agent
    killed mid-session (or a folder copied while it ran) leaves."""
    src = sqlite3.connect(db)
    tmp = db.with_name(db.name + ".new")
    live = sqlite3.connect(tmp)
    live.execute("PRAGMA journal_mode=WAL")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("CREATE TABLE agtail_test_anchor(x)")
    live.commit()
    src.backup(live)
    src.close()
    for suffix in ("", "-wal"):
        shutil.copy2(str(tmp) + suffix, str(db) + suffix)
    live.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    assert Path(str(db) + "-wal").stat().st_size > 0 and not Path(str(db) + "-shm").exists()


@pytest.mark.parametrize("state", ["closed", "wal left, no shm", "agent running"])
@pytest.mark.parametrize("store", STORES, ids=str)
def test_reading_a_wal_database_leaves_the_folder_as_it_was(store: Store, state: str, tmp_path: Path) -> None:
    expected = _sessions_of(store, tmp_path)
    root, db = copy_store(store, tmp_path / "root")
    to_wal(db)
    agent = None
    if state == "wal left, no shm":
        _wal_only(db)
    elif state == "agent running":
        agent = sqlite3.connect(db)
        agent.execute("PRAGMA wal_autocheckpoint=0")
        agent.execute("SELECT count(*) FROM sqlite_master").fetchone()
    before = listing(db.parent)
    svc = service(tmp_path / "data", store.agent, root)
    try:
        report = update_within(svc)
        assert report["errors"] == []
        assert set(listed(svc)) == expected
        assert listing(db.parent) == before
        svc.update_index(full=True)  # the archive's copy, too, is made without a trace
        assert listing(db.parent) == before and set(listed(svc)) == expected
    finally:
        svc.close()
        if agent is not None:
            agent.close()


def test_a_wal_that_cannot_be_read_anywhere_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``-wal`` without ``-shm`` needs a private copy; where none can be made (no usable temp
    dir) the update says so for that database, and the folder is left as it was."""
    import tempfile

    from agtaild.adapters.kit import sqlite_open

    store = next(s for s in STORES if s.agent == "goose")
    root, db = copy_store(store, tmp_path / "root")
    to_wal(db)
    _wal_only(db)
    before = listing(db.parent)
    (tmp_path / "not-a-dir").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "not-a-dir" / "tmp"))
    monkeypatch.setattr(sqlite_open, "_snapshots", sqlite_open._Snapshots())  # no folder made yet
    svc = service(tmp_path / "data", "goose", root)
    try:
        report = update_within(svc)
        [error] = [e for e in report["errors"] if e["path"] == str(db)]
        assert "private copy failed" in error["error"]
        assert listing(db.parent) == before
    finally:
        svc.close()


@pytest.fixture
def read_only() -> Iterator[Any]:
    """Makes a folder read-only: a read-only bind mount as root (who ignores modes), else 0555."""
    mounted: list[Path] = []
    moded: list[Path] = []

    def make(folder: Path) -> None:
        if os.getuid() != 0:
            folder.chmod(0o555)
            moded.append(folder)
            return
        for argv in (["--bind", str(folder), str(folder)], ["-o", "remount,ro,bind", str(folder)]):
            done = subprocess.run(["mount", *argv], capture_output=True, text=True)
            if done.returncode != 0:
                pytest.skip(f"mount is not permitted here: {done.stderr.strip()}")
            if argv[0] == "--bind":
                mounted.append(folder)
        probe = folder / ".agtail-probe"
        with pytest.raises(OSError):
            probe.write_text("x")

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
    for folder in moded:
        folder.chmod(0o755)


@pytest.mark.parametrize("state", ["closed", "wal left, no shm"])
@pytest.mark.parametrize("store", STORES, ids=str)
def test_a_wal_database_in_a_read_only_folder_is_read(
    store: Store, state: str, tmp_path: Path, read_only: Any
) -> None:
    expected = _sessions_of(store, tmp_path)
    root, db = copy_store(store, tmp_path / "root")
    to_wal(db)
    if state == "wal left, no shm":
        _wal_only(db)
    read_only(db.parent)
    before = listing(db.parent)
    svc = service(tmp_path / "data", store.agent, root)
    try:
        report = update_within(svc)
        assert report["errors"] == [] and set(listed(svc)) == expected
        assert listing(db.parent) == before
    finally:
        svc.close()
