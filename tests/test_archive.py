"""The archive mirrors native files: new bytes appended and verified, rewrites kept, off when off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import RootSpec, load_config
from agtaild.store.archive.archiver import Archiver, archive_usage, read_archived
from agtaild.store.archive.hook import after_read_hook

CLAUDE = "real/claude-2.1.197/projects"


@pytest.fixture
def machine(tmp_path: Path, corpus: Path) -> tuple[object, Path]:
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    return config, native


def units(native: Path) -> list:
    return list(get_adapter("claude-code").discover(native))


def archived(config: object, rel: str | Path) -> bytes:
    """The archived bytes of an ``agent/rel`` path, read back through the compressed store."""
    return read_archived(config, str(rel))


def native_files(native: Path) -> list[Path]:
    return sorted(p for p in native.rglob("*") if p.is_file())


def test_mirrors_every_native_file(machine: tuple, tmp_path: Path) -> None:
    config, native = machine
    rep = Archiver(config).mirror_units(units(native))
    assert rep["errors"] == []
    mirrored = 0
    arch = Archiver(config)
    for f in native_files(native):
        row = arch.store.get(f"claude-code/{f.relative_to(native)}")
        if row is not None:
            assert archived(config, f"claude-code/{f.relative_to(native)}") == f.read_bytes()
            assert row.mtime_ns == f.stat().st_mtime_ns
            mirrored += 1
    assert mirrored == rep["files"] >= 7
    # Stored compressed, and no plain copy while the native file exists.
    rows = arch.store.rows()
    assert sum(r.zsize for r in rows) < sum(r.size for r in rows) / 2
    assert not any(p.suffix == ".jsonl" for p in Path(config.archive_dir).rglob("*"))
    again = Archiver(config).mirror_units(units(native))
    assert (again["files"], again["bytes"]) == (0, 0)


def test_appended_bytes_only(machine: tuple) -> None:
    config, native = machine
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = sorted(native.glob("*/*.jsonl"))[0]
    extra = b'{"type":"user","message":{"role":"user","content":"more"},"uuid":"zz-1"}\n'
    with open(target, "ab") as fh:
        fh.write(extra)
    rep = arch.mirror_units(units(native))
    assert (rep["files"], rep["appended"], rep["bytes"], rep["copied"]) == (1, 1, len(extra), 0)
    assert archived(config, f"claude-code/{target.relative_to(native)}") == target.read_bytes()


def test_rewritten_file_is_copied_and_shrunk_history_kept(machine: tuple) -> None:
    config, native = machine
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = sorted(native.glob("*/*.jsonl"))[0]
    before = target.read_bytes()
    target.write_bytes(before.splitlines(keepends=True)[0])
    rep = arch.mirror_units(units(native))
    assert rep["copied"] == 1 and len(rep["kept"]) == 1
    assert archived(config, rep["kept"][0]) == before
    assert archived(config, f"claude-code/{target.relative_to(native)}") == target.read_bytes()


def test_archive_off_writes_nothing(machine: tuple) -> None:
    config, native = machine
    config.archive = False
    rep = Archiver(config).mirror_units(units(native))
    assert rep["files"] == 0
    assert not Path(config.archive_dir).exists() or not any(Path(config.archive_dir).rglob("*.jsonl"))
    assert archive_usage(config)["enabled"] is False


def test_index_hook_mirrors_native_units_only(machine: tuple) -> None:
    config, native = machine
    hook = after_read_hook(config)
    adapter = get_adapter("claude-code")
    unit = units(native)[0]
    hook(adapter, unit, RootSpec(agent="claude-code", path=str(native), kind="imported", collection="x"))
    assert archive_usage(config)["files"] == 0
    hook(adapter, unit, RootSpec(agent="claude-code", path=str(native)))
    assert archive_usage(config)["files"] >= 1


def test_archive_inside_native_root_is_refused(tmp_path: Path, corpus: Path) -> None:
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(data_dir=str(native / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    rep = Archiver(config).mirror_units(units(native))
    assert rep["files"] == 0 and "never writes" in rep["errors"][0]["message"]


def test_in_place_rewrite_keeps_history_but_same_bytes_do_not(machine: tuple) -> None:
    """A log rewritten in place (same inode, truncated, regrown longer with other bytes) keeps
    its archived copy; the same bytes written again (a touch) keep nothing extra."""
    config, native = machine
    arch = Archiver(config)
    arch.mirror_units(units(native))
    target = sorted(native.glob("*/*.jsonl"))[0]
    before = target.read_bytes()
    target.write_bytes(before)  # same content, new mtime
    rep = arch.mirror_units(units(native))
    assert rep["kept"] == [] and rep["files"] == 0
    inode = target.stat().st_ino
    with open(target, "r+b") as fh:
        fh.truncate(0)
        fh.write(b'{"type":"user","message":{"role":"user","content":"new"}}\n' * (len(before) // 40))
    assert target.stat().st_ino == inode and target.stat().st_size > len(before)
    rep = arch.mirror_units(units(native))
    assert rep["appended"] == 0 and len(rep["kept"]) == 1
    assert archived(config, rep["kept"][0]) == before
    assert archived(config, f"claude-code/{target.relative_to(native)}") == target.read_bytes()
