"""Cursor (``cursor``): the CLI's agent transcripts and chat stores under ``~/.cursor``.

* ``projects/<slug>/agent-transcripts/<id>.jsonl`` (or ``<id>/<id>.jsonl``, subagents in
  ``<id>/subagents/<child>.jsonl``): append-only JSONL, read incrementally
  (:mod:`agtaild.adapters.cursor.transcript`). ``<slug>`` is the workspace path with ``/`` → ``-``.
* ``chats/<md5(workspace)>/<id>/store.db``: the CLI's SQLite chat store (:mod:`agtaild.adapters.cursor.store`).
  When a transcript with the same id exists, the store only adds its meta row (title, model,
  mode, start); a store without a transcript is read on its own (its message blobs).

The workspace path is not stored in clear: the slug's ``/`` reading is used only when its MD5
names the chat bucket of the same id, or the directory exists on this machine. IDE composer
data (``state.vscdb``) is read by :mod:`agtaild.adapters.cursor.ide`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit
from agtaild.adapters.cursor.ide import CursorIdeReader
from agtaild.adapters.cursor.store import apply_meta, read_meta, read_store
from agtaild.adapters.cursor.text import read_text_transcript
from agtaild.adapters.cursor.transcript import CursorTranscriptParser
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.kit.resume_ids import safe_id
from agtaild.adapters.kit.sqlite_db import existing_files, reading
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.adapters.kit.vscode_hosts import user_dirs
from agtaild.errors import AgtailError
from agtaild.model import ParentRef, Session, project_of


class CursorAdapter(JsonlAdapter):
    id: ClassVar[str] = "cursor"
    name: ClassVar[str] = "Cursor"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = (
        "Cursor's home folder (~/.cursor: projects/*/agent-transcripts and chats/*/*/store.db), "
        "or the IDE's globalStorage/state.vscdb (or workspaceStorage, whose state.vscdb files held "
        "the composers of late-2024 builds)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "agent-transcripts JSONL (peer fixtures)",
        "chats store.db (peer fixture, hand-made)",
        "IDE state.vscdb composers (hand-made)",
        "IDE workspace state.vscdb of late 2024, composers inline (a real database)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "cursor/agent-sessions",
        "cursor/synthetic-agtail/.cursor",
        "cursor/synthetic-agtail/.config/Cursor/User/globalStorage",
        "cursor/cursor-history/.config/Cursor/User/workspaceStorage",
    )
    Parser = CursorTranscriptParser

    def __init__(self) -> None:
        self.ide = CursorIdeReader()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        users = [user for user in user_dirs(env, home) if user.parent.name == "Cursor"]
        ide = [user / "globalStorage" for user in users] + [user / "workspaceStorage" for user in users]
        return [home / ".cursor", *ide]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        if self.ide.databases(root):
            yield from self.ide.discover(root)
            if self.ide.direct_database(root) is not None:
                return  # a workspaceStorage-like folder may hold the CLI's folders too: go on
        projects, chats = _layout(root)
        stores = _stores(chats)
        seen: set[str] = set()
        for slug_dir in _subdirs(projects):
            for unit in self._transcripts(slug_dir, root, stores):
                seen.add(unit.hints["id"])
                yield unit
        for sid, (bucket, db) in sorted(stores.items()):
            if sid not in seen:
                hints = {"id": sid, "store": str(db), "bucket": bucket}
                yield Unit(agent=self.id, path=str(db), files=existing_files(db), root=str(root), hints=hints)

    def _transcripts(self, slug_dir: Path, root: Path, stores: dict[str, tuple[str, Path]]) -> Iterator[Unit]:
        folder = slug_dir / "agent-transcripts"
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        names = {e.name for e in entries}
        for entry in entries:
            if entry.suffix == ".jsonl" and entry.is_file():
                yield self._unit(entry, entry.stem, slug_dir.name, root, stores)
            elif (
                entry.suffix == ".txt" and entry.is_file() and not {f"{entry.stem}.jsonl", entry.stem} & names
            ):
                yield self._unit(entry, entry.stem, slug_dir.name, root, stores)  # the older text form
            elif entry.is_dir() and (entry / f"{entry.name}.jsonl").is_file():
                yield self._unit(entry / f"{entry.name}.jsonl", entry.name, slug_dir.name, root, stores)
                for child in sorted((entry / "subagents").glob("*.jsonl")):
                    unit = self._unit(child, child.stem, slug_dir.name, root, {})
                    unit.hints["parent"] = entry.name
                    if entry.name in stores:  # the parent's chat bucket confirms the workspace
                        unit.hints["bucket"] = stores[entry.name][0]
                    yield unit

    def _unit(self, path: Path, sid: str, slug: str, root: Path, stores: dict[str, tuple[str, Path]]) -> Unit:
        files = [str(path)]
        hints: dict[str, Any] = {"id": sid, "slug": slug}
        if sid in stores:
            bucket, db = stores[sid]
            hints.update(store=str(db), bucket=bucket)
            files += existing_files(db)
        return Unit(agent=self.id, path=str(path), files=files, root=str(root), hints=hints)

    # -- reading --------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if _is_ide(unit):
            return self.ide.read(unit, state, now=now)
        if unit.path.endswith("store.db"):
            return self._read_store(unit)
        text = unit.path.endswith(".txt")
        result = self._read_text(unit) if text else super().read(unit, state, now=now)
        self._complete(result.session, unit)
        return result

    def _read_text(self, unit: Unit) -> ReadResult:
        book = RecordBook(Session(agent=self.id, id=str(unit.hints.get("id", "")), path=unit.path))
        read_text_transcript(Path(unit.path), book)
        book.session.mtime = os.stat(unit.path).st_mtime
        if unit.archived:
            book.session.archived = True
        return book.result()

    def _complete(self, s: Session, unit: Unit) -> None:
        """What the transcript's place and its chat store say about it."""
        meta: dict[str, Any] = {}
        store = unit.hints.get("store")
        if isinstance(store, str):
            try:
                with reading(store) as conn:
                    meta = read_meta(conn)
            except AgtailError:
                meta = {}  # the store is unreadable right now; the transcript still is
            apply_meta(s, meta)
            s.extra["cli_chat"] = True
        s.cwd = _workspace(str(unit.hints.get("slug", "")), unit.hints.get("bucket")) or s.cwd
        s.project = project_of(s.cwd) or s.project or unit.hints.get("slug") or None
        if s.ended is None and s.mtime:
            s.ended = from_epoch(s.mtime, unit="s")  # transcripts carry no timestamps
        if not s.title:
            s.title = _first_line(s.first_prompt)
        parent = unit.hints.get("parent")
        if isinstance(parent, str):
            s.parent = ParentRef(agent=self.id, id=parent)
            s.resumable = False

    def _read_store(self, unit: Unit) -> ReadResult:
        book = RecordBook(Session(agent=self.id, id=str(unit.hints.get("id", "")), path=unit.path))
        meta = read_store(Path(unit.path), book)
        s = book.session
        apply_meta(s, meta)
        s.extra["cli_chat"] = True
        workspace = meta.get("_workspace")
        bucket = unit.hints.get("bucket")
        if isinstance(workspace, str) and workspace:
            s.cwd = workspace
        s.project = project_of(s.cwd) or (bucket if isinstance(bucket, str) else None)
        mtimes = [os.stat(f).st_mtime for f in existing_files(unit.path)]
        s.mtime = max(mtimes) if mtimes else None
        s.ended = from_epoch(s.mtime, unit="s") if s.mtime else None
        if not s.title:
            s.title = _first_line(s.first_prompt)
        s.path = unit.path
        if unit.archived:
            s.archived = True
        return book.result()

    def native_files(self, unit: Unit) -> list[str]:
        if _is_ide(unit):
            return self.ide.native_files(unit)
        return [f for f in unit.files if os.path.exists(f)]

    def relative_path(self, unit: Unit, file: str) -> str:
        """A ``state.vscdb`` given as the root itself mirrors as ``state.vscdb`` (+ WAL files),
        which :meth:`discover` finds again inside the mirror folder."""
        if os.path.isfile(unit.root):
            return os.path.basename(file)
        return os.path.relpath(file, unit.root)

    def resume(self, session: Session) -> ResumeCommand | None:
        """CLI chats only (they have a chat store); IDE composers and subagents cannot be."""
        if session.parent is not None or not session.extra.get("cli_chat"):
            return None
        sid = safe_id(session.id)
        if sid is None:
            return None
        return ResumeCommand(argv=["cursor-agent", "--resume", sid], cwd=session.cwd)


def _is_ide(unit: Unit) -> bool:
    db, sep, _ = unit.path.rpartition("#")
    return bool(sep) and db.endswith(".vscdb")


def _layout(root: Path) -> tuple[Path, Path]:
    """(projects dir, chats dir) for a root that is ~/.cursor or one of those two folders."""
    if root.name == "projects" and not (root / "projects").is_dir():
        return root, root.parent / "chats"
    if root.name == "chats" and not (root / "chats").is_dir():
        return root.parent / "projects", root
    return root / "projects", root / "chats"


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return []


def _stores(chats: Path) -> dict[str, tuple[str, Path]]:
    """agent id → (bucket name, store.db) for every CLI chat store."""
    out: dict[str, tuple[str, Path]] = {}
    for bucket in _subdirs(chats):
        for chat in _subdirs(bucket):
            db = chat / "store.db"
            if db.is_file():
                out[chat.name] = (bucket.name, db)
    return out


def _workspace(slug: str, bucket: Any) -> str | None:
    """The workspace path a slug stands for, when it can be confirmed (see the module doc)."""
    if not slug:
        return None
    candidate = "/" + slug.replace("-", "/")
    if (
        isinstance(bucket, str)
        and hashlib.md5(candidate.encode(), usedforsecurity=False).hexdigest() == bucket
    ):
        return candidate
    return candidate if os.path.isdir(candidate) else None


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return None
