"""Pi (badlogic/pi-mono) and Oh My Pi (can1357/oh-my-pi): one JSONL tree file per session.

Both write ``<sessions>/<bucket>/<ISO-ts>_<id>.jsonl`` in the same entry format (see
:mod:`agtaild.adapters.pi.tree`); Oh My Pi adds entry types, a fixed-width title line at the
top of the file, profiles, and subagent transcripts in ``<bucket>/<stem>/<Agent>.jsonl``.

Reading is incremental (:class:`JsonlAdapter`) with two guards around it:

* the first line is fingerprinted: Pi rewrites a file in place when it migrates an old format,
  and Oh My Pi rewrites its title line in place on a rename. A changed first line means the
  saved offset no longer describes the file, so the read starts over;
* a read that moves the tree's leaf back to an earlier entry starts over too (see pi_tree).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.pi.content import session_id_from_ref
from agtaild.adapters.pi.tree import REREAD, PiTreeParser
from agtaild.model import Session

#: How far into the file the first line is looked for (an omp title slot is 256 bytes).
_HEAD_BYTES = 4096


class _PiContinuation(msgspec.Struct):
    head: bytes | None
    inner: bytes | None


def head_fingerprint(path: str) -> bytes | None:
    """A hash of the file's first line, or None while that line is not complete yet."""
    try:
        with open_regular(path) as fh:
            data = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    nl = data.find(b"\n")
    if nl >= 0:
        data = data[:nl]
    elif len(data) < _HEAD_BYTES:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


class PiAdapter(JsonlAdapter):
    id: ClassVar[str] = "pi"
    name: ClassVar[str] = "Pi"
    env_vars: ClassVar[tuple[str, ...]] = ("PI_CODING_AGENT_DIR",)
    root_help: ClassVar[str] = (
        "the sessions folder (~/.pi/agent/sessions), or a folder given to pi --session-dir"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("v1 (2025-11)", "v3", "pi 0.73.1")
    sample_roots: ClassVar[tuple[str, ...]] = (
        "pi/pi-mono/.pi/agent/sessions",
        "pi/synthetic-agtail/.pi/agent/sessions",
        "real/pi-0.73.1/sessions",
    )
    Parser = PiTreeParser
    #: The command and its "open this session file" flag.
    resume_argv: ClassVar[tuple[str, ...]] = ("pi", "--session")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        agent_dir = env_path(env, "PI_CODING_AGENT_DIR")
        if agent_dir is not None and not looks_like_omp_agent_dir(agent_dir):
            return [agent_dir / "sessions"]
        return [home / ".pi" / "agent" / "sessions"]

    def discover(self, root: Path) -> Iterator[Unit]:
        """Session files directly in ``root`` (a --session-dir), in its buckets, and the
        transcripts kept in a ``<stem>/`` folder beside a session file (subagents)."""
        if not root.is_dir():
            return
        entries = scan.entries(root)
        names = {e.name for e in entries}
        for entry in entries:
            if entry.name.endswith(".jsonl") and _is_file(entry) and _nonempty(Path(entry.path)):
                yield self._unit(Path(entry.path), root, {})
                yield from self._children(Path(entry.path), root)
            elif _is_dir(entry) and f"{entry.name}.jsonl" not in names:
                yield from self._bucket(Path(entry.path), root)

    def _bucket(self, bucket: Path, root: Path) -> Iterator[Unit]:
        try:
            files = sorted(p for p in bucket.iterdir() if p.suffix == ".jsonl" and _nonempty(p))
        except OSError:
            return
        for file in files:
            yield self._unit(file, root, {})
            yield from self._children(file, root)

    def _children(self, parent_file: Path, root: Path, depth: int = 0) -> Iterator[Unit]:
        """``<stem>/<Agent>.jsonl`` next to ``<stem>.jsonl``: subagent transcripts (omp)."""
        folder = parent_file.with_suffix("")
        if depth > 4 or not folder.is_dir():
            return
        parent_id = session_id_from_ref(parent_file.name)
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and _nonempty(p))
        except OSError:
            return
        for file in files:
            yield self._unit(file, root, {"parent_id": parent_id, "subagent": file.stem})
            yield from self._children(file, root, depth + 1)

    def _unit(self, file: Path, root: Path, hints: dict[str, Any]) -> Unit:
        return Unit(agent=self.id, path=str(file), files=[str(file)], root=str(root), hints=hints)

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        head = head_fingerprint(unit.path)
        inner: bytes | None = None
        if state is not None:
            try:
                saved = msgspec.msgpack.decode(state, type=_PiContinuation)
            except msgspec.DecodeError:
                saved = None
            if saved is not None and saved.head == head:
                inner = saved.inner
        result = super().read(unit, inner, now=now)
        if result.session.extra.pop(REREAD, False):
            result = super().read(unit, None, now=now)
            result.session.extra.pop(REREAD, None)
        if result.state is not None:
            result.state = msgspec.msgpack.encode(_PiContinuation(head=head, inner=result.state))
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        if not session.path or session.imported or session.archived:
            return None
        return ResumeCommand(argv=[*self.resume_argv, session.path], cwd=session.cwd)


def looks_like_omp_agent_dir(agent_dir: Path) -> bool:
    """``PI_CODING_AGENT_DIR`` moves both pi's and omp's agent dir (omp kept pi's variable).
    omp keeps SQLite files there (agent.db, history.db) that pi never writes, so those decide
    which agent a set variable belongs to; otherwise it is pi's."""
    return (agent_dir / "agent.db").exists() or (agent_dir / "history.db").exists()


class OhMyPiAdapter(PiAdapter):
    id: ClassVar[str] = "oh-my-pi"
    name: ClassVar[str] = "Oh My Pi"
    env_vars: ClassVar[tuple[str, ...]] = (
        "PI_CODING_AGENT_DIR",
        "PI_CONFIG_DIR",
        "OMP_PROFILE",
        "PI_PROFILE",
        "XDG_DATA_HOME",
    )
    root_help: ClassVar[str] = (
        "the sessions folder (~/.omp/agent/sessions, ~/.omp/profiles/<name>/agent/sessions, "
        "$XDG_DATA_HOME/omp/sessions), or a folder given to omp --session-dir"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("v3 + omp entries (synthetic)",)
    sample_roots: ClassVar[tuple[str, ...]] = ("omp/synthetic-agtail/.omp/agent/sessions",)
    resume_argv: ClassVar[tuple[str, ...]] = ("omp", "--resume")

    def resume(self, session: Session) -> ResumeCommand | None:
        """``omp --resume=<file>``: omp's parser splits ``--flag=value`` and its optional-value
        ``--resume`` takes a value that does not start with ``-``; the file is absolute, so it
        never does (a relative one is not offered)."""
        if not session.path or session.imported or session.archived or not os.path.isabs(session.path):
            return None
        return ResumeCommand(
            argv=[self.resume_argv[0], f"{self.resume_argv[1]}={session.path}"], cwd=session.cwd
        )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The active profile's sessions dir (as omp resolves it) plus every other profile's,
        so sessions of all profiles are found."""
        config_root = home / (env.get("PI_CONFIG_DIR") or ".omp")
        profile = env["OMP_PROFILE"] if "OMP_PROFILE" in env else env.get("PI_PROFILE")
        profile = (profile or "").strip()
        if profile == "default":
            profile = ""
        roots: list[Path] = []
        xdg = env_path(env, "XDG_DATA_HOME")
        agent_dir = env_path(env, "PI_CODING_AGENT_DIR")
        if profile:
            xdg_profile = xdg / "omp" / "profiles" / profile if xdg else None
            if xdg_profile is not None and xdg_profile.is_dir():
                roots.append(xdg_profile / "sessions")
            else:
                roots.append(config_root / "profiles" / profile / "agent" / "sessions")
        elif agent_dir is not None and looks_like_omp_agent_dir(agent_dir):
            roots.append(agent_dir / "sessions")
        elif xdg is not None and (xdg / "omp").is_dir():
            roots.append(xdg / "omp" / "sessions")
        default = config_root / "agent" / "sessions"
        if default not in roots:
            roots.append(default)
        profiles = config_root / "profiles"
        if profiles.is_dir():
            for p in sorted(profiles.iterdir()):
                candidate = p / "agent" / "sessions"
                if candidate.is_dir() and candidate not in roots:
                    roots.append(candidate)
        return roots


def _nonempty(path: Path) -> bool:
    """Pi writes nothing until the first answer; an empty file is no session (yet)."""
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


_is_file = scan.is_file
_is_dir = scan.is_dir
