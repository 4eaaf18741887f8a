"""Cline-family task folders: one directory per task, shared by Cline, Roo Code and Kilo Code.

``<storage>/tasks/<taskId>/`` holds ``api_conversation_history.json`` (the conversation,
:mod:`agtaild.adapters.cline.history`), ``ui_messages.json`` (the chat panel, :mod:`agtaild.adapters.cline.ui`),
``task_metadata.json`` (files in context, models used, environment) and, in Roo Code,
``history_item.json`` (the task's index entry: parent/child task links, mode, workspace).
``<storage>`` is the extension's globalStorage folder in a VS Code-family editor, or
``~/.cline/data`` for Cline's CLI 2.x. The task index (Cline ``state/taskHistory.json``,
Roo ``tasks/_index.json``, Kilo ``task_history.json``) adds the title and cwd.

All files are rewritten whole on every save, so a task is re-read whole (session_dir).
Records: each element of the two arrays, plus one per metadata document.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import Unit
from agtaild.adapters.cline.history import HistoryWalk, Timed
from agtaild.adapters.cline.ui import UiWalk
from agtaild.adapters.kit import scan, sidecars
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.session_dir import BadRecord, SessionDir, SessionDirAdapter, json_document
from agtaild.adapters.kit.stamps import from_epoch, widen
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.adapters.kit.vscode_hosts import global_storage
from agtaild.model import ParentRef, Session, project_of

TASK_FILES = ("api_conversation_history.json", "ui_messages.json", "task_metadata.json", "history_item.json")
#: Where the task index sits, relative to the ``tasks`` folder, and its name in a copy (a side
#: file of every task: agtaild.adapters.kit.sidecars).
_INDEXES = (
    ("../state/taskHistory.json", "state/taskHistory.json"),
    ("_index.json", "tasks/_index.json"),
    ("../task_history.json", "task_history.json"),
)
#: UI records after which a task with an unanswered call still counts as finished.
_DONE = {"completion_result", "resume_completed_task"}


def task_folders(root: Path) -> list[Path]:
    """The ``tasks`` folders ``root`` means: itself, ``root/tasks`` or ``root/data/tasks``."""
    if root.name == "tasks" and root.is_dir():
        return [root]
    return [p for p in (root / "tasks", root / "data" / "tasks") if p.is_dir()]


def index_files(root: Path, tasks: Path) -> dict[str, str]:
    """The task indexes the tasks of ``tasks`` depend on, as ``Unit.sidecars`` (a symlink, a
    huge or a broken one reported: agtaild.adapters.kit.sidecars)."""
    side: dict[str, str] = {}
    for rel, name in _INDEXES:
        side.update(sidecars.locate(root, os.path.normpath(tasks / rel), name))
    return side


class _IndexCache:
    """Task index files parsed once per version (every task of a folder reads the same one)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[tuple[float, int], dict[str, dict[str, Any]], str | None]] = {}

    def _load(self, path: str) -> tuple[dict[str, dict[str, Any]], str | None] | None:
        """The entries of one index and why it could not be read (None: it is not there)."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        stamp = (st.st_mtime, st.st_size)
        cached = self._seen.get(path)
        if cached is None or cached[0] != stamp:
            doc = sidecars.load_json(path, report=False)
            error = None if doc is not None else "side file is not valid JSON or not readable; sessions read without it"
            cached = (stamp, _entries(doc), error)
            self._seen[path] = cached
        return cached[1], cached[2]

    def check(self, paths: Iterator[str] | list[str]) -> None:
        """Report each index that cannot be read (once per discovery; parsed once per version)."""
        for path in paths:
            loaded = self._load(path)
            if loaded is not None and loaded[1] is not None:
                scan.unsure(path, loaded[1])

    def entry(self, paths: list[str], task_id: str) -> dict[str, Any]:
        for path in paths:
            loaded = self._load(path)
            if loaded is not None and task_id in loaded[0]:
                return loaded[0][task_id]
        return {}


def _entries(doc: Any) -> dict[str, dict[str, Any]]:
    items: Any = doc
    if isinstance(doc, dict):
        lists = [v for v in doc.values() if isinstance(v, list)]
        items = lists[0] if lists else list(doc.values())
    if not isinstance(items, list):
        return {}
    return {str(i["id"]): i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str | int)}


def _only(doc: Any, ids: set[str]) -> Any:
    """``doc`` (a task index: a list of entries, an object holding that list, or an object of
    entries) keeping only the entries whose id is one of ``ids``."""

    def mine(item: Any) -> bool:
        return isinstance(item, dict) and str(item.get("id")) in ids

    if isinstance(doc, list):
        return [i for i in doc if mine(i)]
    if not isinstance(doc, dict):
        return []
    lists = [k for k, v in doc.items() if isinstance(v, list)]
    if lists:
        return {**doc, lists[0]: [i for i in doc[lists[0]] if mine(i)]}
    return {k: v for k, v in doc.items() if mine(v)}


class TaskDirAdapter(SessionDirAdapter):
    """Base of the Cline-family adapters that read task folders."""

    member_files: ClassVar[tuple[str, ...]] = TASK_FILES
    marker_files: ClassVar[tuple[str, ...]] = ("api_conversation_history.json", "ui_messages.json")
    #: The VS Code extension ids whose globalStorage holds ``tasks/``.
    extension_ids: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._index = _IndexCache()

    def extension_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [p for ext in self.extension_ids for p in global_storage(env, home, ext)]

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return self.extension_roots(env, home)

    def discover(self, root: Path) -> Iterator[Unit]:
        yield from self.discover_tasks(root)

    def discover_tasks(self, root: Path) -> Iterator[Unit]:
        for tasks in task_folders(root):
            try:
                children = sorted(e.name for e in os.scandir(tasks) if e.is_dir() and not e.name.startswith("."))
            except OSError:
                continue
            side = index_files(root, tasks)
            indexes = list(side)
            self._index.check(indexes)
            for name in children:
                unit = self.unit_for(tasks / name, root)
                if unit is not None:
                    unit.sidecars = dict(side)
                    unit.sidecar_key = sidecars.key(self._index.entry(indexes, name) or None)
                    yield unit

    def side_file_for(self, place: str, data: bytes, units: list[Unit]) -> bytes | None:
        """A task index with only the entries of the units' tasks (in the shape it had)."""
        try:
            doc = msgspec.json.decode(data)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
        return msgspec.json.encode(_only(doc, {os.path.basename(u.path) for u in units}))

    def is_task_unit(self, unit: Unit) -> bool:
        return os.path.isdir(unit.path)

    def read_dir(self, sdir: SessionDir, book: RecordBook, unit: Unit) -> None:
        s = book.session
        hist, ui = HistoryWalk(), UiWalk()
        bad_files: list[str] = []
        self._array(sdir, "api_conversation_history.json", book, hist.message, bad_files)
        ui.default_provider = hist.providers[0] if hist.providers else None
        self._array(sdir, "ui_messages.json", book, lambda i, m: ui.message(i, m, 1_000_000), bad_files)
        meta = self._document(sdir, "task_metadata.json", book, bad_files)
        item = self._document(sdir, "history_item.json", book, bad_files)
        indexes = list(unit.sidecars) or [os.path.normpath(sdir.path.parent / rel) for rel, _ in _INDEXES]
        index = self._index.entry(indexes, sdir.path.name)
        item = {**index, **item}
        timed: list[Timed] = sorted(hist.out + ui.out, key=lambda t: (t.ms, t.order))
        for t in timed:
            book.emit(t.event)
        for record in ui.usage or hist.metric_usage:
            book.add_usage(record)
        if bad_files:
            s.extra["bad_files"] = bad_files
            s.truncated = sdir.settled
        self._summarise(s, sdir, hist, ui, meta, item, timed)
        s.usage = book.total_usage()

    def _array(self, sdir: SessionDir, name: str, book: RecordBook, walk: Any, bad_files: list[str]) -> None:
        if not sdir.has(name):
            return
        doc = json_document(sdir.files[name])
        if not isinstance(doc, list):
            book.bad(1)
            bad_files.append(name)
            return
        for i, msg in enumerate(doc):
            category = walk(i, msg)
            if category == "bad":
                book.bad(i + 1)
            else:
                book.count(category)

    def _document(self, sdir: SessionDir, name: str, book: RecordBook, bad_files: list[str]) -> dict[str, Any]:
        if not sdir.has(name):
            return {}
        doc = json_document(sdir.files[name])
        if isinstance(doc, dict):
            book.count("metadata")
            return doc
        if isinstance(doc, BadRecord) or doc is not None:
            book.bad(1)
            bad_files.append(name)
        return {}

    def _summarise(
        self,
        s: Session,
        sdir: SessionDir,
        hist: HistoryWalk,
        ui: UiWalk,
        meta: dict[str, Any],
        item: dict[str, Any],
        timed: list[Timed],
    ) -> None:
        s.first_prompt = hist.first_prompt or ui.task_text
        task = item.get("task") if isinstance(item.get("task"), str) else None
        s.title = title_from_prompt(task or s.first_prompt)
        cwd = item.get("cwdOnTaskInitialization") or item.get("workspace") or hist.cwd
        s.cwd = cwd if isinstance(cwd, str) and cwd else None
        s.project = project_of(s.cwd)
        models = list(hist.models)
        for m in [*ui.models, *_meta_models(meta), item.get("modelId")]:
            if isinstance(m, str) and m and m not in models:
                models.append(m)
        s.models = models
        for t in timed:
            s.started, s.ended = widen(s.started, s.ended, t.event.ts)
        s.started, s.ended = widen(s.started, s.ended, from_epoch(item.get("ts"), unit="ms"))
        s.messages = hist.messages
        s.compactions = hist.compactions
        s.ending = ui.ending or ("interrupted" if hist.interrupted else None)
        unanswered = any(e.result is None for e in hist.open_xml) or bool(hist.pending)
        if s.ending is None and unanswered and sdir.settled and ui.last_kind not in _DONE:
            s.ending = "interrupted"
        env = meta.get("environment_history")
        if isinstance(env, list) and env and isinstance(env[-1], dict):
            s.version = _task_version(env[-1], s.extra)
        parent = item.get("parentTaskId")
        if isinstance(parent, str) and parent:
            call = _new_task_call(sdir.path.parent / parent, s.first_prompt)
            s.parent = ParentRef(agent=self.id, id=parent, tool_use_id=call)
        for key in ("mode", "number", "status", "rootTaskId", "apiConfigName", "isFavorited"):
            if isinstance(item.get(key), str | int | bool):
                s.extra[key] = item[key]
        cost = item.get("totalCost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            s.extra["recorded_cost_usd"] = round(float(cost), 10)
        elif ui.recorded_cost:
            s.extra["recorded_cost_usd"] = round(ui.recorded_cost, 10)
        s.extra["store"] = "tasks"
        if ui.resumed:
            s.extra["resumed"] = ui.resumed
        s.resumable = self.resume(s) is not None  # editor tasks reopen in the editor only


def _meta_models(meta: dict[str, Any]) -> list[str]:
    usage = meta.get("model_usage")
    if not isinstance(usage, list):
        return []
    return [u["model_id"] for u in usage if isinstance(u, dict) and isinstance(u.get("model_id"), str)]


def _new_task_call(parent_dir: Path, prompt: str | None) -> str | None:
    """The id of the parent task's native ``new_task`` call whose message is the subtask's
    first prompt (XML calls have no id: None)."""
    path = parent_dir / "api_conversation_history.json"
    if not prompt or not path.is_file():
        return None
    doc = json_document(path)
    for msg in doc if isinstance(doc, list) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "new_task":
                args = block.get("input")
                if isinstance(args, dict) and str(args.get("message", "")).strip() == prompt.strip():
                    value = block.get("id")
                    return value if isinstance(value, str) else None
    return None


def _task_version(env: dict[str, Any], extra: dict[str, Any]) -> str | None:
    """The version of what ran the task, from ``environment_history``'s last entry.

    In an editor the host is the editor (``host_version`` is VS Code's) and ``cline_version`` the
    extension's: that one. The Cline CLI 2.x is a host of its own (``host_name`` "Cline CLI -
    Node.js") that embeds the extension's core, so ``cline_version`` (3.82.0 in 2.18.0's files) is
    the core's and ``host_version`` the CLI's own: that one. The other stays in ``extra``."""
    host, host_version, core = env.get("host_name"), env.get("host_version"), env.get("cline_version")
    if isinstance(host, str):
        extra["host"] = host
    host_version = host_version if isinstance(host_version, str) and host_version else None
    core = core if isinstance(core, str) and core else None
    if isinstance(host, str) and host.startswith("Cline CLI") and host_version:
        if core and core != host_version:
            extra["core_version"] = core
        return host_version
    if host_version and core and host_version != core:
        extra["host_version"] = host_version
    return core or host_version
