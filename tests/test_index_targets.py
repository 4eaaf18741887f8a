"""The watcher's fast path (agtaild.index.targets): an ``only_paths`` update of appended files
reads the stored units without discovery, and gives the same rows as a clean rebuild; every
other change (new, moved, deleted, shrunk, replaced files) still goes through discovery."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agtaild.index.discovery import Discovery
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, sample_lines, toy_config, toy_registry, write_session
from tests.test_index_incremental import (
    current,
    fresh_snapshot,
    make_corpus,
    op_append,
    op_replace,
    op_truncate,
)

__all__ = ["toy_registry"]


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many discoveries ran (one entry per Discovery.candidates call)."""
    calls: list[int] = []
    real = Discovery.candidates

    def spy(self: Discovery, roots: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(roots))
        return real(self, roots, *args, **kwargs)

    monkeypatch.setattr(Discovery, "candidates", spy)
    return calls


def _append(a: Path) -> list[Path]:
    if not a.exists():
        return [a]
    op_append(a)
    return [a]


def _truncate(a: Path) -> list[Path]:
    op_truncate(a)
    return [a]


def _replace(a: Path) -> list[Path]:
    op_replace(a)
    return [a]


def _delete(a: Path) -> list[Path]:
    if a.exists():
        a.unlink()
    return [a]


def _move(a: Path) -> list[Path]:
    """Renamed into another project folder: the watcher reports both paths."""
    dest = a.parent.parent / "p9" / a.name
    if not a.exists():
        return [a]
    dest.parent.mkdir(exist_ok=True)
    shutil.move(a, dest)
    return [a, dest]


def _new(a: Path) -> list[Path]:
    new = a.parent / "N.jsonl"
    write_session(new, sample_lines("N", 2, word="newcomer"))
    return [new]


OPS: dict[str, Callable[[Path], list[Path]]] = {
    "append": _append,
    "truncate": _truncate,
    "replace": _replace,
    "delete": _delete,
    "move": _move,
    "new": _new,
}


@pytest.mark.parametrize("order", list(itertools.permutations(OPS, 3)), ids="-".join)
def test_watched_paths_equal_a_rebuild(
    order: tuple[str, ...], tmp_path: Path, toy_registry: ToyAdapter
) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        for name in order:
            paths = OPS[name](a)
            svc.update_index(only_paths=[str(p) for p in paths])
            assert current(svc) == fresh_snapshot(tmp_path, root), f"after {name}"
    finally:
        svc.close()


def test_an_append_skips_discovery_and_anything_else_does_not(
    tmp_path: Path, toy_registry: ToyAdapter, walks: list[int]
) -> None:
    root = tmp_path / "root"
    a = make_corpus(root)
    b = root / "p2" / "B.jsonl"
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        assert len(walks) == 1
        op_append(a)
        op_append(b)
        report = svc.update_index(only_paths=[str(a), str(b), str(a)])
        assert len(walks) == 1 and report["read"] == 2
        assert sorted(c["action"] for c in report["changed"]) == ["updated", "updated"]
        assert svc.call("search", {"q": "zebra"})["hits"]
        # Unchanged since: nothing to read, still no discovery.
        assert svc.update_index(only_paths=[str(a)])["read"] == 0 and len(walks) == 1
        for change in (_truncate, _replace, _new, _delete):
            paths = change(a)
            walks.clear()
            svc.update_index(only_paths=[str(p) for p in paths])
            assert len(walks) == 1, change.__name__
            assert current(svc) == fresh_snapshot(tmp_path, root), change.__name__
        walks.clear()
        # A file no unit is made of, and a path outside every root: discovery decides.
        (root / "p2" / "notes.txt").write_text("x")
        assert svc.update_index(only_paths=[str(root / "p2" / "notes.txt")])["read"] == 0
        assert len(walks) == 1
    finally:
        svc.close()


def test_an_append_under_a_reconfigured_root_goes_through_discovery(
    tmp_path: Path, toy_registry: ToyAdapter, walks: list[int]
) -> None:
    """A stored unit whose root is not the one discovery would give it now (an earlier root
    listed that also holds it) is not read from its stored row."""
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root / "p1"))
    try:
        svc.update_index()
    finally:
        svc.close()
    svc = Service(toy_config(tmp_path, root))
    try:
        op_append(a)
        walks.clear()
        svc.update_index(only_paths=[str(a)])
        assert walks, "the unit's stored root is not the configured one: discovery must run"
        assert current(svc) == fresh_snapshot(tmp_path, root)
    finally:
        svc.close()


def test_a_vanished_watched_file_is_kept_when_its_folder_cannot_be_read(
    tmp_path: Path, toy_registry: ToyAdapter
) -> None:
    """The fast path never decides a deletion: an unreadable path falls back to discovery,
    which keeps the unit (a read error is never a deletion)."""
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        before = svc.call("sessions.list", {})["sessions"]
        moved = tmp_path / "elsewhere"
        os.rename(a.parent, moved)
        os.symlink(moved / "loop", a.parent)  # a dangling link where the folder was: ENOENT below
        os.symlink(a.parent, moved / "loop")  # … made a loop: ELOOP, not a known deletion
        report = svc.update_index(only_paths=[str(a)])
        assert report["read"] == 0
        assert len(svc.call("sessions.list", {})["sessions"]) == len(before)
    finally:
        svc.close()


def test_an_adapter_that_does_not_keep_its_units_on_append_goes_through_discovery(
    tmp_path: Path, toy_registry: ToyAdapter, walks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ToyAdapter, "appends_keep_units", False)
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        op_append(a)
        walks.clear()
        assert svc.update_index(only_paths=[str(a)])["read"] == 1
        assert len(walks) == 1
    finally:
        svc.close()


def test_the_before_discovery_hooks_run_only_before_a_discovery(
    tmp_path: Path, toy_registry: ToyAdapter, walks: list[int]
) -> None:
    """The archive's write-back of deleted files (a hook before discovery, ~1,500 lstat calls
    on the bench corpus) is for discovery to find them: an append to stored units skips both."""
    root = tmp_path / "root"
    a = make_corpus(root)
    svc = Service(toy_config(tmp_path, root))
    hooked: list[int] = []
    svc.before_discovery.append(lambda roots, errors, present, **_: hooked.append(len(walks)))
    try:
        svc.update_index()
        assert hooked == [1] and len(walks) == 1  # within the discovery it prepares
        op_append(a)
        assert svc.update_index(only_paths=[str(a)])["read"] == 1
        assert hooked == [1] and len(walks) == 1
        _delete(a)
        svc.update_index(only_paths=[str(a)])
        assert hooked == [1, 2] and len(walks) == 2
        assert current(svc) == fresh_snapshot(tmp_path, root)
    finally:
        svc.close()
