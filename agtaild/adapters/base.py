"""What an adapter is: the only place that knows an agent's private format.

An adapter knows its default roots (and the env vars that move them), discovers session units
under a root, reads one unit into a Session + Events (incrementally where the format is
append-only), lists the native files of a unit for transfer, and says how to resume a session.

The read protocol (what the index relies on):

* ``read(unit, state)`` returns a :class:`ReadResult`. ``state`` is the opaque bytes the
  previous read returned for this unit (or None for a first read).
* ``result.reset`` True means "forget everything stored for this unit, then apply".
* ``result.events`` are upserts keyed by ``seq``: a new event, or a replacement of an event
  already emitted (e.g. a tool_use whose result arrived in a later read).
* ``result.usage`` are usage records keyed by ``UsageRecord.key``: upserts, never sums.
* ``result.session`` is the complete, current summary of the session (not a delta).
* ``result.state`` continues the read later; None means the next read starts from scratch.
* ``result.marks`` re-marks events stored by earlier reads without re-emitting them: seq →
  ``extra`` keys to set (a None value removes the key). Used for conversation-branch marks
  that a later line changes (agtaild.adapters.claude.branches).

Applying the same read twice must give the same stored rows (idempotent), and incremental
reads in any number of steps must give the same rows as one read from scratch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.model import Event, Session, UsageRecord


class Unit(msgspec.Struct):
    """One session's source: a file, a directory, or one row set in a database.

    ``path`` is the unit's stable key: the main file's path, or ``<db path>#<id>``.
    ``files`` are the native files whose changes can change this unit (fingerprinting,
    watching, archive and sync). ``hints`` is adapter-private (e.g. a subagent's parent id).
    ``sidecars`` are the files outside the unit's own that its reading depends on (a registry
    of work dirs, a subagent index, a title index, often shared by many units): path → its
    place in a copy, relative to the copy's root (agtaild.adapters.kit.sidecars). Copies carry
    them. ``sidecar_key`` digests what they say of *this* unit: the index fingerprints it with
    ``files``, so a change to a shared side file re-reads the units whose entries it changed,
    not every unit it describes.
    """

    agent: str
    path: str
    files: list[str]
    root: str
    archived: bool = False
    hints: dict[str, Any] = msgspec.field(default_factory=dict)
    sidecars: dict[str, str] = msgspec.field(default_factory=dict)
    sidecar_key: str = ""


class ReadResult(msgspec.Struct):
    session: Session
    events: list[Event]
    usage: list[UsageRecord]
    state: bytes | None = None
    reset: bool = True
    marks: dict[int, dict[str, Any]] = msgspec.field(default_factory=dict)


class ResumeCommand(msgspec.Struct):
    argv: list[str]
    cwd: str | None


class Adapter:
    """Base class. Subclasses set the class attributes and implement discover/read."""

    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    #: Env vars the agent itself honours to move its data (documented in docs/adapters.md).
    env_vars: ClassVar[tuple[str, ...]] = ()
    #: What `--root AGENT=PATH` expects, in words.
    root_help: ClassVar[str] = ""
    #: Format versions this adapter was tested on (fixtures in tests/corpus).
    formats_tested: ClassVar[tuple[str, ...]] = ()
    #: True when read() can continue from a saved state (append-only formats).
    incremental: ClassVar[bool] = False
    #: Sample session roots for this adapter, relative to tests/corpus (used by the
    #: registry-wide test that reads every adapter's samples and feeds it garbage).
    sample_roots: ClassVar[tuple[str, ...]] = ()
    #: Every id this agent's resume command may be given, as a regular expression (full
    #: match). Ids are often read from file names, which anyone can choose: an id outside the
    #: pattern (``--dangerously-skip-permissions``, one with spaces or ``=``) is refused for
    #: resume by agtaild.resume, in one place for every adapter. The default (a letter or digit,
    #: then letters, digits, ``.``, ``_`` and ``-``) fits UUIDs and every id format seen so far;
    #: an adapter whose agent writes other ids declares its own, never a looser one than needed.
    resume_id_pattern: ClassVar[str] = r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}"
    #: True for agents that keep sessions inside project folders (Aider): the index then
    #: offers :meth:`roots_for_cwds` the working directories other agents' sessions name.
    uses_known_cwds: ClassVar[bool] = False
    #: True when a unit whose main file grew in place is discovered as before (its files and
    #: hints come from its own path and sidecars, whose creation or removal the watcher
    #: reports): the index may then read a watched append from the stored Unit without
    #: rediscovering the roots (agtaild.index.targets).
    appends_keep_units: ClassVar[bool] = False
    #: For a chat service read from its data export (``agtail import SERVICE FILE.zip``): the
    #: service's name on that command line (agtaild.store.chat_import); None for the others.
    export_service: ClassVar[str | None] = None

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The agent's own session roots on this machine (existing or not)."""
        return []

    def roots_for_cwds(self, cwds: Iterable[str]) -> list[Path]:
        """Roots to read beside the configured ones, found from working directories the index
        already knows (only called when ``uses_known_cwds``). Must stay cheap: a few stats
        per directory, never a crawl."""
        return []

    def roots_nearby(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Roots a bounded search of this machine finds without being told (only called when
        ``uses_known_cwds``, and not with --only-roots): Aider's histories in repositories no
        other agent ran in. Must stay bounded (and say its bounds in the adapter's docs)."""
        return []

    def discover(self, root: Path) -> Iterator[Unit]:
        """Every session unit below ``root`` (the agent's session root or a mirror of it)."""
        raise NotImplementedError

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        """Read one unit, continuing from ``state`` when given (see the module docstring)."""
        raise NotImplementedError

    def resume(self, session: Session) -> ResumeCommand | None:
        """How to resume ``session`` with the agent itself, or None when it can't be."""
        return None

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """How to start a new session of this agent in ``cwd`` with ``prompt`` as its first
        prompt (``agtail handoff --launch``), or None when its CLI has no such form. ``prompt``
        never starts with ``-`` (the caller checks), so it cannot be read as an option."""
        return None

    def split_export(self, export: Any) -> list[tuple[str, Any]]:
        """A data export (an open agtaild.adapters.kit.export_zip.ExportZip) as (conversation
        id, JSON value) pairs, one stored file each (only when ``export_service`` is set)."""
        raise NotImplementedError

    def superseded(self, stored: Any, conversations: list[tuple[str, Any]]) -> bool:
        """Whether a stored conversation the new export no longer names is part of one it
        does (its grouping changed): then a re-import removes it. False for services whose
        conversations have ids of their own."""
        return False

    def native_files(self, unit: Unit) -> list[str]:
        """The files to copy when exporting, archiving or syncing this unit."""
        return list(unit.files)

    def side_file_for(self, place: str, data: bytes, units: list[Unit]) -> bytes | None:
        """A side file (``place``, as in ``Unit.sidecars``) as an export of ``units`` alone
        carries it: only what speaks of them (an export chosen to share must not carry the
        titles, paths or links of every other session); None when it cannot be read, and is
        then not sent. The default carries it whole."""
        return data

    def relative_path(self, unit: Unit, file: str) -> str:
        """A native file's path relative to the unit's root (for the import/archive mirror)."""
        root = unit.root.rstrip(os.sep) + os.sep
        rest = file[len(root) :]
        if file.startswith(root) and rest and _plain_relative(rest):
            return rest  # the usual case: what relpath would answer, without normalising both paths
        return os.path.relpath(file, unit.root)


def _plain_relative(rest: str) -> bool:
    """A relative path that normpath leaves as it is (no empty, '.' or '..' component)."""
    return all(part not in ("", ".", "..") for part in rest.split(os.sep))


def env_path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name)
    return Path(value).expanduser() if value else None
