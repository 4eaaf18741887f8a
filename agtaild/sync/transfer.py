"""Moving only the difference between a source and a destination, the same way everywhere.

Every transport is a :class:`Source` (has a manifest, can hash a prefix of a file, can send a
byte range) or a :class:`Destination` (says what it holds, writes one file from a base plus
chunks). :func:`transfer` compares the two and decides per file:

* ``skip`` — same size and sha256;
* ``append`` — the destination's copy is a verified prefix of the source's (a JSONL that
  grew): only the new tail is sent;
* ``resume`` — an interrupted earlier attempt left a partial file whose bytes are a verified
  prefix of the source's: only the rest is sent;
* ``new`` / ``replace`` — sent whole (a changed non-append file, e.g. an SQLite DB, or a file
  the source itself rewrote, as its own record says);
* ``conflict`` — the destination's copy changed in a way the source did not write (another
  machine or a person): both are kept, the old one renamed ``NAME.agtail-conflict-…``, and the
  report says so.

The whole source manifest is checked (safety.py) before anything is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

import msgspec

from agtaild.errors import AgtailError
from agtaild.sync.manifest import FileEntry, Manifest, merge_record
from agtaild.sync.safety import check_entries


class TransferError(AgtailError):
    """One file could not be moved; the others go on and the report lists it."""


class Present(msgspec.Struct):
    size: int
    sha256: str


class DestState(msgspec.Struct):
    """What a destination holds: complete files, partial files left by an interrupted
    transfer, the record of what sync last wrote there, and kept conflict copies."""

    files: dict[str, Present] = msgspec.field(default_factory=dict)
    partials: dict[str, Present] = msgspec.field(default_factory=dict)
    record: Manifest | None = None
    case_insensitive: bool = False
    conflicts: list[str] = msgspec.field(default_factory=list)


class WriteOp(msgspec.Struct):
    """Write ``entry`` at ``entry.path``: keep the destination's first ``offset`` bytes
    (of the existing file for ``append``, of the partial for ``resume``; their sha256 must be
    ``base_sha256``) and add the chunks; rename into place only when size and sha256 match."""

    entry: FileEntry
    mode: str  # new | append | resume
    offset: int = 0
    base_sha256: str | None = None
    keep_existing: bool = False


class WriteResult(msgspec.Struct):
    written: int
    kept_as: str | None = None


class Source(Protocol):
    where: str

    def manifest(self) -> Manifest: ...

    def prefix_sha256(self, path: str, length: int) -> str: ...

    def read(self, path: str, offset: int, length: int) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class Destination(Protocol):
    where: str

    def state(self) -> DestState: ...

    def check(self, manifest: Manifest) -> None:
        """Refuse the whole set before anything is written (a server checks it again)."""

    def write(self, op: WriteOp, chunks: Iterable[bytes]) -> WriteResult: ...

    def save_record(self, record: Manifest) -> None: ...

    def close(self) -> None: ...


class Action(msgspec.Struct):
    entry: FileEntry
    action: str  # skip | new | append | resume | replace | conflict
    offset: int = 0
    base_sha256: str | None = None
    keep_existing: bool = False

    @property
    def send_bytes(self) -> int:
        return 0 if self.action == "skip" else self.entry.size - self.offset


class Limits(msgspec.Struct):
    max_file_size: int
    known_agents: list[str] | None = None


def plan(source: Source, manifest: Manifest, state: DestState) -> list[Action]:
    """Decide, file by file, what to move (see the module docstring)."""
    record = state.record.by_path() if state.record is not None else {}
    actions: list[Action] = []
    for entry in manifest.files:
        cur = state.files.get(entry.path)
        if cur is not None and cur.size == entry.size and cur.sha256 == entry.sha256:
            actions.append(Action(entry, "skip"))
            continue
        if cur is None:
            base = "new"
        elif cur.size < entry.size and source.prefix_sha256(entry.path, cur.size) == cur.sha256:
            base = "append"
        else:
            rec = record.get(entry.path)
            ours = (
                rec is not None
                and rec.size == cur.size
                and rec.sha256 == cur.sha256
                and rec.origin == entry.origin
            )
            base = "replace" if ours else "conflict"
        partial = state.partials.get(entry.path)
        if (
            partial is not None
            and 0 < partial.size <= entry.size
            and source.prefix_sha256(entry.path, partial.size) == partial.sha256
        ):
            actions.append(
                Action(entry, "resume", partial.size, partial.sha256, keep_existing=base == "conflict")
            )
        elif base == "append":
            assert cur is not None
            actions.append(Action(entry, "append", cur.size, cur.sha256))
        else:
            actions.append(Action(entry, base, 0, None, keep_existing=base == "conflict"))
    return actions


Progress = Callable[[str, int, int], None]


def transfer(
    source: Source,
    dest: Destination,
    limits: Limits,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Move the difference from ``source`` to ``dest``; returns the transfer report.

    Report: ``files`` (moved), ``bytes`` (payload bytes sent), ``skipped``, and per action
    counts, ``conflicts`` ([{path, kept_as}]), ``errors`` ([{path, message}]).
    """
    started = time.monotonic()
    manifest = source.manifest()
    state = dest.state()
    check_entries(
        manifest.files,
        max_file_size=limits.max_file_size,
        case_insensitive=state.case_insensitive,
        known_agents=limits.known_agents,
        existing=state.files.keys(),
        where=source.where,
    )
    dest.check(manifest)
    actions = plan(source, manifest, state)
    report: dict[str, Any] = {
        "source": source.where,
        "destination": dest.where,
        "files": 0,
        "bytes": 0,
        "skipped": 0,
        "new": 0,
        "appended": 0,
        "resumed": 0,
        "replaced": 0,
        "conflicts": [],
        "errors": [],
        "dry_run": dry_run,
    }
    if dry_run:
        report["pending"] = [
            {"path": a.entry.path, "action": a.action, "bytes": a.send_bytes}
            for a in actions
            if a.action != "skip"
        ]
    counters = {"new": "new", "append": "appended", "resume": "resumed", "replace": "replaced"}
    written: list[FileEntry] = []
    for act in actions:
        if act.action == "skip":
            report["skipped"] += 1
            written.append(act.entry)
            continue
        if dry_run:
            report["files"] += 1
            report["bytes"] += act.send_bytes
            if act.action in counters:
                report[counters[act.action]] += 1
            else:
                report["conflicts"].append({"path": act.entry.path, "kept_as": None})
            continue
        mode = "new" if act.action in {"new", "replace", "conflict"} else act.action
        op = WriteOp(act.entry, mode, act.offset, act.base_sha256, act.keep_existing)
        try:
            chunks = source.read(act.entry.path, act.offset, act.entry.size - act.offset)
            result = dest.write(op, chunks)
        except (AgtailError, OSError) as exc:
            message = exc.message if isinstance(exc, AgtailError) else f"{type(exc).__name__}: {exc}"
            report["errors"].append({"path": act.entry.path, "message": message})
            continue
        report["files"] += 1
        report["bytes"] += result.written
        if act.action in counters:
            report[counters[act.action]] += 1
        if result.kept_as is not None or act.action == "conflict":
            report["conflicts"].append({"path": act.entry.path, "kept_as": result.kept_as})
        written.append(act.entry)
        if progress is not None:
            progress(act.entry.path, result.written, act.entry.size)
    if not dry_run:
        dest.save_record(merge_record(state.record, written, manifest))
    report["seconds"] = round(time.monotonic() - started, 3)
    return report
