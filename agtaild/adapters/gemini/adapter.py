"""Gemini CLI (google-gemini/gemini-cli): ``~/.gemini/tmp/<project>/chats/``.

Layout (``packages/core/src/config/storage.ts``, ``projectRegistry.ts``): the global dir is
``$GEMINI_CLI_HOME/.gemini`` (``$GEMINI_CLI_HOME`` replaces the home directory), sessions
live in ``tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`` (0.39+; ``.json``
documents before), subagent sessions in ``chats/<parent session id>/<session id>.jsonl``.
``<project>`` is a slug (0.29+: its ``.project_root`` file and ``~/.gemini/projects.json``
name the directory) or, before, the SHA-256 of the project root.

A resumed legacy ``.json`` session is migrated to a sibling ``.jsonl`` and the old file stays:
only the ``.jsonl`` is read then. The replay itself is in :mod:`agtaild.adapters.gemini.replay`.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.gemini.replay import NeedsFullRead, Replay, ReplayState
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular, read_regular, read_regular_text
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import read_document
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS, decode_line, same_file_continues, split_lines
from agtaild.model import ParentRef, Session, project_of

_decoder = msgspec.json.Decoder()


class _Continuation(msgspec.Struct):
    offset: int
    dev: int
    ino: int
    replay: bytes


class GeminiAdapter(Adapter):
    id: ClassVar[str] = "gemini"
    name: ClassVar[str] = "Gemini CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("GEMINI_CLI_HOME",)
    root_help: ClassVar[str] = (
        "the tmp folder of Gemini CLI's global dir (~/.gemini/tmp; ~/.gemini works too)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("json (before 0.39)", "jsonl 0.39+", "jsonl 0.61.0")
    incremental: ClassVar[bool] = True
    sample_roots: ClassVar[tuple[str, ...]] = (
        "real/gemini-0.61.0/tmp",
        "gemini/synthetic-agtail/.gemini/tmp",
        "gemini/entireio-cli/.gemini/tmp",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = env_path(env, "GEMINI_CLI_HOME") or home
        return [base / ".gemini" / "tmp"]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        """``<tmp>/<project>/chats/``: every listing through the shared scanner, so a folder
        that cannot be listed or an entry that cannot be looked at (a symlink loop, EACCES, EIO)
        is reported in the update's errors and its sessions kept (agtaild.adapters.kit.scan)."""
        for project in scan.entries(_tmp_dir(root)):
            # a project without chats/ (or a file) lists nothing, quietly; one that is a loop
            # or cannot be searched is reported by the listing of its chats/
            listing = scan.entries(os.path.join(project.path, "chats"))
            if not listing:
                continue
            # directories first: a loop is then reported once (by is_dir), not again by is_file
            kinds = [(e, scan.is_dir(e)) for e in listing]
            files = {e.name for e, is_dir in kinds if not is_dir and scan.is_file_quietly(e)}
            stems = {name[: -len(".jsonl")] for name in files if name.endswith(".jsonl")}
            for entry, is_dir in kinds:
                stem, suffix = os.path.splitext(entry.name)
                # A resumed legacy .json was migrated to a .jsonl of the same name: read that.
                if entry.name in files and (suffix == ".jsonl" or (suffix == ".json" and stem not in stems)):
                    yield self._unit(Path(entry.path), Path(project.path), root)
                elif is_dir:
                    for sub in scan.entries(entry.path):
                        if sub.name.endswith(".jsonl") and scan.is_file(sub):
                            yield self._unit(Path(sub.path), Path(project.path), root, parent=entry.name)

    def _unit(self, path: Path, project: Path, root: Path, parent: str | None = None) -> Unit:
        files = [str(path)]
        if (project / ".project_root").is_file():
            files.append(str(project / ".project_root"))
        hints: dict[str, Any] = {"parent": parent} if parent else {}
        return Unit(agent=self.id, path=str(path), files=files, root=str(root), hints=hints)

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if os.path.exists(f)]

    # -- reading ----------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        now = time.time() if now is None else now
        if unit.path.endswith(".json"):
            result = self._read_document(unit, now)
        else:
            try:
                result = self._read_log(unit, state, now)
            except NeedsFullRead:
                result = self._read_log(unit, None, now)
        self._complete(result.session, unit)
        return result

    def _new_state(self, unit: Unit) -> ReplayState:
        return ReplayState(session=Session(agent=self.id, id=_id_from_name(Path(unit.path)), path=unit.path))

    def _read_document(self, unit: Unit, now: float) -> ReadResult:
        """A legacy ``.json`` ConversationRecord: its header and each message are records."""
        doc = read_document(unit.path, now=now)
        replay = Replay(self._new_state(unit), full=True, source_key="row")
        value = doc.value
        if doc.ok and isinstance(value, dict):
            replay.count(replay.header({k: v for k, v in value.items() if k != "messages"}, 0))
            messages = value.get("messages")
            for i, rec in enumerate(messages if isinstance(messages, list) else []):
                replay.feed(rec, i)
        elif doc.ok:
            replay.feed(value, 0)
        elif not doc.empty:
            replay.bad(1)
            replay.st.session.truncated = doc.settled
        events, usage = replay.emit()
        session = replay.finish(settled=doc.settled)
        session.mtime = doc.mtime
        return ReadResult(session=session, events=events, usage=usage, state=None, reset=True)

    def _read_log(self, unit: Unit, state: bytes | None, now: float) -> ReadResult:
        path = unit.path
        st = os.stat(path)
        settled = now - st.st_mtime >= SETTLE_SECONDS
        cont = _decode_continuation(state)
        replay_state: ReplayState | None = None
        with open_regular(path) as fh:
            if cont is not None and _can_continue(fh, st, cont):
                try:
                    replay_state = msgspec.msgpack.decode(cont.replay, type=ReplayState)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    replay_state = None
            offset = cont.offset if cont is not None and replay_state is not None else 0
            fh.seek(offset)
            data = fh.read()
        full = replay_state is None
        replay = Replay(replay_state or self._new_state(unit), full=full)
        lines, used = split_lines(data, offset)
        tail = data[used:]
        torn = bool(tail.strip()) and settled
        if torn and not full:
            raise NeedsFullRead("a settled last line without a newline")
        for raw, _ in lines:
            self._line(replay, raw)
        committed = offset + used
        if torn:
            self._line(replay, tail, last=True)
        events, usage = replay.emit()
        session = replay.finish(settled=settled)
        session.mtime = st.st_mtime
        new_state = None
        if not torn:
            new_state = msgspec.msgpack.encode(
                _Continuation(
                    offset=committed, dev=st.st_dev, ino=st.st_ino, replay=msgspec.msgpack.encode(replay.st)
                )
            )
        return ReadResult(session=session, events=events, usage=usage, state=new_state, reset=full)

    @staticmethod
    def _line(replay: Replay, raw: bytes, *, last: bool = False) -> None:
        replay.st.line_no += 1
        if not raw.strip():
            return
        try:
            obj = decode_line(raw)
        except (msgspec.DecodeError, UnicodeDecodeError):
            replay.bad(replay.st.line_no)
            if last:
                replay.st.session.truncated = True
            return
        replay.feed(obj, replay.st.line_no)

    def _complete(self, session: Session, unit: Unit) -> None:
        """What the file's place says: cwd/project, the parent of a subagent, path, archive."""
        path = Path(unit.path)
        session.path = unit.path
        nested = path.parent.parent.name == "chats"  # chats/<parent session id>/<id>.jsonl
        parent_id = unit.hints.get("parent") or (path.parent.name if nested else None)
        project_dir = path.parent.parent.parent if parent_id else path.parent.parent
        session.cwd = _project_root(project_dir, session.extra.get("project_hash")) or session.cwd
        session.project = project_of(session.cwd)
        if parent_id:
            session.parent = ParentRef(
                agent=self.id,
                id=parent_id,
                tool_use_id=_spawning_call(path.parent.parent, parent_id, session.id),
            )
            session.resumable = False
        if unit.archived:
            session.archived = True

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """Gemini CLI: ``--prompt-interactive`` (``-i``) runs the prompt, then stays interactive."""
        return ResumeCommand(argv=["gemini", "--prompt-interactive", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        if session.parent is not None or not session.id:
            return None
        return ResumeCommand(argv=["gemini", f"--resume={session.id}"], cwd=session.cwd)


def _tmp_dir(root: Path) -> Path:
    """``--root`` may name ``~/.gemini/tmp`` or ``~/.gemini`` itself (decided without raising:
    what cannot be looked at here is reported by the listings that follow)."""
    tmp = root / "tmp"
    if os.path.isdir(tmp) and not any(os.path.isdir(p / "chats") for p in _children(root)):
        return tmp
    return root


def _children(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if os.path.isdir(p)]
    except OSError:
        return []


def _id_from_name(path: Path) -> str:
    """The id before the header says it: a subagent file is named by its full id, a main
    session file only carries the first 8 characters (``session-<ts>-<id8>``)."""
    stem = path.stem
    if stem.startswith("session-") and stem.count("-") >= 4:
        return stem.rsplit("-", 1)[-1]
    return stem


def _first(value: Any) -> str | None:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    return None


def _project_root(project_dir: Path, project_hash: Any) -> str | None:
    """The project's directory: its ``.project_root``, else ``projects.json`` (by slug, or by
    the SHA-256 that names pre-0.29 project dirs and sits in every header)."""
    try:
        text = read_regular_text(project_dir / ".project_root").strip()
        if text:
            return text
    except (OSError, UnicodeDecodeError):
        pass
    registry = project_dir.parent.parent / "projects.json"
    try:
        projects = _decoder.decode(read_regular(registry)).get("projects")
    except (OSError, msgspec.DecodeError, AttributeError):
        return None
    if not isinstance(projects, dict):
        return None
    hashes = {project_dir.name, project_hash}
    for root, slug in projects.items():
        if not isinstance(root, str):
            continue
        if slug == project_dir.name or hashlib.sha256(root.encode()).hexdigest() in hashes:
            return root
    return None


def _spawning_call(chats: Path, parent_id: str, child_id: str) -> str | None:
    """The parent's ``invoke_agent`` call whose ``agentId`` is this subagent session."""
    needle = f'"agentId":"{child_id}"'.encode()
    for parent in sorted(chats.glob(f"session-*-{parent_id[:8]}.json*")):
        try:
            data = read_regular(parent)
        except OSError:
            continue
        at = data.find(needle)
        if at < 0:
            continue
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        try:
            rec = _decoder.decode(data[start : end if end >= 0 else len(data)])
        except msgspec.DecodeError:
            continue
        calls = rec.get("toolCalls") if isinstance(rec, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("agentId") == child_id and isinstance(call.get("id"), str):
                return str(call["id"])
    return None


def _decode_continuation(state: bytes | None) -> _Continuation | None:
    if state is None:
        return None
    try:
        return msgspec.msgpack.decode(state, type=_Continuation)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _can_continue(fh: Any, st: os.stat_result, cont: _Continuation) -> bool:
    return same_file_continues(fh, st, cont.dev, cont.ino, cont.offset)
