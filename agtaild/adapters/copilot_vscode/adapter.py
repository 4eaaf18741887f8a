"""VS Code Copilot Chat (``copilot-vscode``): ``workspaceStorage/<hash>/chatSessions/``.

Under every VS Code-family editor host (:mod:`vscode_hosts`): ``<User>/workspaceStorage/<hash>/
chatSessions/<sessionId>.json`` (a snapshot the editor rewrites) or ``.jsonl`` (an operation
log: :mod:`agtaild.adapters.copilot_vscode.ops` replays it), and ``<User>/globalStorage/emptyWindowChatSessions/``
for chats opened without a folder. ``workspaceStorage/<hash>/workspace.json`` names the folder.
When both forms of one session exist the ``.jsonl`` is read. Every read is a whole read.

The mapping follows FORMATS-longtail §3 (peer code), checked on three real sessions of Copilot
Chat 0.3x (tests/corpus/copilot-vscode/git-ai; what they add is in :mod:`ops`).
Copilot Chat sessions cannot be resumed from a command line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

import msgspec

from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.copilot_vscode.ops import SessionBuilder, replay_log
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsondoc import RecordBook, read_document
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.vscode_hosts import user_dirs, workspace_folder, workspace_storage
from agtaild.model import Session, project_of

_decoder = msgspec.json.Decoder()


class CopilotVscodeAdapter(Adapter):
    id: ClassVar[str] = "copilot-vscode"
    name: ClassVar[str] = "GitHub Copilot Chat (VS Code)"
    env_vars: ClassVar[tuple[str, ...]] = ("VSCODE_PORTABLE", "XDG_CONFIG_HOME")
    root_help: ClassVar[str] = (
        "an editor's workspaceStorage folder (~/.config/Code/User/workspaceStorage), "
        "a chatSessions folder, or globalStorage/emptyWindowChatSessions"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "chatSessions .json v3 and .jsonl op log (real files of Copilot Chat 0.3x, and hand-made ones)",
    )
    incremental: ClassVar[bool] = False
    sample_roots: ClassVar[tuple[str, ...]] = (
        "copilot-vscode/git-ai/.config/Code/User/workspaceStorage",
        "copilot-vscode/synthetic-agtail/.config/Code/User/workspaceStorage",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        empty = [user / "globalStorage" / "emptyWindowChatSessions" for user in user_dirs(env, home)]
        return [*workspace_storage(env, home), *empty]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        if _session_files(root):  # a chatSessions / emptyWindowChatSessions folder itself
            yield from self._folder(root, root, None)
            return
        try:
            workspaces = sorted(p for p in root.iterdir() if (p / "chatSessions").is_dir())
        except OSError:
            return
        for ws in workspaces:
            marker = ws / "workspace.json"
            yield from self._folder(ws / "chatSessions", root, marker if marker.is_file() else None)

    def _folder(self, folder: Path, root: Path, workspace: Path | None) -> Iterator[Unit]:
        files = _session_files(folder)
        logs = {p.stem for p in files if p.suffix == ".jsonl"}
        for path in files:
            if path.suffix == ".json" and path.stem in logs:
                continue  # the op log of the same session wins
            unit_files = [str(path)] + ([str(workspace)] if workspace else [])
            yield Unit(agent=self.id, path=str(path), files=unit_files, root=str(root))

    # -- reading --------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        now = time.time() if now is None else now
        path = Path(unit.path)
        book = RecordBook(Session(agent=self.id, id=path.stem, path=unit.path, resumable=False))
        builder = SessionBuilder(book)
        mtime = os.stat(path).st_mtime
        settled = now - mtime >= SETTLE_SECONDS
        if path.suffix == ".jsonl":
            doc = replay_log(path, book, settled=settled)
            if doc is not None:
                builder.build(doc, count_requests=False)
        else:
            document = read_document(path, now=now)
            if document.ok:
                builder.build(document.value, count_requests=True)
            elif not document.empty:
                book.bad(1)
                book.session.truncated = document.settled
        s = book.session
        if s.usage.is_zero():
            s.usage = book.total_usage()
        workspace = next((f for f in unit.files if f.endswith("workspace.json")), None)
        if workspace:
            s.cwd = workspace_folder(Path(workspace)) or s.cwd
        s.project = project_of(s.cwd) if s.cwd else s.project
        s.path, s.mtime, s.resumable = unit.path, mtime, False
        if unit.archived:
            s.archived = True
        return book.result()

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if os.path.exists(f)]


def _session_files(folder: Path) -> list[Path]:
    try:
        return sorted(
            p
            for p in folder.iterdir()
            if p.suffix in (".json", ".jsonl") and p.is_file() and p.name != "workspace.json"
        )
    except OSError:
        return []
