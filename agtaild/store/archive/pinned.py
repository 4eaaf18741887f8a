"""Reading pinned sets back (agtaild.store.archive.pins), for the finisher and the view.

Nothing here follows a symlink: ``.zstore/pins``, each set's folder and each name in it are
opened relative to their parent's descriptor with ``O_NOFOLLOW`` (agtaild.sync.safety), so
a symlink planted anywhere below the pins — a "set" leading to another folder, a config or a
pin leading to another file — is neither read nor emptied. Only what agtail writes in a set
is ever removed: regular files named as it names them (agtaild.store.archive.pins.SET_FILES
and the digit-named pins). A set holding anything else is, once done, moved aside (renamed
``NAME.left``) rather than taken again and again, and the finisher says so.

A pin is opened as the finisher (or the view) is about to read it, and must still be what
was pinned: a regular file, the same inode (device and number recorded at pin time), and —
a hard link shares its inode, so an in-place rewrite reaches the pin — still beginning with
the bytes recorded then (their size and boundary digests, agtaild.store.archive.ends).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from agtaild.errors import AgtailError
from agtaild.fsnames import from_text
from agtaild.store.archive.catchup import process_alive
from agtaild.store.archive.durable import NOFOLLOW
from agtaild.store.archive.ends import BOUNDARY_WINDOW, digest, file_ends
from agtaild.store.archive.pins import (
    ATTEMPTS,
    CONFIG,
    MANIFEST,
    PINS_DIR,
    READY,
    SET_FILES,
    Entry,
    decode_entry,
    open_pins_dir,
    open_set_dir,
    pins_root,
)
from agtaild.sync.native import LocalFile
from agtaild.sync.safety import open_regular, path_problem

log = logging.getLogger(__name__)

#: A set's folder name: ``<pid>-<time_ns>``.
SET_NAME = re.compile(r"^([0-9]+)-[0-9]+$")
#: Appended to a finished set's name when it holds what agtail did not write.
LEFT_SUFFIX = ".left"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW


class Pinned(msgspec.Struct):
    """One pinned file, as read back: its pin's name in the set, the native file, the archive
    path of its unit's main file, and what was pinned (:class:`agtaild.store.archive.pins.Entry`)."""

    pin: str
    local: LocalFile
    main: str
    dev: int = 0
    ino: int = 0
    size: int = -1
    ends: list[Any] | None = None


class PinProblem(Exception):
    """A pin that is no longer what was pinned (a symlink, a special file or another inode in
    its place): the message says which."""


@contextlib.contextmanager
def _pins_fd(store_root: Path | str) -> Iterator[int | None]:
    """``.zstore/pins`` open as a directory, or None (missing, or a symlink: not used)."""
    try:
        fd = open_pins_dir(store_root, create=False)
    except FileNotFoundError:
        yield None
        return
    except (OSError, AgtailError) as exc:
        log.warning("archive: %s: %s; its pins are not used", pins_root(store_root), getattr(exc, "message", exc))
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


def _is(fd: int, name: str, kind: int) -> bool:
    """Is ``name`` in directory ``fd`` of ``kind`` (stat.S_IFREG, S_IFDIR), not following a symlink?"""
    try:
        return stat.S_IFMT(os.lstat(name, dir_fd=fd).st_mode) == kind
    except OSError:
        return False


def _exists(fd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=fd)
    except OSError:
        return False
    return True


def set_folders(store_root: Path | str) -> list[Path]:
    """Every set's folder (a real directory named as a set is), whatever its state."""
    with _pins_fd(store_root) as fd:
        if fd is None:
            return []
        names = sorted(n for n in os.listdir(fd) if SET_NAME.match(n))
        return [pins_root(store_root) / n for n in names if _is(fd, n, stat.S_IFDIR)]


def sets(store_root: Path | str) -> Iterator[Path]:
    """The sets the finisher may take: sealed ones, and those whose process is gone."""
    for folder in set_folders(store_root):
        pid = int(SET_NAME.match(folder.name).group(1))  # type: ignore[union-attr]
        try:
            fd = open_set_dir(folder)
        except (OSError, AgtailError):
            continue
        try:
            ready = _is(fd, READY, stat.S_IFREG)
        finally:
            os.close(fd)
        if ready or (pid != os.getpid() and not process_alive(pid)):
            yield folder


def pending(store_root: Path | str) -> int:
    """Pinned files not yet archived (for doctor): the pins of every set, sealed or not."""
    count = 0
    for folder in set_folders(store_root):
        try:
            fd = open_set_dir(folder)
        except (OSError, AgtailError):
            continue
        try:
            count += sum(1 for n in os.listdir(fd) if n.isdigit() and _is(fd, n, stat.S_IFREG))
        finally:
            os.close(fd)
    return count


class OpenSet:
    """One set's folder, open as a directory: its config, manifest and pins are read, and
    its pins removed, relative to it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.fd = open_set_dir(folder)

    def __enter__(self) -> OpenSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def _read(self, name: str) -> bytes:
        with os.fdopen(open_regular(self.fd, name), "rb") as fh:
            return fh.read()

    def read(self) -> tuple[Any, list[Pinned]]:
        """The set's config and its pinned files (:meth:`entries`)."""
        from agtaild.config import Config

        return msgspec.msgpack.decode(self._read(CONFIG), type=Config), self.entries()

    def entries(self) -> list[Pinned]:
        """The pinned files its manifest names that are still there (a torn or damaged line
        is skipped: its pin, if any, is removed with the folder)."""
        pinned: list[Pinned] = []
        for line in self._read(MANIFEST).splitlines():
            try:
                e: Entry = decode_entry(line)
            except msgspec.DecodeError:
                continue
            # A name or path that is not what pin() writes (a damaged or tampered manifest)
            # would make the archive write outside its folders: skipped.
            real = from_text(e.path)
            if (e.pin.isdigit() and _exists(self.fd, e.pin) and path_problem(real) is None
                    and real.startswith(f"{e.agent}/")):
                local = LocalFile(path=real, source=from_text(e.source), agent=e.agent)
                pinned.append(Pinned(e.pin, local, e.main, e.dev, e.ino, e.size, e.ends))
        return pinned

    def open_pin(self, p: Pinned) -> BinaryIO:
        """The pin, open for reading, when it is the inode pinned (PinProblem when it is a
        symlink, not a regular file, or another inode; OSError when it cannot be opened)."""
        try:
            fd = open_regular(self.fd, p.pin)
        except AgtailError as exc:  # Refused: a symlink or a special file in its place
            raise PinProblem(f"its pin was replaced by a symlink or a special file ({exc.message})") from exc
        st = os.fstat(fd)
        if p.ino and (st.st_dev, st.st_ino) != (p.dev, p.ino):
            os.close(fd)
            raise PinProblem("its pin was replaced by another file")
        return os.fdopen(fd, "rb")

    def unlink_pin(self, p: Pinned, fh: BinaryIO) -> None:
        """Remove a pin whose file is in the archive now, when its name still leads to the
        regular file that was read (open as ``fh``)."""
        try:
            st = os.lstat(p.pin, dir_fd=self.fd)
        except FileNotFoundError:
            return
        read = os.fstat(fh.fileno())
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (read.st_dev, read.st_ino):
            os.unlink(p.pin, dir_fd=self.fd)

    def write_attempts(self, attempts: int) -> None:
        fd = os.open(ATTEMPTS, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, 0o600, dir_fd=self.fd)
        with os.fdopen(fd, "w") as fh:
            fh.write(str(attempts))

    def attempts(self) -> int:
        try:
            return int(self._read(ATTEMPTS))
        except (OSError, AgtailError, ValueError):
            return 0


def read_set(folder: Path) -> tuple[Any, list[Pinned]]:
    """A set's config and its pinned files that are still there (:meth:`OpenSet.read`)."""
    with OpenSet(folder) as s:
        return s.read()


def still_as_pinned(fh: BinaryIO, p: Pinned) -> str | None:
    """None when the pin, open as ``fh``, still begins with the bytes it held when pinned (an
    append leaves them as they were); else what became of them. A set written before pins
    recorded their bytes is not checked."""
    if p.size < 0 or p.ends is None:
        return None
    fd = fh.fileno()
    now = os.fstat(fd).st_size
    if now >= p.size and file_ends(fd, p.size) == p.ends:
        return None
    window = min(p.size, BOUNDARY_WINDOW)
    same_head = p.size > window and now >= window and digest(os.pread(fd, window, 0)) == p.ends[1]
    kept = f"its first {window} bytes are as read; " if same_head else ""
    return (f"rewritten in place after the index read it, before the archive stored it: the {p.size} bytes "
            f"read are lost ({kept}the {now} bytes it holds now are archived)")


def pins_present(store_root: Path | str) -> list[tuple[Path, Pinned]]:
    """Every pinned file still pinned, in every set whatever its state (for the view: a
    pinned file whose native copy is gone is served from its pin)."""
    out: list[tuple[Path, Pinned]] = []
    for folder in set_folders(store_root):
        try:
            with OpenSet(folder) as s:
                out.extend((folder, p) for p in s.entries())
        except (OSError, AgtailError):  # unreadable: the finisher says so
            continue
    return out


def remove(folder: Path) -> list[str]:
    """Remove a set's folder: what agtail wrote in it (its pins — the archive has their bytes
    now — and its own files), then the folder. Anything else is left as it is, and the folder
    is moved aside (``NAME.left``) so that it is not taken again; the names left are returned."""
    try:
        fd = open_set_dir(folder)
    except FileNotFoundError:
        return []
    except AgtailError as exc:  # a symlink (or not a folder) where the set was: not ours
        return [exc.message]
    try:
        left: list[str] = []
        for name in os.listdir(fd):
            if (name.isdigit() or name in SET_FILES) and _is(fd, name, stat.S_IFREG):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
            else:
                left.append(name)
    finally:
        os.close(fd)
    with _pins_fd(folder.parent.parent) as parent:
        if parent is None:
            return left
        try:
            os.rmdir(folder.name, dir_fd=parent)
            return []
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                return [*left, str(exc)]
        with contextlib.suppress(OSError):
            os.rename(folder.name, folder.name + LEFT_SUFFIX, src_dir_fd=parent, dst_dir_fd=parent)
    return left


__all__ = ["LEFT_SUFFIX", "PINS_DIR", "OpenSet", "PinProblem", "Pinned", "pending", "read_set", "remove", "sets"]
