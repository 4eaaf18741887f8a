"""Pins: a first index's native files held by hard links until the archive has stored them.

Storing a file in the archive is reading, hashing and compressing it: on the 200 MB bench
corpus ≈ 1.4 s of CPU, which a first index spent beside its own work on a 2-core machine. A
big update (agtaild.store.archive.hook) instead *pins* each native file it reads: a hard link
to it under ``.zstore/pins/<pid>-<n>/``, which costs a ``link()``. A pin is another name of the
same file, so it sees what the agent appends, and it keeps the bytes when the agent deletes the
file: nothing read by the index can be lost before the archive has it. When the update ends
the pins are made durable and sealed (``ready``); the finisher (agtaild.store.archive.finish),
a process of its own started then, archives each pinned file as the mirror would — recording
its native path — and removes the pins.

A set of pins is a folder with:

* ``config``: the update's Config (msgpack): the roots the files were read under;
* ``manifest``: one JSON line per pinned file: pin name, archive path, native path (text form,
  agtaild.fsnames), agent, archive path of its unit's main file;
* the pins, named ``0``, ``1``, …;
* ``ready``: written once the rest is durable.

A folder without ``ready`` whose process is gone (an index killed meanwhile) is finished too,
from what its manifest names (a torn last line is skipped); the update's open mark
(agtaild.store.archive.catchup) makes the next update mirror the native files anyway.

Files that cannot be pinned — another file system (a link cannot cross it), a file system
without hard links, an SQLite store (it must be copied consistently with its journal, under
its own name) — are not pinned: the hook mirrors their unit as before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agtaild.fsnames import from_text, to_text
from agtaild.store.archive.catchup import process_alive
from agtaild.store.archive.durable import create_marker, fsync_dir
from agtaild.sync.native import SQLITE_MAGIC, LocalFile
from agtaild.sync.safety import path_problem

PINS_DIR = "pins"
CONFIG = "config"
MANIFEST = "manifest"
READY = "ready"

_encode = msgspec.json.Encoder().encode
_Entry = tuple[str, str, str, str, str]
_decode_entry = msgspec.json.Decoder(_Entry).decode


def pins_root(store_root: Path | str) -> Path:
    return Path(store_root) / PINS_DIR


class PinSet:
    """The pins of one update (created by :meth:`create`, filled by :meth:`pin`, ended by
    :meth:`seal` or :meth:`abandon`). Used from one thread (the update's after-read thread)."""

    def __init__(self, folder: Path, archiver: Any) -> None:
        self.folder = folder
        self.archiver = archiver
        self.count = 0
        self._manifest = open(folder / MANIFEST, "ab")  # noqa: SIM115 -- open until seal()

    @classmethod
    def create(cls, archiver: Any, config: Any) -> PinSet:
        """A new, empty set under the archiver's store (OSError when it cannot be made)."""
        root = pins_root(archiver.store.root)
        root.mkdir(parents=True, exist_ok=True)
        folder = root / f"{os.getpid()}-{time.time_ns()}"
        folder.mkdir()
        (folder / CONFIG).write_bytes(msgspec.msgpack.encode(config))
        return cls(folder, archiver)

    def pin(self, adapter: Any, unit: Any) -> bool:
        """Pin every file of ``unit`` the archive would store; False (and nothing pinned) when
        one of them cannot be pinned: the caller mirrors the unit instead."""
        files = self.archiver.files_of([(adapter, unit)])
        made: list[tuple[str, LocalFile, str]] = []
        try:
            for local, main in files:
                name = str(self.count + len(made))
                pin = self.folder / name
                os.link(local.source, pin, follow_symlinks=False)
                made.append((name, local, main))
                with open(pin, "rb") as fh:
                    if fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
                        raise OSError("an SQLite store is copied with its journal, not pinned")
        except (OSError, NotImplementedError):  # NotImplementedError: no linkat() here
            for name, _local, _main in made:
                (self.folder / name).unlink(missing_ok=True)
            return False
        lines = [
            _encode((name, to_text(local.path), to_text(local.source), local.agent, main)) + b"\n"
            for name, local, main in made
        ]
        self._manifest.write(b"".join(lines))
        self.count += len(made)
        return True

    def seal(self, *, durable: bool = True) -> None:
        """Make the pins and their manifest durable, then mark the set ready (OSError when it
        could not be: the update then stays open and the next one catches up). Not ``durable``:
        for a small update, whose own copies wait for the disk no more than these (its open mark
        is not fsynced either: agtaild.store.archive.catchup)."""
        self._manifest.flush()
        if durable:
            os.fsync(self._manifest.fileno())
        self._manifest.close()
        if durable:
            fsync_dir(self.folder)
        create_marker(self.folder / READY, durable=durable)

    def abandon(self) -> None:
        """Remove a set that holds no pin."""
        self._manifest.close()
        remove(self.folder)


class Pinned(msgspec.Struct):
    """One pinned file, as the finisher reads it back."""

    pin: str
    local: LocalFile
    main: str


def read_set(folder: Path) -> tuple[Any, list[Pinned]]:
    """A set's config and its pinned files that are still there (a torn or damaged manifest
    line is skipped: its pin, if any, is removed with the folder)."""
    from agtaild.config import Config

    config = msgspec.msgpack.decode((folder / CONFIG).read_bytes(), type=Config)
    pinned: list[Pinned] = []
    with open(folder / MANIFEST, "rb") as fh:
        for line in fh:
            try:
                name, path, source, agent, main = _decode_entry(line)
            except msgspec.DecodeError:
                continue
            pin = folder / name
            # A name or path that is not what pin() writes (a damaged or tampered manifest)
            # would make the archive write outside its folders: skipped.
            real = from_text(path)
            if name.isdigit() and pin.is_file() and path_problem(real) is None and real.startswith(f"{agent}/"):
                pinned.append(Pinned(str(pin), LocalFile(path=real, source=from_text(source), agent=agent), main))
    return config, pinned


def sets(store_root: Path | str) -> Iterator[Path]:
    """The sets the finisher may take: sealed ones, and those whose process is gone."""
    root = pins_root(store_root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return
    for name in names:
        folder = root / name
        pid, sep, _stamp = name.partition("-")
        if not sep or not pid.isdigit() or not folder.is_dir():
            continue
        if (folder / READY).exists() or (int(pid) != os.getpid() and not process_alive(int(pid))):
            yield folder


def pending(store_root: Path | str) -> int:
    """Pinned files not yet archived (for doctor): the pins of every set, sealed or not."""
    root = pins_root(store_root)
    count = 0
    try:
        folders = [root / n for n in os.listdir(root)]
    except OSError:
        return 0
    for folder in folders:
        try:
            count += sum(1 for n in os.listdir(folder) if n.isdigit())
        except OSError:
            continue
    return count


def remove(folder: Path) -> None:
    """Remove a set's folder: its pins (the archive has their bytes now), then the rest."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        (folder / name).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass

