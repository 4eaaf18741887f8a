"""Finding the units under the roots, and deciding which stored units are really gone.

Discovery walks every root with its adapter. What it cannot look at — a root that can't be
stat'ed, an adapter that fails, an entry the shared listing helpers skipped (a symlink loop,
EACCES, EIO: agtaild.adapters.kit.scan) — is reported in ``errors`` and remembered in ``unsure``.
A stored unit that discovery did not find is removed only when :meth:`Discovery.known_gone`
says so: a read error is never a deletion.

Archive units are ignored while the native file they mirror (same agent, same path relative
to its root) still exists under a native root — or lies where discovery could not look — so
a session is never listed twice.

A session store that is there but cannot be read (an agent's SQLite database locked, damaged,
a FIFO in its place: ``scan.unreadable``) is unsure too: the sessions stored from it are kept.
Its path is in :attr:`Discovery.unreadable`, so the archive writes back its copy of the store
(agtaild.store.archive.view), and that copy is served wherever the index keeps nothing of
the native one (a rebuilt index: :meth:`Discovery.hide_kept`). A file that says what a root
holds (Crush's project registry, ``scan.unlisted``) that cannot be read keeps every unit
stored from that root.

This runs before every update, so nothing is looked at twice: what the walks saw
(:attr:`Discovery.seen`: the ``stat`` results they took, the files they found) serves the
update's fingerprints and the archive's write-back check, which runs between the other
roots' walks and the archive roots' (``before_archive``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import kind_of
from agtaild.config import RootSpec
from agtaild.fsnames import at_or_below, from_text, to_text


class Candidate(msgspec.Struct):
    adapter: Any
    unit: Unit
    root: RootSpec
    rel: str | None = None

    def rel_path(self) -> str:
        """The unit's path relative to its root (the archive mirrors native files by it)."""
        if self.rel is None:
            try:
                self.rel = str(self.adapter.relative_path(self.unit, self.unit.path))
            except Exception:
                self.rel = self.unit.path
        return self.rel


class Discovery:
    """One update's discovery: its candidates, the paths it could not look at, and the
    verdict on stored units it did not find."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        #: Paths (text form) discovery could not look at (a root, a folder, an entry):
        #: stored units at or below them are kept as they are, never taken as deleted.
        self.unsure: set[str] = set()
        #: What the adapters' walks saw: their ``stat`` results (OS path → result, as
        #: ``os.stat`` gives it; the update's fingerprints use them rather than stat every
        #: file again) and the files they found there.
        self.seen = scan.Seen({}, set())
        self.stats = self.seen.stats
        #: Session stores (OS paths) that are there but could not be read.
        self.unreadable: set[str] = set()
        #: Roots (text form) whose listing could not be read: their stored units are kept.
        self.unlisted_roots: set[str] = set()

    def _adapter(self, agent: str) -> Adapter | None:
        from agtaild.adapters import get_adapter

        try:
            return get_adapter(agent)
        except Exception as exc:
            self.errors.append({"path": "", "agent": agent, "error": f"no adapter: {exc}"})
            return None

    def candidates(
        self, roots: list[RootSpec], before_archive: Callable[[set[str]], None] | None = None
    ) -> list[Candidate]:
        """Every unit under ``roots``; what could not be looked at is recorded in
        ``self.errors`` and ``self.unsure`` (paths whose stored units must be kept).

        ``before_archive`` is called once the other roots are walked and before the archive
        roots are, with the files their walks found (OS paths, there moments ago): the
        archive writes back the files agents deleted, and needs no ``lstat`` of these."""
        walked: dict[int, list[Candidate]] = {}
        # The archive roots last (their units are listed in the order of ``roots`` all the same).
        for i in sorted(range(len(roots)), key=lambda i: roots[i].kind == "archive"):
            if before_archive is not None and roots[i].kind == "archive":
                before_archive(set(self.seen.files))
                before_archive = None
            walked[i] = self._walk(roots[i])
        if before_archive is not None:
            before_archive(set(self.seen.files))
        found = [c for i in range(len(roots)) for c in walked[i]]
        # Relative paths cost a relpath each: computed only for agents with archived units.
        archived_agents = {c.root.agent for c in found if c.root.kind == "archive"}
        natives = {
            (c.root.agent, c.rel_path())
            for c in found
            if c.root.kind == "native" and c.root.agent in archived_agents
        }
        # An unreadable store is not a place discovery could not look: its archived copy is
        # served unless the index keeps the native sessions (hide_kept decides).
        stores = {to_text(p) for p in self.unreadable}
        blind = [u for u in self.unsure if u not in stores]
        seen: set[str] = set()
        out = []
        native_roots: dict[str, list[str]] = {}
        for r in roots:
            if r.kind == "native":
                native_roots.setdefault(r.agent, []).append(r.path)
        for c in found:
            if c.root.kind == "archive" and (c.root.agent, c.rel_path()) in natives:
                continue  # the native file still exists: the archive copy stays hidden
            if c.root.kind == "archive" and blind and any(
                any(at_or_below(to_text(os.path.join(r, c.rel_path())), u) for u in blind)
                for r in native_roots.get(c.root.agent, ())
            ):
                continue  # the native file could not be looked at: it is kept, so is this hidden
            if c.unit.path in seen:
                continue  # overlapping roots: the first root listed wins
            seen.add(c.unit.path)
            out.append(c)
        return out

    def walk(self, root: RootSpec) -> list[Candidate]:
        """The units under one more root (found from the sessions' working directories), with
        its problems recorded like those of the configured roots."""
        return self._walk(root)

    def hide_kept(self, candidates: list[Candidate], kept: Callable[[str, str], bool]) -> list[Candidate]:
        """``candidates`` without the archive units of unreadable stores whose native units the
        index keeps (``kept(agent, rel)``): those stay listed from their native store, and the
        archive's copy serves only an index that holds nothing of it."""
        if not self.unreadable:
            return candidates
        return [c for c in candidates if c.root.kind != "archive" or not kept(c.root.agent, to_text(c.rel_path()))]

    def _walk(self, root: RootSpec) -> list[Candidate]:
        """The units the root's adapter discovers under it; what it could not look at is
        recorded (``errors``, ``unsure``)."""
        adapter = self._adapter(root.agent)
        if adapter is None:
            self.unsure.add(to_text(root.path))
            return []
        try:
            os.stat(root.path)
        except OSError as exc:
            if exc.errno not in scan.GONE_ERRNOS:  # there, but not readable: keep its units
                self.unsure.add(to_text(root.path))
                self.errors.append({"path": root.path, "agent": root.agent, "error": f"root: {exc.strerror}"})
            return []
        with scan.collecting() as problems, scan.noting(self.seen):
            try:
                units = list(adapter.discover(Path(root.path)))
            except Exception as exc:
                self.unsure.add(to_text(root.path))
                self.errors.append({"path": root.path, "agent": root.agent, "error": f"discover: {exc}"})
                units = []
        for problem in problems:
            self.unsure.add(to_text(problem.path))
            if problem.kind == "store":
                self.unreadable.add(problem.path)
            elif problem.kind == "listing":
                self.unlisted_roots.add(to_text(root.path))
            self.errors.append({"path": to_text(problem.path), "agent": root.agent, "error": problem.error})
        # Unit.archived is the adapter's own notion (e.g. Codex's archived_sessions);
        # sessions under an agtail archive root are tagged from the root's kind instead.
        return [Candidate(adapter=adapter, unit=unit, root=root) for unit in units]

    def is_unsure(self, path: str) -> bool:
        """Is ``path`` (text form) at or below a path discovery could not look at?"""
        return any(at_or_below(path, u) for u in self.unsure)

    def keeps(self, path: str, fingerprint: bytes, root: str | None = None) -> bool:
        """Must a stored unit discovery did not find be kept for what discovery could not
        see? (its path or main file is unsure, or its root's listing could not be read)"""
        main = main_file(fingerprint) or path
        return self.is_unsure(path) or self.is_unsure(main) or (root is not None and root in self.unlisted_roots)

    def known_gone(self, path: str, agent: str, fingerprint: bytes, root: str | None = None) -> bool:
        """Whether a stored unit that discovery did not find may be removed: only when its
        file is known to be gone (ENOENT), or it is still there but no longer belongs to a
        scanned root (the roots changed, the agent no longer counts it). A unit whose file
        could not be looked at (EACCES, ELOOP, EIO …), that lies under a folder discovery
        could not read or in a store it could not read, or that was stored from a root
        (``root``, text form) whose listing could not be read, is kept as it is — and so is one
        whose file was replaced by what is not a file (a FIFO, a device, a socket: nothing
        opens it, agtaild.adapters.kit.files): a read error is never a deletion."""
        if self.keeps(path, fingerprint, root):
            return False
        main = main_file(fingerprint) or path
        try:
            st = os.stat(from_text(main))
        except OSError as exc:
            if exc.errno in scan.GONE_ERRNOS:
                return True
            self.errors.append({"path": path, "agent": agent, "error": f"kept: {exc.strerror}"})
            return False
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            self.errors.append({"path": path, "agent": agent, "error": f"kept: not a regular file ({kind_of(st)})"})
            return False
        return True


def gone(text_path: str) -> bool:
    """True only when the file is known not to exist (ENOENT/ENOTDIR)."""
    try:
        os.stat(from_text(text_path))
    except OSError as exc:
        return exc.errno in scan.GONE_ERRNOS
    return False


def main_file(encoded: bytes) -> str | None:
    """The first file of a stored fingerprint (the unit's main file), if it decodes."""
    try:
        parts = msgspec.msgpack.decode(encoded)
        return str(parts[0][0]) if parts and parts[0] else None
    except (msgspec.DecodeError, IndexError, TypeError):
        return None
