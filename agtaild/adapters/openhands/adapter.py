"""OpenHands CLI (OpenHands/OpenHands-CLI on the software-agent-sdk): one folder per conversation.

Where (``openhands_cli/locations.py``): ``OPENHANDS_CONVERSATIONS_DIR``, else
``$OPENHANDS_PERSISTENCE_DIR/conversations``, else ``~/.openhands/conversations``. A
conversation is ``<32-hex id>/`` with ``base_state.json`` (agent and LLM config, workspace,
``execution_status``, ``stats.usage_to_metrics`` with one ``token_usages`` entry per model
response), ``events/event-<5-digit n>-<uuid>.json`` (one event per file, see
:mod:`agtaild.adapters.openhands.events`), ``TASKS.json`` (the task tracker) and ``subagents/<id>/`` (a
``task`` subagent: the same layout, read as a session of its own).

Event files are only ever added; ``base_state.json`` is rewritten. The folder is read whole
whenever one of its files changes. Records: ``base_state.json``, ``TASKS.json`` and each event
file.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.session_dir import SessionDir, SessionDirAdapter, json_bytes, json_document
from agtaild.adapters.kit.stamps import widen
from agtaild.adapters.kit.values import num, sub, title_from_prompt
from agtaild.adapters.openhands.events import EventWalk
from agtaild.model import ParentRef, Session, Usage, UsageRecord, project_of

_ENDINGS = {"error": "error", "stuck": "error", "paused": "interrupted"}


class OpenHandsAdapter(SessionDirAdapter):
    id: ClassVar[str] = "openhands"
    name: ClassVar[str] = "OpenHands CLI"
    env_vars: ClassVar[tuple[str, ...]] = ("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR")
    root_help: ClassVar[str] = "~/.openhands, or its conversations/ folder (one <hex id>/ per conversation)"
    formats_tested: ClassVar[tuple[str, ...]] = ("OpenHands CLI 1.16.0 (software-agent-sdk 1.21.0)",)
    sample_roots: ClassVar[tuple[str, ...]] = ("real/openhands-1.16.0",)
    member_files: ClassVar[tuple[str, ...]] = ("base_state.json", "TASKS.json")
    marker_files: ClassVar[tuple[str, ...]] = ("base_state.json",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        explicit = env_path(env, "OPENHANDS_CONVERSATIONS_DIR")
        if explicit is not None:
            return [explicit]
        return [(env_path(env, "OPENHANDS_PERSISTENCE_DIR") or home / ".openhands") / "conversations"]

    def discover(self, root: Path) -> Iterator[Unit]:
        base = root / "conversations" if (root / "conversations").is_dir() else root
        for folder in _subdirs(base):
            yield from self._units(folder, root, parent=None)

    def _units(self, folder: Path, root: Path, parent: str | None) -> Iterator[Unit]:
        events = folder / "events"
        if not (folder / "base_state.json").is_file() and not events.is_dir():
            return
        files = [str(folder / n) for n in self.member_files if (folder / n).is_file()]
        files += [str(events / n) for n in _event_names(events)]
        hints: dict[str, Any] = {"parent": parent} if parent else {}
        yield Unit(agent=self.id, path=str(folder), files=files, root=str(root), hints=hints)
        for child in _subdirs(folder / "subagents"):
            yield from self._units(child, root, parent=folder.name)

    def native_files(self, unit: Unit) -> list[str]:
        """The conversation's own files, without its subagents (they are units of their own)."""
        return [f for f in super().native_files(unit) if "subagents" not in Path(f).relative_to(unit.path).parts]

    def snapshot(self, unit: Unit, *, now: float | None = None) -> SessionDir:
        """As the helper's, but a new or changed event file also counts (for settling). The
        event files are read here, each with one open and one fstat (their mtime and their
        bytes together): one file per event makes the system calls the read's main cost."""
        sdir = super().snapshot(unit, now=now)
        events = os.path.join(sdir.path, "events")
        blobs: list[bytes | None] = []
        for name in _event_names(Path(events)):
            blob, mtime = _read_with_mtime(os.path.join(events, name))
            blobs.append(blob)
            sdir.mtime = max(sdir.mtime, mtime)
        sdir.settled = (time.time() if now is None else now) - sdir.mtime >= SETTLE_SECONDS
        return _Conversation(path=sdir.path, files=sdir.files, mtime=sdir.mtime, settled=sdir.settled, events=blobs)

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        state = json_document(sdir.files["base_state.json"]) if sdir.has("base_state.json") else None
        if isinstance(state, dict):
            book.count("metadata")
        elif sdir.has("base_state.json"):
            book.bad(1)
            s.truncated = sdir.settled
            s.extra["bad_files"] = ["base_state.json"]
        state = state if isinstance(state, dict) else {}
        if sdir.has("TASKS.json"):
            tasks = json_document(sdir.files["TASKS.json"])
            if isinstance(tasks, list | dict):
                book.count("metadata")
                s.extra["tasks"] = tasks
            else:
                book.bad(1)
        walk = EventWalk(book)
        blobs = sdir.events if isinstance(sdir, _Conversation) else []
        for number, blob in enumerate(blobs, start=1):
            if blob is None:
                book.bad(number)
                continue
            walk.feed(number, json_bytes(blob))
        for record in usage_records(state):
            book.add_usage(record)
        self._summarise(s, sdir, state, walk, unit)

    def _summarise(self, s: Session, sdir: SessionDir, state: dict[str, Any], walk: EventWalk, unit: Unit) -> None:
        if isinstance(state.get("id"), str):
            s.extra["conversation_id"] = state["id"]
        cwd = sub(state, "workspace").get("working_dir")
        s.cwd = cwd if isinstance(cwd, str) and cwd else None
        s.project = project_of(s.cwd)
        s.first_prompt = walk.first_prompt
        s.title = title_from_prompt(walk.first_prompt)
        models: list[str] = []
        llm_model = sub(sub(state, "agent"), "llm").get("model")
        for m in [llm_model, *(r.model for r in usage_records(state))]:
            if isinstance(m, str) and m and m not in models:
                models.append(m)
        s.models = models
        s.messages = walk.messages
        for ev in walk.book.events:
            s.started, s.ended = widen(s.started, s.ended, ev.ts)
        s.usage = walk.book.total_usage()
        status = state.get("execution_status")
        if isinstance(status, str):
            s.extra["execution_status"] = status
        s.ending = "error" if walk.error else _ENDINGS.get(status) if isinstance(status, str) else None
        if s.ending is None and (walk.paused or (walk.open_call and sdir.settled)):
            s.ending = "interrupted"
        cost = sub(sub(sub(state, "stats"), "usage_to_metrics"), "agent").get("accumulated_cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            s.extra["recorded_cost_usd"] = round(float(cost), 10)
        parent = unit.hints.get("parent") or _parent_from_path(sdir.path)
        if parent:
            s.parent = ParentRef(agent=self.id, id=str(parent), tool_use_id=_task_call(sdir.path.parent.parent, s.first_prompt))
            s.extra["subagent"] = True
            s.resumable = False

    def resume(self, session: Session) -> ResumeCommand | None:
        """``openhands --resume <conversation id>`` (the dashed UUID the CLI prints) in the
        workspace; subagents are not resumable."""
        if session.imported or session.archived or session.parent is not None:
            return None
        try:
            conv = uuid.UUID(hex=session.id)
        except (ValueError, TypeError, AttributeError):
            return None
        return ResumeCommand(argv=["openhands", "--resume", str(conv)], cwd=session.cwd)


def usage_records(state: dict[str, Any]) -> list[UsageRecord]:
    """One record per model response: ``stats.usage_to_metrics.<usage id>.token_usages[]``.
    litellm's ``prompt_tokens`` include the cached tokens (taken out again here) and
    ``completion_tokens`` include reasoning (agtail's convention too). The ``task:<id>`` usage
    ids repeat a subagent's own ``agent`` usage, which its session counts."""
    out: list[UsageRecord] = []
    metrics = sub(sub(state, "stats"), "usage_to_metrics")
    for usage_id, entry in metrics.items():
        if usage_id.startswith("task:"):
            continue  # a task subagent's calls, also in (and counted by) its own folder
        usages = entry.get("token_usages") if isinstance(entry, dict) else None
        for i, u in enumerate(usages if isinstance(usages, list) else []):
            if not isinstance(u, dict):
                continue
            prompt, read, write = num(u, "prompt_tokens"), num(u, "cache_read_tokens"), num(u, "cache_write_tokens")
            if prompt >= read + write:
                prompt -= read + write
            usage = Usage(input_tokens=prompt, output_tokens=num(u, "completion_tokens"), cache_read_tokens=read,
                          cache_write_tokens=write, reasoning_tokens=num(u, "reasoning_tokens")).fix_total()
            model = u.get("model") if isinstance(u.get("model"), str) else None
            key = f"{usage_id}:{i}:{u.get('response_id') or ''}"
            out.append(UsageRecord(key=key, ts=None, model=model, usage=usage))
    return out


class _Conversation(SessionDir):
    """A conversation folder with its event files' bytes (None: the file could not be read)."""

    events: list[bytes | None]


def _read_with_mtime(path: str) -> tuple[bytes | None, float]:
    """A whole file and its mtime from one open; (None, 0.0) when it can't be read (a read
    error is a bad record, never a missing event)."""
    try:
        fh = open_regular(path)  # a regular file only (agtaild.adapters.kit.files)
    except OSError:
        return None, 0.0
    with fh:
        try:
            fd = fh.fileno()
            st = os.fstat(fd)
            want = max(st.st_size, 4096) + 1
            chunks = [os.read(fd, want)]
            # a regular file reads short only at its end; a full read means it grew meanwhile
            while len(chunks[-1]) == want:
                chunks.append(os.read(fd, want))
            return b"".join(chunks), st.st_mtime
        except OSError:
            return None, 0.0


def _subdirs(folder: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(folder) if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []


def _event_names(events: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(events) if e.name.endswith(".json") and e.is_file())
    except OSError:
        return []


def _parent_from_path(folder: Path) -> str | None:
    return folder.parent.parent.name if folder.parent.name == "subagents" else None


def _task_call(parent_folder: Path, prompt: str | None) -> str | None:
    """The parent's ``task`` call whose prompt is the subagent's first message."""
    if not prompt:
        return None
    events = parent_folder / "events"
    for name in _event_names(events):
        doc = json_document(events / name)
        if not isinstance(doc, dict) or doc.get("kind") != "ActionEvent":
            continue
        action = sub(doc, "action")
        if action.get("kind") == "TaskAction" and str(action.get("prompt", "")).strip() == prompt.strip():
            call = doc.get("tool_call_id")
            return call if isinstance(call, str) else None
    return None

