"""The pins and the finisher against what may be found in (or done to) their folders.

Under ``archive/.zstore/pins/`` the finisher follows no symlink and removes only what agtail
made (dir fds, ``O_NOFOLLOW``, lstat: agtaild.sync.safety); whatever goes wrong in one set
stays in that set, under the three-attempts rule, while the others drain; a pin is opened
without following a symlink and must still be the inode pinned; and a pinned file rewritten
in place before the finisher stored it is found out (the size and boundary digests recorded
at pin time, agtaild.store.archive.ends), its current bytes kept and the loss reported — in
``pins/finisher.log`` and by ``agtail doctor``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.store.archive import finish as archive_finish
from agtaild.store.archive import pinned as archive_pinned
from agtaild.store.archive.archiver import read_archived
from agtaild.store.archive.view import verify_store

from .test_archive_batch import assert_complete, committed_rows, files
from .test_archive_pins import index, machine, no_finisher, store_root

__all__ = ["machine"]  # the fixture, shared with test_archive_pins


def doctor(config: Any, native: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    argv = ["--no-daemon", "--data-dir", config.data_dir, "--only-roots", "--root", f"claude-code={native}"]
    main([*argv, "--json", "doctor"])
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def outside_folder(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder of the user's that agtail never made: its files must stay as they are."""
    folder = tmp_path / "somewhere"
    folder.mkdir()
    made = {"config": b"not msgpack", "manifest": b"[]\n", "0": b"precious", "notes.txt": b"keep me", "ready": b""}
    for name, data in made.items():
        (folder / name).write_bytes(data)
    return folder, made


def assert_untouched(folder: Path, made: dict[str, bytes]) -> None:
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == made


# -- 6: no symlink is followed, nothing agtail did not make is removed ---------------------


def test_a_symlink_named_like_a_set_is_not_followed(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    folder, made = outside_folder(tmp_path)
    pins = store_root(config) / "pins"
    (pins / "99999999-1").symlink_to(folder)  # a process that is gone: the set would be taken
    report = archive_finish.finish(store_root(config))
    assert_untouched(folder, made)
    assert report["errors"] == []
    assert (pins / "99999999-1").is_symlink()  # not agtail's: left where it is
    assert_complete(config, native)  # the real set drained all the same


def test_symlinks_inside_a_set_are_not_followed(machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A set whose config, manifest and a pin are symlinks: nothing is read through them,
    nothing they name is removed, and the set's own files are still archived."""
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    folder, made = outside_folder(tmp_path)
    [real] = archive_pinned.sets(store_root(config))
    (real / "999").symlink_to(folder / "0")
    (real / "stray-link").symlink_to(folder)
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_untouched(folder, made)
    assert_complete(config, native)
    # A second set made only of symlinks (as if a process planted it):
    fake = store_root(config) / "pins" / "99999998-1"
    fake.mkdir()
    for name in ("config", "manifest", "ready", "0"):
        (fake / name).symlink_to(folder / name)
    report = archive_finish.finish(store_root(config))
    assert report["errors"]  # unreadable: said so
    assert_untouched(folder, made)
    aside = fake.with_name(fake.name + archive_pinned.LEFT_SUFFIX)  # moved aside, not taken again
    assert all((aside / n).is_symlink() for n in ("config", "manifest", "ready", "0"))
    assert list(archive_pinned.sets(store_root(config))) == []


def test_a_symlinked_pins_folder_is_not_used(machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``.zstore/pins`` itself a symlink: no pin is made through it (the update mirrors
    instead) and the finisher does not look there."""
    config, native = machine
    folder, made = outside_folder(tmp_path)
    store_root(config).mkdir(parents=True)
    (store_root(config) / "pins").symlink_to(folder)
    assert index(config)["errors"] == []
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert_untouched(folder, made)
    assert_complete(config, native)  # mirrored during the update


def test_a_symlink_in_the_view_is_not_written_through(machine: tuple, tmp_path: Path) -> None:
    """A folder of the archive's view replaced by a symlink: the write-back of a deleted
    session does not land in the folder it names."""
    config, native = machine
    assert index(config)["errors"] == []
    assert archive_finish.wait(store_root(config), 60)
    victim = sorted(native.glob("*/copy*.jsonl"))[0]
    project = victim.parent.name
    view = Path(config.archive_dir) / "claude-code"
    view.mkdir(parents=True, exist_ok=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (view / project).symlink_to(elsewhere)
    victim.unlink()
    report = index(config)
    assert list(elsewhere.iterdir()) == []
    assert any("symlink" in e["error"] for e in report["errors"])


# -- 7: what fails in one set stays in that set ---------------------------------------------


def two_sets(config: Any, native: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    extra = native / "-extra-project"
    shutil.copytree(next(p for p in native.iterdir() if p.is_dir()), extra)
    for p in extra.rglob("*"):
        os.utime(p, (1_700_000_000, 1_700_000_000))
    assert index(config)["errors"] == []
    sets = list(archive_pinned.sets(store_root(config)))
    assert len(sets) == 2
    return sets


def test_a_stray_folder_in_a_set_stops_nothing(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, native = machine
    first, _second = two_sets(config, native, monkeypatch)
    (first / "stray").mkdir()
    (first / "stray" / "inside").write_bytes(b"x")
    (first / "7777").mkdir()  # a folder named like a pin
    report = archive_finish.finish(store_root(config))
    assert report["sets"] == 2
    assert_complete(config, native)  # both sets' files archived
    aside = first.with_name(first.name + archive_pinned.LEFT_SUFFIX)  # moved aside: not taken again
    assert (aside / "stray" / "inside").read_bytes() == b"x"  # not agtail's: not removed
    assert list(archive_pinned.sets(store_root(config))) == []
    assert archive_pinned.pending(store_root(config)) == 0


def test_any_failure_of_one_set_is_contained_and_given_up_after_three_attempts(
    machine: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, native = machine
    first, second = two_sets(config, native, monkeypatch)
    real_read = archive_pinned.OpenSet.read

    def read(self: archive_pinned.OpenSet) -> Any:
        if self.folder.name == first.name:
            raise RuntimeError("something nobody foresaw")
        return real_read(self)

    monkeypatch.setattr(archive_pinned.OpenSet, "read", read)
    for attempt in range(1, archive_finish.MAX_ATTEMPTS + 1):
        report = archive_finish.finish(store_root(config))
        assert any("something nobody foresaw" in e["message"] for e in report["errors"])
        left = [f.name for f in archive_pinned.sets(store_root(config))]
        assert left == ([] if attempt == archive_finish.MAX_ATTEMPTS else [first.name])
        if attempt == 1:  # the other set drained at the first attempt
            assert not second.exists()
            assert any(path.startswith("claude-code/-extra-project/") for path in committed_rows(config))


# -- 8: a pin is opened without following a symlink, and must be the inode pinned ----------


def swap(pin: Path, other: Path, *, symlink: bool) -> None:
    pin.unlink()
    if symlink:
        pin.symlink_to(other)
    else:
        os.link(other, pin)


@pytest.mark.parametrize("symlink", [True, False], ids=["symlink", "other-inode"])
def test_a_swapped_pin_is_not_archived_as_the_session(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], symlink: bool
) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    [folder] = archive_pinned.sets(store_root(config))
    _config, entries = archive_pinned.read_set(folder)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_bytes(b'{"type":"user","message":{"role":"user","content":"a secret of someone else"}}\n')
    victim, kept = entries[0], entries[1]
    swap(folder / victim.pin, foreign, symlink=symlink)
    os.unlink(victim.local.source)  # the agent pruned it: the pin was its only copy
    swap(folder / kept.pin, foreign, symlink=symlink)  # this one's native file is still there
    archive_finish.finish(store_root(config))
    rows = committed_rows(config)
    archived = {p: read_archived(config, p) for p in rows}
    assert all(b"a secret of someone else" not in data for data in archived.values())
    assert os.fsencode(victim.local.path) not in {os.fsencode(p) for p in rows}  # lost, and said so
    assert read_archived(config, kept.local.path) == Path(kept.local.source).read_bytes()  # from its native file
    assert foreign.read_bytes().startswith(b'{"type"')  # untouched
    report = doctor(config, native, capsys)
    problems = report["archive"]["pin_problems"]
    assert any(p["path"] == victim.local.path and "lost" in p["problem"] for p in problems)
    check = next(c for c in report["checks"] if c["name"] == "archive pins")
    assert check["status"] == "warn"


def test_a_pin_records_the_inode_and_what_was_read(machine: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    config, _native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    [folder] = archive_pinned.sets(store_root(config))
    _config, entries = archive_pinned.read_set(folder)
    for e in entries:
        st = os.stat(e.local.source)
        assert (e.dev, e.ino, e.size) == (st.st_dev, st.st_ino, st.st_size)
        assert e.ends is not None and len(e.ends) == 3


# -- 9: a pinned file rewritten in place --------------------------------------------------


def test_a_pinned_file_rewritten_in_place_is_found_out(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    targets = sorted(native.glob("*/copy*.jsonl"))[:2]
    read = {t: t.read_bytes() for t in targets}
    for t in targets:  # same inode, truncated, then written anew
        with open(t, "r+b") as fh:
            fh.truncate(0)
            fh.write(b'{"type":"user","message":{"role":"user","content":"rewritten"},"uuid":"u-new","sessionId":"s"}\n')
    appended = sorted(native.glob("*/copy*.jsonl"))[2]
    with open(appended, "ab") as fh:  # an append is not a rewrite
        fh.write(b'{"type":"user","message":{"role":"user","content":"later"},"uuid":"u-later","sessionId":"s"}\n')
    targets[1].unlink()  # and then pruned: the pin is all there is
    with caplog.at_level(logging.WARNING):
        assert archive_finish.finish(store_root(config))["errors"] == []
    rels = {t: f"claude-code/{t.relative_to(native)}" for t in targets}
    # What could be kept is: the bytes the file holds now.
    assert b"rewritten" in read_archived(config, rels[targets[0]])
    assert b"rewritten" in read_archived(config, rels[targets[1]])
    assert verify_store(config)["damaged"] == []
    assert any("rewritten in place" in r.getMessage() for r in caplog.records)
    problems = doctor(config, native, capsys)["archive"]["pin_problems"]
    assert {p["path"] for p in problems} == set(rels.values())
    for p in problems:
        assert "rewritten in place" in p["problem"] and str(len(read[next(t for t in targets if rels[t] == p["path"])])) in p["problem"]
    assert files(native)  # the rest of the corpus, archived as usual
    assert read_archived(config, f"claude-code/{appended.relative_to(native)}") == appended.read_bytes()


def test_a_symlink_in_the_compressed_store_is_not_written_through(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder of ``.zstore`` replaced by a symlink: the store's writes refuse it (each file
    reported), and nothing lands in the folder it names."""
    config, _native = machine
    no_finisher(monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    agent_dir = store_root(config) / "claude-code"
    agent_dir.parent.mkdir(parents=True)
    agent_dir.symlink_to(elsewhere)
    assert index(config)["errors"] == []
    report = archive_finish.finish(store_root(config))
    assert list(elsewhere.iterdir()) == []
    assert report["errors"] and all("symlink" in e["message"] for e in report["errors"])


@pytest.mark.parametrize("same_size", [True, False], ids=["a-copy-of-it", "another-file"])
def test_a_blob_swapped_for_a_symlink_is_not_written_through(
    machine: tuple, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, same_size: bool
) -> None:
    """The next append neither writes into the file the symlink names nor reads it as the
    archived copy (even a copy of the blob, which has its size): the link is no blob of the
    store's, so the file is stored again from its native copy, in a real blob."""
    config, native = machine
    no_finisher(monkeypatch)
    assert index(config)["errors"] == []
    assert archive_finish.finish(store_root(config))["errors"] == []
    target = sorted(native.glob("*/*.jsonl"))[0]
    rel = f"claude-code/{target.relative_to(native)}"
    blob = store_root(config) / f"{rel}.zst"
    precious = tmp_path / "precious"
    precious.write_bytes(blob.read_bytes() if same_size else b"the user's own file")
    before = precious.read_bytes()
    blob.unlink()
    blob.symlink_to(precious)
    with open(target, "ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"more"},"uuid":"u-more","sessionId":"s"}\n')
    assert index(config)["errors"] == []
    assert archive_finish.finish(store_root(config))["errors"] == []
    assert precious.read_bytes() == before
    assert not blob.is_symlink()
    assert read_archived(config, rel) == target.read_bytes()
