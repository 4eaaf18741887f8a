"""The Codebuff adapter: ``<config dir>/projects/<project basename>/chats/<chat id>/``.

The CLI (``cli/src/utils/config-dir.ts``, ``project-files.ts``, ``utils/run-state-storage.ts``)
keeps its config dir at ``~/.config/manicode`` on every OS (``manicode-dev`` /
``manicode-staging`` for its development and staging builds; no XDG variable moves it). A
chat's folder is named by its start time (ISO with ``:`` → ``-``) and sits under the *basename*
of the project root, so the full working directory is known only from what the chat records:
the run state's ``fileContext.projectRoot``, else the folder of a bash command the chat ran
(``metadata.bashCwd``) whose ancestor has the project's name. ``$CODEBUFF_DATA_DIR`` (the root
peer usage readers honour) replaces the config dir.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.codebuff.chat import ChatReader
from agtaild.adapters.codebuff.run_state import RunStateFacts, facts_of
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.session_dir import BadRecord, SessionDir, SessionDirAdapter, json_document
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.errors import AgtailError
from agtaild.model import Event, Session

MESSAGES = "chat-messages.json"
RUN_STATE = "run-state.json"
#: The config dirs of Codebuff's builds: production, then its development and staging stacks.
CHANNELS = ("manicode", "manicode-dev", "manicode-staging")
_CHAT_ID = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(\.\d+)?Z$")


def started_from_chat_id(chat_id: str) -> str | None:
    """``2025-12-14T10-00-00.000Z`` → ``2025-12-14T10:00:00.000Z`` (None for another name)."""
    m = _CHAT_ID.match(chat_id)
    if not m:
        return None
    millis = (m.group(5) or ".000")[1:4].ljust(3, "0")
    return f"{m.group(1)}T{m.group(2)}:{m.group(3)}:{m.group(4)}.{millis}Z"


def project_dir_from(candidate: str | None, project: str) -> str | None:
    """The folder named ``project`` at or above ``candidate`` (an absolute path), if any."""
    if not candidate or not os.path.isabs(candidate):
        return None
    path = PurePath(candidate)
    for place in (path, *path.parents):
        if place.name == project:
            return str(place)
    return None


class CodebuffAdapter(SessionDirAdapter):
    id: ClassVar[str] = "codebuff"
    name: ClassVar[str] = "Codebuff"
    env_vars: ClassVar[tuple[str, ...]] = ("CODEBUFF_DATA_DIR",)
    root_help: ClassVar[str] = "the projects folder of the config dir (~/.config/manicode/projects)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "codebuff CLI chat-messages.json (hand-made from the source's types)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("codebuff/handmade/manicode/projects",)
    member_files: ClassVar[tuple[str, ...]] = (MESSAGES, RUN_STATE)
    marker_files: ClassVar[tuple[str, ...]] = (MESSAGES,)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        moved = env_path(env, "CODEBUFF_DATA_DIR")
        if moved is not None:
            return [moved if moved.name == "projects" else moved / "projects"]
        return [home / ".config" / channel / "projects" for channel in CHANNELS]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for project in scan.entries(root):
            if not scan.is_dir(project):
                continue
            chats = Path(project.path) / "chats"
            if not chats.is_dir():
                continue
            for chat in scan.entries(chats):
                if scan.is_dir(chat):
                    unit = self.unit_for(Path(chat.path), root)
                    if unit is not None:
                        yield unit

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in super().native_files(unit) if ".tmp." not in os.path.basename(f)]

    def new_session(self, unit: Unit) -> Session:
        chat_id = Path(unit.path).name
        project = Path(unit.path).parent.parent.name
        return Session(
            agent=self.id, id=chat_id, path=unit.path, project=project, started=started_from_chat_id(chat_id)
        )

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        reader = ChatReader(book)
        doc = json_document(sdir.files[MESSAGES]) if sdir.has(MESSAGES) else []
        if isinstance(doc, BadRecord):
            if not sdir.settled:  # written in place (writeFileSync): read it again once whole
                raise AgtailError(f"{sdir.files[MESSAGES]} is being rewritten; it will be read again")
            book.bad(1)
            s.truncated = True
        elif isinstance(doc, list):
            reader.read(doc)
        else:
            book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"file": MESSAGES}))
            book.count("events")
        facts = self._run_state(sdir, book)
        s.usage = book.total_usage()
        self._summarise(s, reader, facts, unit)

    def _run_state(self, sdir: SessionDir, book: RecordBook) -> RunStateFacts | None:
        if not sdir.has(RUN_STATE):
            return None
        doc = json_document(sdir.files[RUN_STATE])
        if isinstance(doc, BadRecord):
            book.bad(1)
            book.session.extra["bad_files"] = [RUN_STATE]
            return None
        facts = facts_of(doc)
        book.count("metadata" if facts is not None else "skipped")
        return facts

    def _summarise(self, s: Session, reader: ChatReader, facts: RunStateFacts | None, unit: Unit) -> None:
        project = s.project or ""
        candidates = [facts.project_root, facts.cwd] if facts is not None else []
        candidates += [reader.run_state_cwd, reader.cwd]
        for candidate in candidates:
            found = project_dir_from(candidate, project)
            if found:
                s.cwd = found
                break
        s.title = title_from_prompt(s.first_prompt)
        failed = facts is not None and facts.output == "error"
        s.ending = "error" if reader.last_variant == "error" or failed else None
        if facts is not None and facts.error:
            s.extra["run_error"] = facts.error
        if reader.credits:
            s.extra["credits"] = round(reader.credits, 6)
        if facts is not None and facts.credits_used is not None:
            s.extra["credits_used"] = facts.credits_used
        channel = _channel(unit)
        if channel:
            s.extra["channel"] = channel
        s.extra["project_folder"] = project
        s.resumable = s.cwd is not None and channel in (None, "manicode")

    def resume(self, session: Session) -> ResumeCommand | None:
        """``codebuff --continue=<chat id>`` in the project root (the CLI's ``--help``:
        "--continue [conversation-id]  Continue from a previous conversation"). The CLI looks the
        id up under the basename of the folder it starts in and falls back to the newest chat
        when it is not there, so a chat whose project root is unknown, or one of the dev or
        staging builds, is not resumed."""
        if not session.resumable or not session.cwd or session.imported:
            return None
        return ResumeCommand(argv=["codebuff", f"--continue={session.id}"], cwd=session.cwd)


def _channel(unit: Unit) -> str | None:
    root = Path(unit.root)
    name = root.parent.name if root.name == "projects" else root.name
    return name if name in CHANNELS else None
