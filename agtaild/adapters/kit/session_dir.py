"""The shared helper for "one directory per session" agents (Grok Build, Copilot CLI, Cline …).

A unit is a directory whose files together make one session (Grok: ``summary.json`` +
``updates.jsonl`` + ``chat_history.jsonl``). ``unit.path`` is the directory, ``unit.files``
the member files that exist — the ones whose changes change the session, so the index
watches and fingerprints exactly those.

Such a session is read whole: the files are rewritten (summary documents) or appended
(event logs) in step, and joining streamed chunks across reads is not worth the state it
would need. Every read returns ``reset=True`` and no state; the index re-reads the unit when
any member file changes. The books are kept in a :class:`RecordBook`, one "line" per JSONL
line or per JSON document, so accounting works as for single files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.gc_pause import decode_document, paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.model import Session

_decoder = msgspec.json.Decoder()


class SessionDir(msgspec.Struct):
    """A session directory as found on disk at the start of a read."""

    path: Path
    #: member file name → path, for the members that exist.
    files: dict[str, Path]
    #: newest mtime of the member files (the directory's own when none exist).
    mtime: float
    #: True when nothing changed for SETTLE_SECONDS: a torn last line is then final.
    settled: bool

    def has(self, name: str) -> bool:
        return name in self.files


class BadRecord:
    """Yielded by :func:`jsonl_records` for a line that is not JSON."""

    __slots__ = ("raw", "torn")

    def __init__(self, raw: bytes, *, torn: bool) -> None:
        self.raw = raw
        self.torn = torn


def jsonl_records(path: Path, *, settled: bool) -> Iterator[tuple[int, Any]]:
    """(line number, decoded object or BadRecord) for every non-empty line of a JSONL file.

    A last line without a newline is left out while the directory is still being written
    (the next read sees it whole); once settled it is a record if it decodes, else a torn
    BadRecord (the caller flags the session ``truncated``).
    """
    with open_regular(path) as fh:
        data = fh.read()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    decode = _decoder.decode
    for number, raw in enumerate(lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip():
            continue
        try:  # (inline: this runs once per line)
            obj = decode(raw)
        except (msgspec.DecodeError, UnicodeDecodeError):
            obj = BadRecord(raw, torn=False)
        yield number, obj
    if tail.strip() and settled:
        yield len(lines) + 1, _decode(tail, torn=True)


def _decode(raw: bytes, *, torn: bool) -> Any:
    try:
        return _decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return BadRecord(raw, torn=torn)


def _decode_document(raw: bytes) -> Any:
    """A whole document (see :mod:`gc_pause`), or a torn BadRecord."""
    try:
        return decode_document(_decoder, raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return BadRecord(raw, torn=True)


def json_document(path: Path) -> Any:
    """A whole JSON file, or a BadRecord when it does not decode (mid-rewrite or torn)."""
    with open_regular(path) as fh:
        data = fh.read()
    return _decode_document(data)


def json_bytes(data: bytes) -> Any:
    """A whole JSON document already read, or a BadRecord (as :func:`json_document`)."""
    return _decode_document(data)


class SessionDirAdapter(Adapter):
    """Base for agents that keep one directory per session.

    Subclasses set :attr:`member_files` (the files read, by name), :attr:`marker_files` (any
    one of them makes a directory a session), :attr:`session_depth` (how many levels below
    the root the session directories sit) and implement :meth:`read_dir`.
    """

    incremental: ClassVar[bool] = False
    member_files: ClassVar[tuple[str, ...]] = ()
    marker_files: ClassVar[tuple[str, ...]] = ()
    session_depth: ClassVar[int] = 1
    #: File name endings never copied on export (locks and other live-process files).
    transient_suffixes: ClassVar[tuple[str, ...]] = (".lock",)

    def discover(self, root: Path) -> Iterator[Unit]:
        for folder in _dirs_at_depth(root, self.session_depth):
            unit = self.unit_for(folder, root)
            if unit is not None:
                yield unit

    def unit_for(self, folder: Path, root: Path) -> Unit | None:
        """The unit for ``folder``, or None when it holds none of the marker files."""
        if not any((folder / name).is_file() for name in self.marker_files):
            return None
        files = [str(folder / name) for name in self.member_files if (folder / name).is_file()]
        return Unit(agent=self.id, path=str(folder), files=files, root=str(root))

    def native_files(self, unit: Unit) -> list[str]:
        """Everything in the session directory (an agent may need all of it to resume)."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(unit.path):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(self.transient_suffixes):
                    out.append(os.path.join(dirpath, name))
        return out

    def snapshot(self, unit: Unit, *, now: float | None = None) -> SessionDir:
        folder = Path(unit.path)
        files: dict[str, Path] = {}
        newest = 0.0
        for name in self.member_files:
            path = folder / name
            try:
                st = path.stat()
            except OSError:
                continue
            files[name] = path
            newest = max(newest, st.st_mtime)
        if not files:
            newest = folder.stat().st_mtime
        now = time.time() if now is None else now
        return SessionDir(path=folder, files=files, mtime=newest, settled=now - newest >= SETTLE_SECONDS)

    def new_session(self, unit: Unit) -> Session:
        return Session(agent=self.id, id=Path(unit.path).name, path=unit.path)

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        """Parse the member files into ``book`` (``book.count`` or ``book.bad`` per record)."""
        raise NotImplementedError

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        sdir = self.snapshot(unit, now=now)
        book = RecordBook(self.new_session(unit))
        self.read_dir(sdir, book, unit)
        session = book.session
        session.path = unit.path
        session.mtime = sdir.mtime
        if unit.archived:
            session.archived = True
        return book.result()


def _dirs_at_depth(root: Path, depth: int) -> Iterator[Path]:
    """Directories exactly ``depth`` levels below ``root`` (sorted, hidden ones skipped)."""
    if depth <= 0:
        if root.is_dir():
            yield root
        return
    for entry in scan.entries(root):
        if not entry.name.startswith(".") and scan.is_dir(entry):
            yield from _dirs_at_depth(Path(entry.path), depth - 1)
