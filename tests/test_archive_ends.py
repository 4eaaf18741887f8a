"""The archive's boundary check by digests (agtaild.store.archive.ends): an append compares the
native file's first and last BOUNDARY_WINDOW bytes with the digests the catalog keeps — nothing
decompressed — and still tells an append from a rewrite; rows written before the catalog kept
digests fall back to reading the archived bytes and gain them; a crash between the blob's
write and the row's commit leaves the old row, whose digests still hold."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import load_config
from agtaild.store.archive import blobs as archive_store
from agtaild.store.archive import catalog as catalog_module
from agtaild.store.archive import framing
from agtaild.store.archive.archiver import Archiver, read_archived
from agtaild.store.archive.blobs import ZStore
from agtaild.store.archive.ends import BOUNDARY_WINDOW as W
from agtaild.store.archive.ends import EndsDigest
from agtaild.store.archive.view import verify_store

CLAUDE = "real/claude-2.1.197/projects"
REPO = Path(__file__).resolve().parent.parent
LINE = b'{"type":"user","message":{"role":"user","content":"line %d %s"},"uuid":"e-%d","sessionId":"s"}\n'


@pytest.fixture
def machine(tmp_path: Path, corpus: Path) -> tuple[Any, Path, Path]:
    """The corpus's Claude Code sessions, the largest grown past three windows (its archived
    copy then has distinct first and last windows), mirrored once."""
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    target = max(native.glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
    grow(target, 3 * W)
    config = load_config(
        data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True
    )
    assert Archiver(config).mirror_units(units(native))["errors"] == []
    return config, native, target


def units(native: Path) -> list[Any]:
    return list(get_adapter("claude-code").discover(native))


def grow(path: Path, nbytes: int, tag: str = "x") -> None:
    with open(path, "ab") as fh:
        n = 0
        while n < nbytes:
            line = LINE % (n, tag.encode(), n)
            fh.write(line)
            n += len(line)


def key(native: Path, path: Path) -> str:
    return f"claude-code/{path.relative_to(native)}"


def expected_ends(data: bytes) -> list[Any]:
    return [W, hashlib.sha256(data[:W]).hexdigest(), hashlib.sha256(data[-W:]).hexdigest()]


def no_frame_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every frame the store decompresses to read it back (not those it checks as it writes)."""
    reads: list[str] = []
    real = framing.decompress

    def recording(dctx: Any, z: bytes, raw_len: int, digest: str, where: str) -> bytes:
        reads.append(where)
        return real(dctx, z, raw_len, digest, where)

    monkeypatch.setattr(framing, "decompress", recording)
    return reads


def test_append_checks_digests_without_reading_a_frame(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native, target = machine
    arch = Archiver(config)
    row = arch.store.get(key(native, target))
    assert row is not None and row.ends == expected_ends(target.read_bytes())
    reads = no_frame_read(monkeypatch)
    for n in range(3):
        grow(target, 200 + n * W // 2, f"a{n}")  # smaller, then larger than a window
        rep = arch.mirror_units(units(native))
        assert (rep["errors"], rep["appended"], rep["copied"], rep["kept"]) == ([], 1, 0, [])
        data = target.read_bytes()
        assert arch.store.get(key(native, target)).ends == expected_ends(data)  # type: ignore[union-attr]
    assert reads == []
    assert read_archived(config, key(native, target)) == target.read_bytes()


def test_small_file_grows_past_the_window(machine: tuple) -> None:
    """A file shorter than a window: its head and tail are the whole file, and both grow."""
    config, native, _ = machine
    arch = Archiver(config)
    small = min(native.glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
    assert small.stat().st_size < W
    assert arch.store.get(key(native, small)).ends == expected_ends(small.read_bytes())  # type: ignore[union-attr]
    for size in (100, W // 2, W):
        grow(small, size, f"s{size}")
        rep = arch.mirror_units(units(native))
        assert (rep["errors"], rep["appended"], rep["kept"]) == ([], 1, [])
        assert arch.store.get(key(native, small)).ends == expected_ends(small.read_bytes())  # type: ignore[union-attr]
    assert read_archived(config, key(native, small)) == small.read_bytes()


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Truncate and write anew, keeping the inode (as an agent rewriting its log would)."""
    inode = path.stat().st_ino
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(data)
    assert path.stat().st_ino == inode


@pytest.mark.parametrize("where", ["head", "boundary", "boundary-window-start"])
def test_rewrite_in_place_then_grown_is_kept_as_a_conflict(machine: tuple, where: str) -> None:
    """The same bytes with one changed — in the head, just before the old end, or at the first
    byte of the last window — then appended to: not an append; the archived copy is kept."""
    config, native, target = machine
    arch = Archiver(config)
    before = target.read_bytes()
    at = {"head": 10, "boundary": len(before) - 2, "boundary-window-start": len(before) - W}[where]
    changed = bytearray(before)
    changed[at] ^= 0x01
    rewrite_in_place(target, bytes(changed))
    rep = arch.mirror_units(units(native))  # same size, other bytes: stored anew, history kept
    assert rep["appended"] == 0 and len(rep["kept"]) == 1
    assert read_archived(config, rep["kept"][0]) == before
    # and again, now with an append after the changed byte: still a conflict
    again = bytearray(changed)
    again[at] ^= 0x02
    rewrite_in_place(target, bytes(again) + LINE % (1, b"after", 1))
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 0 and len(rep["kept"]) == 1
    assert read_archived(config, rep["kept"][0]) == bytes(changed)
    assert read_archived(config, key(native, target)) == target.read_bytes()
    assert arch.store.get(key(native, target)).ends == expected_ends(target.read_bytes())  # type: ignore[union-attr]


def test_same_size_rewrite_then_append_of_a_small_file(machine: tuple) -> None:
    """A file within one window: its single digest covers every byte before the append."""
    config, native, _ = machine
    arch = Archiver(config)
    small = min(native.glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
    before = small.read_bytes()
    changed = bytearray(before)
    changed[len(before) // 2] ^= 0x01
    rewrite_in_place(small, bytes(changed) + LINE % (2, b"grown", 2))
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 0 and len(rep["kept"]) == 1
    assert read_archived(config, rep["kept"][0]) == before


def test_row_without_digests_falls_back_and_gains_them(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native, target = machine
    arch = Archiver(config)
    path = key(native, target)
    arch.store.db.execute("UPDATE files SET ends = NULL")
    assert arch.store.get(path).ends is None  # type: ignore[union-attr]
    reads = no_frame_read(monkeypatch)
    grow(target, 500, "fallback")
    rep = arch.mirror_units(units(native))
    assert (rep["errors"], rep["appended"], rep["kept"]) == ([], 1, [])
    assert reads  # the archived windows were read back
    assert arch.store.get(path).ends == expected_ends(target.read_bytes())  # type: ignore[union-attr]
    reads.clear()
    grow(target, 500, "digests")
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 1 and reads == []
    # and a rewrite of a row without digests is still found by the fallback
    arch.store.db.execute("UPDATE files SET ends = NULL")
    before = target.read_bytes()
    rewrite_in_place(target, b"X" + before[1:] + LINE % (3, b"more", 3))
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 0 and read_archived(config, rep["kept"][0]) == before


def test_catalog_without_the_column_gains_it(machine: tuple) -> None:
    """A catalog written before the ends column: opened, it gains the column; its rows have
    no digests until their next append."""
    config, native, target = machine
    catalog = Path(config.archive_dir) / ".zstore" / "catalog.sqlite3"
    db = sqlite3.connect(catalog)
    db.execute("ALTER TABLE files DROP COLUMN ends")
    db.close()
    arch = Archiver(config)
    assert arch.store.get(key(native, target)).ends is None  # type: ignore[union-attr]
    grow(target, 300, "old")
    rep = arch.mirror_units(units(native))
    assert (rep["errors"], rep["appended"]) == ([], 1)
    assert arch.store.get(key(native, target)).ends == expected_ends(target.read_bytes())  # type: ignore[union-attr]


def test_catalog_that_cannot_gain_the_column_is_used_without(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native, target = machine
    catalog = Path(config.archive_dir) / ".zstore" / "catalog.sqlite3"
    db = sqlite3.connect(catalog)
    db.execute("ALTER TABLE files DROP COLUMN ends")
    db.close()

    def read_only(db: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(catalog_module, "_add_ends_column", read_only)
    arch = Archiver(config)
    grow(target, 300, "ro")
    rep = arch.mirror_units(units(native))
    assert (rep["errors"], rep["appended"]) == ([], 1)
    assert arch.store.get(key(native, target)).ends is None  # type: ignore[union-attr]
    assert read_archived(config, key(native, target)) == target.read_bytes()


def test_truncated_blob_is_stored_again_from_the_native_file(machine: tuple) -> None:
    config, native, target = machine
    arch = Archiver(config)
    blob = arch.store.blob(key(native, target))
    with open(blob, "r+b") as fh:
        fh.truncate(blob.stat().st_size - 10)
    grow(target, 100, "t")
    rep = arch.mirror_units(units(native))
    assert (rep["errors"], rep["copied"], rep["appended"], rep["kept"]) == ([], 1, 0, [])
    assert read_archived(config, key(native, target)) == target.read_bytes()
    assert verify_store(config)["damaged"] == []


def test_flipped_byte_is_found_on_read_not_served(machine: tuple) -> None:
    """An append no longer decompresses the last frame, so damage there is found by the reads
    (and doctor --verify-archive): never served, and the appended bytes are still stored."""
    config, native, target = machine
    arch = Archiver(config)
    path = key(native, target)
    blob = arch.store.blob(path)
    raw = bytearray(blob.read_bytes())
    raw[len(raw) - 20] ^= 0xFF
    blob.write_bytes(bytes(raw))
    grow(target, 100, "f")
    rep = arch.mirror_units(units(native))
    assert rep["errors"] == [] and rep["appended"] == 1
    assert [d["path"] for d in verify_store(config)["damaged"]] == [path]
    with pytest.raises(framing.ArchiveDamaged):
        read_archived(config, path)
    row = arch.store.get(path)
    assert row is not None and row.size == target.stat().st_size


def test_damaged_tail_is_found_before_it_is_recompressed(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The append that recompresses the tail of small frames reads them: damage there is found
    by the boundary check, and the file is stored anew from the native file."""
    config, native, target = machine
    monkeypatch.setattr(framing, "MAX_SMALL_FRAMES", 3)
    arch = Archiver(config)
    path = key(native, target)
    for n in range(2):
        grow(target, 100, f"d{n}")
        assert arch.mirror_units(units(native))["appended"] == 1
    row = arch.store.get(path)
    assert row is not None and sum(1 for f in row.frames if f[0] < framing.FRAME_RAW // 2) == 3
    blob = arch.store.blob(path)
    raw = bytearray(blob.read_bytes())
    raw[len(raw) - row.frames[-1][1] - 10] ^= 0xFF  # in the frame before the last
    blob.write_bytes(bytes(raw))
    grow(target, 100, "heal")
    rep = arch.mirror_units(units(native))
    assert (rep["errors"], rep["copied"], rep["appended"], rep["kept"]) == ([], 1, 0, [])
    assert read_archived(config, path) == target.read_bytes()
    assert verify_store(config)["damaged"] == []


def test_ends_stay_right_through_small_frames_and_compaction(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Frames much smaller than a window, and the tail recompressed on the way."""
    config, native, target = machine
    monkeypatch.setattr(framing, "FRAME_RAW", 1000)
    monkeypatch.setattr(framing, "MAX_SMALL_FRAMES", 3)
    config = load_config(
        data_dir=str(tmp_path / "data2"), root_options=[f"claude-code={native}"], only_roots=True
    )
    arch = Archiver(config)
    arch.mirror_units(units(native))
    assert len(arch.store.get(key(native, target)).frames) > 3 * W // 1000  # type: ignore[union-attr]
    path = key(native, target)
    for n in range(8):
        grow(target, 300 + 2000 * (n % 3), f"c{n}")
        rep = arch.mirror_units(units(native))
        assert (rep["errors"], rep["appended"], rep["kept"]) == ([], 1, [])
        assert arch.store.get(path).ends == expected_ends(target.read_bytes())  # type: ignore[union-attr]
    assert read_archived(config, path) == target.read_bytes()
    assert verify_store(config)["damaged"] == []


def test_append_without_checked_windows_drops_the_digests(machine: tuple) -> None:
    """The store's append given no windows cannot say what the new ends are: the row keeps
    none (and the next append compares bytes read back) rather than wrong ones."""
    config, native, target = machine
    store = ZStore(Path(config.archive_dir))
    path = key(native, target)
    row = store.append(path, [b"more\n"], 1)
    assert row.ends is None and store.get(path).ends is None  # type: ignore[union-attr]
    data = b"".join(store.read(path))
    assert EndsDigest.after(len(data), None, data[:W], data[-W:]) is not None
    store.close()


CHILD = textwrap.dedent(
    """
    import os, sys
    from agtaild.adapters import get_adapter
    from agtaild.config import load_config
    from agtaild.store.archive.archiver import Archiver
    data, native = sys.argv[1], sys.argv[2]
    config = load_config(data_dir=data, root_options=[f"claude-code={native}"], only_roots=True)
    arch = Archiver(config)
    adapter = get_adapter("claude-code")
    report = arch.mirror_pairs([(adapter, u) for u in adapter.discover(native)], defer=True)
    assert report["appended"] == 1 and arch.store.pending() == 1, report
    os._exit(0)  # a crash: the new frames are written, their row never committed
    """
)


def test_crash_between_blob_write_and_row_commit(machine: tuple, tmp_path: Path) -> None:
    config, native, target = machine
    path = key(native, target)
    store = ZStore(Path(config.archive_dir))
    old = store.get(path)
    assert old is not None
    store.close()
    archived = target.read_bytes()
    grow(target, 5000, "crash")
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(script), config.data_dir, str(native)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    arch = Archiver(config)
    row = arch.store.get(path)
    assert row is not None and (row.frames, row.ends) == (old.frames, old.ends)  # the old row, whole
    assert arch.store.blob(path).stat().st_size > row.zsize  # the unrecorded frames are there
    assert read_archived(config, path) == archived
    rep = arch.mirror_units(units(native))  # the next mirror appends again, cutting them off
    assert (rep["errors"], rep["appended"], rep["kept"]) == ([], 1, [])
    assert read_archived(config, path) == target.read_bytes()
    row = arch.store.get(path)
    assert row is not None and row.ends == expected_ends(target.read_bytes())
    assert arch.store.blob(path).stat().st_size == row.zsize
    assert verify_store(config)["damaged"] == []


def test_append_to_a_copy_that_changed_meanwhile_is_refused(machine: tuple) -> None:
    """The windows were checked at one size; another process appended meanwhile: nothing is
    written (the file is retried next time)."""
    config, native, target = machine
    store = ZStore(Path(config.archive_dir))
    path = key(native, target)
    row = store.get(path)
    assert row is not None
    data = target.read_bytes()
    blob_size = store.blob(path).stat().st_size
    with pytest.raises(archive_store.AgtailError, match="changed meanwhile"):
        store.append(path, [b"more\n"], 1, checked=(row.size - 1, data[:W], data[-W - 1 : -1]))
    assert store.get(path).frames == row.frames and store.blob(path).stat().st_size == blob_size  # type: ignore[union-attr]
    store.close()
