"""The compressed archive: byte-exact round trips, range reads, damage detection, conversion of
plain (pre-store) archives, and sync of a session kept only by the archive."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard

from agtaild import cli
from agtaild.adapters import get_adapter
from agtaild.config import load_config
from agtaild.query.service import Service
from agtaild.store.archive import framing
from agtaild.store.archive.archiver import Archiver, archiver_for, read_archived
from agtaild.store.archive.blobs import ZStore
from agtaild.store.archive.framing import ArchiveDamaged
from agtaild.store.archive.view import CONVERTED_MARK, prepare_view, verify_store

CLAUDE = "real/claude-2.1.197/projects"
LINE = b'{"type":"user","message":{"role":"user","content":"more %d"},"uuid":"zz-%d","sessionId":"s"}\n'


@pytest.fixture
def machine(tmp_path: Path, corpus: Path) -> tuple[Any, Path]:
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(
        data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True
    )
    return config, native


def units(native: Path) -> list[Any]:
    return list(get_adapter("claude-code").discover(native))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main_jsonl(native: Path) -> Path:
    return sorted(native.glob("*/*.jsonl"), key=lambda p: -p.stat().st_size)[0]


def rel(native: Path, path: Path) -> str:
    return f"claude-code/{path.relative_to(native)}"


def test_appends_rewrite_shrink_and_compaction_round_trip(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native = machine
    monkeypatch.setattr(framing, "MAX_SMALL_FRAMES", 5)
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = main_jsonl(native)
    key = rel(native, target)
    for n in range(12):  # more appends than MAX_SMALL_FRAMES: the file is recompressed whole on the way
        with open(target, "ab") as fh:
            fh.write(LINE % (n, n))
        rep = arch.mirror_units(units(native))
        assert rep["errors"] == [] and rep["kept"] == []
        assert sha(read_archived(config, key)) == sha(target.read_bytes())
        assert len(arch.store.get(key).frames) <= 5  # type: ignore[union-attr]
    grown = target.read_bytes()
    target.write_bytes(grown[: len(grown) // 3])  # shrink: the longer history is kept
    rep = arch.mirror_units(units(native))
    assert len(rep["kept"]) == 1 and read_archived(config, rep["kept"][0]) == grown
    assert read_archived(config, key) == target.read_bytes()
    assert verify_store(config)["damaged"] == []


def test_range_reads_cross_frames(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    monkeypatch.setattr(framing, "FRAME_RAW", 1000)
    Archiver(config).mirror_units(units(native))
    target = main_jsonl(native)
    data = target.read_bytes()
    store = ZStore(Path(config.archive_dir))
    row = store.get(rel(native, target))
    assert row is not None and len(row.frames) == -(-len(data) // 1000)
    for offset, length in ((0, 10), (990, 25), (1000, 1000), (len(data) - 7, 100), (2500, 0)):
        assert b"".join(store.read(rel(native, target), offset, length)) == data[offset : offset + length]
    blob = store.blob(rel(native, target)).read_bytes()
    assert blob[:4] == b"\x28\xb5\x2f\xfd"  # zstd frames end to end: `zstd -d` restores it without agtail
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob), read_across_frames=True)
    assert reader.read() == data
    store.close()


def test_deleted_session_is_written_back_byte_exact_and_dropped_when_back(machine: tuple) -> None:
    config, native = machine
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        target = main_jsonl(native)
        original = target.read_bytes()
        view = Path(config.archive_dir) / rel(native, target)
        assert not view.exists()
        target.unlink()
        report = svc.update_index()
        assert report["errors"] == []
        assert sha(view.read_bytes()) == sha(original)
        sid = target.stem
        assert svc.call("sessions.get", {"agent": "claude-code", "id": sid})["session"]["archived"] is True
        target.write_bytes(original)  # the native file comes back: the plain copy is redundant
        svc.update_index()
        assert not view.exists()
        assert svc.call("sessions.get", {"agent": "claude-code", "id": sid})["session"]["archived"] is False
    finally:
        svc.close()


def test_damaged_frame_is_reported_and_not_served(machine: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    config, native = machine
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        target = main_jsonl(native)
        key = rel(native, target)
        store = archiver_for(config).store
        blob = store.blob(key)
        raw = bytearray(blob.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        blob.write_bytes(bytes(raw))
        with pytest.raises(ArchiveDamaged, match="damaged archive frame"):
            read_archived(config, key)
        damaged = verify_store(config)["damaged"]
        assert [d["path"] for d in damaged] == [key]
        argv = ["--data-dir", config.data_dir, "--only-roots", "--no-daemon", f"--root=claude-code={native}"]
        # While the native file exists, doctor --verify-archive stores it again from there.
        assert cli.main([*argv, "--json", "doctor", "--verify-archive"]) == 0
        doc = json.loads(capsys.readouterr().out)
        check = next(c for c in doc["checks"] if c["name"] == "archive integrity")
        assert check["status"] == "warn" and "1 stored again from their native files" in check["message"]
        assert doc["archive_verify"]["damaged"] == [{"path": key, "problem": damaged[0]["problem"], "restored": True}]
        assert read_archived(config, key) == target.read_bytes()
        assert verify_store(config)["damaged"] == []
        blob = store.blob(key)  # damaged again
        raw = bytearray(blob.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        blob.write_bytes(bytes(raw))
        # The agent deletes it: the damaged copy is not written back, and the update says why.
        target.unlink()
        assert cli.main([*argv, "--json", "doctor", "--verify-archive"]) == 1
        doc = json.loads(capsys.readouterr().out)
        check = next(c for c in doc["checks"] if c["name"] == "archive integrity")
        assert check["status"] == "error" and key in check["message"] and "native file is gone" in check["message"]
        report = svc.update_index()
        assert any(
            "damaged archive frame" in e["error"] and "not served" in e["error"] for e in report["errors"]
        )
        assert not (Path(config.archive_dir) / key).exists()
    finally:
        svc.close()


def test_doctor_verify_archive_clean(machine: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    config, native = machine
    Archiver(config).mirror_units(units(native))
    argv = ["--data-dir", config.data_dir, "--only-roots", "--no-daemon", f"--root=claude-code={native}"]
    assert cli.main([*argv, "--json", "doctor", "--verify-archive"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["archive_verify"]["files"] >= 7 and doc["archive_verify"]["damaged"] == []
    assert 0 < doc["archive_verify"]["stored_bytes"] < doc["archive_verify"]["bytes"]


def test_torn_append_tail_is_ignored_and_cut(machine: tuple) -> None:
    config, native = machine
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = main_jsonl(native)
    key = rel(native, target)
    with open(arch.store.blob(key), "ab") as fh:
        fh.write(b"\x28\xb5\x2f\xfd half a frame")  # a crash mid-append, never recorded
    assert read_archived(config, key) == target.read_bytes()
    with open(target, "ab") as fh:
        fh.write(LINE % (1, 1))
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 1 and read_archived(config, key) == target.read_bytes()
    assert verify_store(config)["damaged"] == []
    assert arch.store.blob(key).stat().st_size == arch.store.get(key).zsize  # type: ignore[union-attr]


def test_plain_archive_is_converted_without_losing_a_file(machine: tuple) -> None:
    """An archive written before the store (plain files) is converted on the next update: files
    whose native copy exists move into the store, deleted ones stay readable."""
    config, native = machine
    plain = Path(config.archive_dir) / "claude-code"
    shutil.copytree(native, plain)
    files = sorted(p for p in native.rglob("*") if p.is_file())
    originals = {rel(native, p): p.read_bytes() for p in files}
    deleted = main_jsonl(native)
    deleted.unlink()
    svc = Service(config, workers=1)
    try:
        report = svc.update_index()
        assert report["errors"] == []
        assert (Path(config.archive_dir) / ".zstore" / CONVERTED_MARK).exists()
        for key, data in originals.items():
            assert read_archived(config, key) == data
        left = sorted(str(p.relative_to(plain)) for p in plain.rglob("*") if p.is_file())
        assert left == [str(deleted.relative_to(native))]  # only the deleted session stays plain
        assert (
            svc.call("sessions.get", {"agent": "claude-code", "id": deleted.stem})["session"]["archived"]
            is True
        )
    finally:
        svc.close()


def test_interrupted_conversion_resumes(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    plain = Path(config.archive_dir) / "claude-code"
    shutil.copytree(native, plain)
    originals = {rel(native, p): p.read_bytes() for p in native.rglob("*") if p.is_file()}
    arch = archiver_for(config)
    real = arch.store.put_whole
    calls = {"n": 0}

    def dies_on_third(*args: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(*args, **kw)

    monkeypatch.setattr(arch.store, "put_whole", dies_on_third)
    errors: list[dict[str, str]] = []
    prepare_view(arch, errors)
    assert len(errors) == 1 and "No space left" in errors[0]["error"]
    assert not (Path(config.archive_dir) / ".zstore" / CONVERTED_MARK).exists()
    for key, data in originals.items():  # every file is plain, stored, or both
        view = Path(config.archive_dir) / key
        assert (view.exists() and view.read_bytes() == data) or read_archived(config, key) == data
    monkeypatch.setattr(arch.store, "put_whole", real)
    errors = []
    prepare_view(arch, errors)
    assert errors == [] and (Path(config.archive_dir) / ".zstore" / CONVERTED_MARK).exists()
    assert all(read_archived(config, k) == d for k, d in originals.items())
    assert not any(p.is_file() for p in plain.rglob("*"))


def test_sync_push_and_export_of_an_archived_session(
    machine: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, native = machine
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        target = main_jsonl(native)
        original = target.read_bytes()
        target.unlink()
        svc.update_index()
    finally:
        svc.close()
    share = tmp_path / "share"
    share.mkdir()
    argv = ["--data-dir", config.data_dir, "--only-roots", "--no-daemon", f"--root=claude-code={native}"]
    assert cli.main([*argv, "--json", "sync", "push", str(share), "--collection", "laptop"]) == 0
    capsys.readouterr()
    pushed = share / "laptop" / rel(native, target)
    assert sha(pushed.read_bytes()) == sha(original)
    others = [p for p in native.rglob("*.jsonl")]
    assert others and all((share / "laptop" / rel(native, p)).read_bytes() == p.read_bytes() for p in others)
    assert os.path.getsize(pushed) == len(original)


def test_sqlite_store_deleted_is_written_back_from_its_snapshot(tmp_path: Path, corpus: Path) -> None:
    """An SQLite store (Kiro's data.sqlite3, many sessions) is archived as a consistent
    snapshot; deleted, it is written back byte for byte as stored and read by the same adapter."""
    db_dir = tmp_path / "kiro-cli"
    db_dir.mkdir()
    db = db_dir / "data.sqlite3"
    shutil.copy(corpus / "kiro/synthetic-agtail-sqlite/.local/share/kiro-cli/data.sqlite3", db)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"kiro={db}"], only_roots=True)
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        before = sorted(s["id"] for s in svc.call("sessions.list", {"limit": 100})["sessions"])
        assert len(before) >= 2
        rows = [r for r in archiver_for(config).store.rows() if r.path.startswith("kiro/")]
        assert len(rows) == 1
        stored = read_archived(config, rows[0].path)
        assert stored[:16] == b"SQLite format 3\x00"
        db.unlink()
        report = svc.update_index()
        assert report["errors"] == []
        view = Path(config.archive_dir) / rows[0].path
        assert sha(view.read_bytes()) == sha(stored)
        after = svc.call("sessions.list", {"limit": 100})["sessions"]
        assert sorted(s["id"] for s in after) == before and all(s["archived"] for s in after)
    finally:
        svc.close()


def test_file_that_shrinks_while_archived_is_retried_and_leaves_nothing(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native = machine
    target = main_jsonl(native)
    original = target.read_bytes()
    arch = Archiver(config)
    real_stat = os.stat

    def stat_says_longer(path: Any, *a: Any, **kw: Any) -> Any:
        st = real_stat(path, *a, **kw)
        if str(path) == str(target):
            return os.stat_result((*st[:6], st.st_size + 100, *st[7:]))
        return st

    monkeypatch.setattr(os, "stat", stat_says_longer)
    rep = arch.mirror_units(units(native))
    monkeypatch.setattr(os, "stat", real_stat)
    assert any("shrank while being archived" in e["message"] for e in rep["errors"])
    key = rel(native, target)
    assert arch.store.get(key) is None
    assert not list(arch.store.blob(key).parent.glob(".*.partial"))
    rep = arch.mirror_units(units(native))
    assert rep["errors"] == [] and read_archived(config, key) == original


def test_damaged_copy_heals_from_the_native_file_on_the_next_append(machine: tuple) -> None:
    """A row without digests of its ends (written before the catalog kept them) is compared
    with its archived bytes, read back: damage there is found and healed. (With digests the
    append reads no frame: tests/test_archive_ends.py.)"""
    config, native = machine
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = main_jsonl(native)
    key = rel(native, target)
    arch.store.db.execute("UPDATE files SET ends = NULL")
    blob = arch.store.blob(key)
    raw = bytearray(blob.read_bytes())
    raw[len(raw) - 20] ^= 0xFF  # in the last frame: the one an append compares against
    blob.write_bytes(bytes(raw))
    assert verify_store(config)["damaged"]
    with open(target, "ab") as fh:
        fh.write(LINE % (7, 7))
    rep = arch.mirror_units(units(native))
    assert rep["errors"] == [] and rep["copied"] == 1 and rep["kept"] == []
    assert read_archived(config, key) == target.read_bytes()
    assert verify_store(config)["damaged"] == []


def test_tail_compaction_keeps_full_frames_and_bytes(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends add small frames; past MAX_SMALL_FRAMES only the tail is recompressed: the full
    frames before it are kept as they were, and the bytes stay exact."""
    config, native = machine
    monkeypatch.setattr(framing, "FRAME_RAW", 1000)
    monkeypatch.setattr(framing, "MAX_SMALL_FRAMES", 4)
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = main_jsonl(native)
    key = rel(native, target)
    first = arch.store.get(key)
    assert first is not None and len(first.frames) > 5
    full = [f for f in first.frames if f[0] == 1000]
    for n in range(9):
        with open(target, "ab") as fh:
            fh.write(LINE % (n, n))
        rep = arch.mirror_units(units(native))
        assert rep["errors"] == [] and rep["appended"] == 1
        assert read_archived(config, key) == target.read_bytes()
    row = arch.store.get(key)
    assert row is not None and row.frames[: len(full)] == full
    assert sum(1 for f in row.frames if f[0] < 500) < 4
    assert arch.store.blob(key).stat().st_size == row.zsize
    assert verify_store(config)["damaged"] == []
    assert not list(arch.store.blob(key).parent.glob(".*.partial"))


def test_written_back_copies_are_not_rehashed_on_every_update(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native = machine
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        target = main_jsonl(native)
        original = target.read_bytes()
        target.unlink()
        svc.update_index()
        view = Path(config.archive_dir) / rel(native, target)
        assert view.read_bytes() == original
        arch = archiver_for(config)
        hashed: list[str] = []
        real = arch.store.matches
        monkeypatch.setattr(arch.store, "matches", lambda p, s: hashed.append(p) or real(p, s))
        svc.update_index()
        assert hashed == []  # size and mtime said it is the written-back copy
        os.utime(view, ns=(1, 1))  # same bytes, another mtime: hashed once, then trusted again
        svc.update_index()
        assert len(hashed) == 1 and view.stat().st_mtime_ns != 1
        svc.update_index()
        assert len(hashed) == 1
        view.write_bytes(original[:-10] + b"X" * 10)  # another content: written back again
        os.utime(view, ns=(1, 1))
        svc.update_index()
        assert view.read_bytes() == original
    finally:
        svc.close()
