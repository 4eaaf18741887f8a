"""Pins: a first index's native files held by hard links until the archive has stored them.

Storing a file in the archive is reading, hashing and compressing it: on the 200 MB bench
corpus ≈ 1.4 s of CPU, which a first index spent beside its own work on a 2-core machine. A
big update (agtaild.store.archive.hook) instead *pins* each native file it reads: a hard link
to it under ``.zstore/pins/<pid>-<n>/``, which costs a ``link()``. A pin is another name of the
same file, so it sees what the agent appends, and it keeps the bytes when the agent deletes the
file: nothing read by the index can be lost before the archive has it. When the update ends
the pins are made durable and sealed (``ready``); the finisher (agtaild.store.archive.finish),
a process of its own started then, archives each pinned file as the mirror would — recording
its native path — and removes the pins. Until then a pinned file whose native copy is gone is
written back from its pin for the adapters, as an archived one is (agtaild.store.archive.view).

A set of pins is a folder with:

* ``config``: the update's Config (msgpack): the roots the files were read under;
* ``manifest``: one JSON array per pinned file (:class:`Entry`): pin name, archive path,
  native path (text form, agtaild.fsnames), agent, archive path of its unit's main file, and
  what was pinned — the inode (device, number) and the size and boundary digests
  (agtaild.store.archive.ends) of the bytes it held;
* the pins, named ``0``, ``1``, …;
* ``ready``: written once the rest is durable.

A hard link shares its inode: an agent that rewrites its file in place rewrites the pin too.
The size and digests recorded here are what the finisher checks before it stores a pin
(agtaild.store.archive.pinned): a pin that no longer holds them, or whose name now leads to
another inode (or a symlink), is reported rather than archived as the session it is not.

Every name below ``.zstore/pins`` is opened relative to its folder's descriptor without
following a symlink (agtaild.sync.safety): a symlink planted there leads nowhere.

A folder without ``ready`` whose process is gone (an index killed meanwhile) is finished too,
from what its manifest names (a torn last line is skipped); the update's open mark
(agtaild.store.archive.catchup) makes the next update mirror the native files anyway.

Files that cannot be pinned — another file system (a link cannot cross it), a file system
without hard links, a symlink, an SQLite store (it must be copied consistently with its
journal, under its own name) — are not pinned: the hook mirrors their unit as before.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path
from typing import Any

import msgspec

from agtaild.errors import AgtailError
from agtaild.fsnames import to_text
from agtaild.store.archive.durable import NOFOLLOW, create_marker, fsync_dir_fd
from agtaild.store.archive.ends import file_ends
from agtaild.sync.native import SQLITE_MAGIC, LocalFile
from agtaild.sync.safety import open_dir

PINS_DIR = "pins"
CONFIG = "config"
MANIFEST = "manifest"
READY = "ready"
#: The finisher's count of failed attempts at a set (agtaild.store.archive.finish).
ATTEMPTS = "attempts"
#: The names agtail writes in a set besides its pins (which are named by digits).
SET_FILES = frozenset({CONFIG, MANIFEST, READY, ATTEMPTS})


class Entry(msgspec.Struct, array_like=True):
    """One manifest line. The fields after ``main`` were added in 0.3: a set written by 0.2
    has none (its pins are opened without following a symlink, and not checked further)."""

    pin: str
    path: str
    source: str
    agent: str
    main: str
    dev: int = 0
    ino: int = 0
    #: Bytes the file held when pinned (-1: not recorded), and the ends of those bytes.
    size: int = -1
    ends: list[Any] | None = None


encode_entry = msgspec.json.Encoder().encode
decode_entry = msgspec.json.Decoder(Entry).decode


def pins_root(store_root: Path | str) -> Path:
    return Path(store_root) / PINS_DIR


def open_pins_dir(store_root: Path | str, *, create: bool) -> int:
    """A descriptor of ``.zstore/pins`` (Refused when it, or ``.zstore``, is a symlink;
    FileNotFoundError when it is missing and not ``create``)."""
    return open_dir(Path(store_root), [PINS_DIR], create=create)


def open_set_dir(folder: Path) -> int:
    """A descriptor of a set's folder (``.zstore/pins/NAME``), reached without following a
    symlink: Refused when one is in the way."""
    return open_dir(folder.parent.parent, [PINS_DIR, folder.name], create=False)


class PinSet:
    """The pins of one update (created by :meth:`create`, filled by :meth:`pin`, ended by
    :meth:`seal` or :meth:`abandon`). Used from one thread (the update's after-read thread)."""

    def __init__(self, folder: Path, fd: int, archiver: Any) -> None:
        self.folder = folder
        self.fd = fd  # the set's folder: every name in it is opened relative to it
        self.archiver = archiver
        self.count = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW
        self._manifest = os.fdopen(os.open(MANIFEST, flags, 0o600, dir_fd=fd), "ab")

    @classmethod
    def create(cls, archiver: Any, config: Any) -> PinSet:
        """A new, empty set under the archiver's store (OSError when it cannot be made, a
        symlinked ``pins`` folder included)."""
        try:
            root = open_pins_dir(archiver.store.root, create=True)
        except AgtailError as exc:  # Refused: a symlink in the way
            raise OSError(exc.message) from exc
        name = f"{os.getpid()}-{time.time_ns()}"
        try:
            os.mkdir(name, 0o700, dir_fd=root)
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW, dir_fd=root)
        finally:
            os.close(root)
        try:
            out = os.open(CONFIG, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600, dir_fd=fd)
            with os.fdopen(out, "wb") as fh:
                fh.write(msgspec.msgpack.encode(config))
            return cls(pins_root(archiver.store.root) / name, fd, archiver)
        except BaseException:
            os.close(fd)
            raise

    def pin(self, adapter: Any, unit: Any) -> bool:
        """Pin every file of ``unit`` the archive would store; False (and nothing pinned) when
        one of them cannot be pinned: the caller mirrors the unit instead."""
        files = self.archiver.files_of([(adapter, unit)])
        made: list[Entry] = []
        try:
            for local, main in files:
                name = str(self.count + len(made))
                os.link(local.source, name, dst_dir_fd=self.fd, follow_symlinks=False)
                made.append(Entry(name, to_text(local.path), to_text(local.source), local.agent, main))
                made[-1] = _what_is_pinned(self.fd, made[-1])
        except (OSError, NotImplementedError):  # NotImplementedError: no linkat() here
            for entry in made:
                with contextlib.suppress(OSError):
                    os.unlink(entry.pin, dir_fd=self.fd)
            return False
        self._manifest.write(b"".join(encode_entry(e) + b"\n" for e in made))
        self.count += len(made)
        return True

    def seal(self, *, durable: bool = True) -> None:
        """Make the pins and their manifest durable, then mark the set ready (OSError when it
        could not be: the update then stays open and the next one catches up). Not ``durable``:
        for a small update, whose own copies wait for the disk no more than these (its open mark
        is not fsynced either: agtaild.store.archive.catchup)."""
        try:
            self._manifest.flush()
            if durable:
                os.fsync(self._manifest.fileno())
            self._manifest.close()
            if durable:
                fsync_dir_fd(self.fd)
            create_marker(READY, durable=durable, dir_fd=self.fd)
        finally:
            self._close()

    def abandon(self) -> None:
        """Remove a set that holds no pin (its config and manifest, then its folder)."""
        self._manifest.close()
        try:
            for name in (CONFIG, MANIFEST):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=self.fd)
        finally:
            self._close()
        with contextlib.suppress(OSError, AgtailError):
            root = open_pins_dir(self.folder.parent.parent, create=False)
            try:
                os.rmdir(self.folder.name, dir_fd=root)
            finally:
                os.close(root)

    def _close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


def _what_is_pinned(folder_fd: int, entry: Entry) -> Entry:
    """``entry`` with the inode it pins and the size and ends of the bytes it holds; OSError
    when the pin is not a regular file (the native name was a symlink: a hard link to it is
    one too) or is an SQLite store (copied with its journal, not pinned)."""
    fd = os.open(entry.pin, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{entry.source} is not a regular file")
        if os.pread(fd, len(SQLITE_MAGIC), 0) == SQLITE_MAGIC:
            raise OSError("an SQLite store is copied with its journal, not pinned")
        ends = file_ends(fd, st.st_size)
    finally:
        os.close(fd)
    return msgspec.structs.replace(entry, dev=st.st_dev, ino=st.st_ino, size=st.st_size, ends=ends)


__all__ = ["Entry", "LocalFile", "PinSet", "pins_root"]
