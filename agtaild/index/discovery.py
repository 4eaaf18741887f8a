"""Finding the units under the roots, and deciding which stored units are really gone.

Discovery walks every root with its adapter. What it cannot look at — a root that can't be
stat'ed, an adapter that fails, an entry the shared listing helpers skipped (a symlink loop,
EACCES, EIO: agtaild.adapters.kit.scan) — is reported in ``errors`` and remembered in ``unsure``.
A stored unit that discovery did not find is removed only when :meth:`Discovery.known_gone`
says so: a read error is never a deletion.

Archive units are ignored while the native file they mirror (same agent, same path relative
to its root) still exists under a native root — or lies where discovery could not look — so
a session is never listed twice.

This runs before every update, so nothing is looked at twice: what the walks saw
(:attr:`Discovery.seen`: the ``stat`` results they took, the files they found) serves the
update's fingerprints and the archive's write-back check, which runs between the other
roots' walks and the archive roots' (``before_archive``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.kit import scan
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
        seen: set[str] = set()
        out = []
        native_roots: dict[str, list[str]] = {}
        for r in roots:
            if r.kind == "native":
                native_roots.setdefault(r.agent, []).append(r.path)
        for c in found:
            if c.root.kind == "archive" and (c.root.agent, c.rel_path()) in natives:
                continue  # the native file still exists: the archive copy stays hidden
            if c.root.kind == "archive" and self.unsure and any(
                self.is_unsure(to_text(os.path.join(r, c.rel_path()))) for r in native_roots.get(c.root.agent, ())
            ):
                continue  # the native file could not be looked at: it is kept, so is this hidden
            if c.unit.path in seen:
                continue  # overlapping roots: the first root listed wins
            seen.add(c.unit.path)
            out.append(c)
        return out

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
            self.errors.append({"path": to_text(problem.path), "agent": root.agent, "error": problem.error})
        # Unit.archived is the adapter's own notion (e.g. Codex's archived_sessions);
        # sessions under an agtail archive root are tagged from the root's kind instead.
        return [Candidate(adapter=adapter, unit=unit, root=root) for unit in units]

    def is_unsure(self, path: str) -> bool:
        """Is ``path`` (text form) at or below a path discovery could not look at?"""
        return any(at_or_below(path, u) for u in self.unsure)

    def known_gone(self, path: str, agent: str, fingerprint: bytes) -> bool:
        """Whether a stored unit that discovery did not find may be removed: only when its
        file is known to be gone (ENOENT), or it is still there but no longer belongs to a
        scanned root (the roots changed, the agent no longer counts it). A unit whose file
        could not be looked at (EACCES, ELOOP, EIO …), or that lies under a folder
        discovery could not read, is kept as it is: a read error is never a deletion."""
        main = main_file(fingerprint) or path
        if self.is_unsure(path) or self.is_unsure(main):
            return False
        try:
            os.stat(from_text(main))
        except OSError as exc:
            if exc.errno in scan.GONE_ERRNOS:
                return True
            self.errors.append({"path": path, "agent": agent, "error": f"kept: {exc.strerror}"})
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
