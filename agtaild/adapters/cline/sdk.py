"""Cline SDK sessions: Cline CLI 3.x (and the SDK-based extension) under ``~/.cline/data/sessions``.

``sessions/<sid>/`` holds ``<sid>.json`` (the manifest: status, exit code, provider, model,
cwd, prompt, ``metadata.{title, git.branch, usage, aggregateUsage}``), ``<sid>.messages.json``
(``{version, updated_at, agent, sessionId, origin, messages[], system_prompt}``, Anthropic-style
messages with ``metrics`` per model response) and optionally ``<sid>.compaction.json``.
Subagents write ``agent_<id>.messages.json`` (or ``<agentId>__<teamTaskId>.messages.json``)
into their root session's folder; each is a session of its own whose parent is the root
session and whose spawning call is the parent's ``spawn_agent`` with the same task.
``db/sessions.db`` mirrors the manifests (and subagent rows) and is not needed to read.

Everything is rewritten whole (``writeFileSync``), so each read is whole. Records: the
manifest, the messages document's header, each message, the compaction file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agtaild.adapters.base import Unit
from agtaild.adapters.cline.history import HistoryWalk
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.session_dir import json_document
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import sub, title_from_prompt
from agtaild.model import ParentRef, Session, project_of

_STATUS_ENDINGS = {"failed": "error", "error": "error", "cancelled": "interrupted", "aborted": "interrupted"}
#: Manifest ``metadata.terminal_marker``: the process died without closing the session.
_KILLED = "failed_external_process_exit"


def session_folders(root: Path) -> list[Path]:
    """The ``sessions`` folders ``root`` means: itself, ``root/sessions``, ``root/data/sessions``."""
    if root.name == "sessions" and root.is_dir():
        return [root]
    return [p for p in (root / "sessions", root / "data" / "sessions") if p.is_dir()]


def discover(agent: str, root: Path) -> Iterator[Unit]:
    for sessions in session_folders(root):
        try:
            names = sorted(e.name for e in os.scandir(sessions) if e.is_dir() and not e.name.startswith("."))
        except OSError:
            continue
        for name in names:
            folder = sessions / name
            manifest, messages = folder / f"{name}.json", folder / f"{name}.messages.json"
            if not (manifest.is_file() or messages.is_file()):
                continue
            files = [str(p) for p in (manifest, messages, folder / f"{name}.compaction.json") if p.is_file()]
            yield Unit(agent=agent, path=str(folder), files=files, root=str(root), hints={"sdk": "session"})
            for child in sorted(folder.glob("*.messages.json")):
                if child.name != messages.name:
                    yield Unit(agent=agent, path=str(child), files=[str(child)], root=str(root),
                               hints={"sdk": "child", "parent": name})


def read(agent: str, unit: Unit, now: float) -> tuple[RecordBook, float]:
    """Read one SDK session folder or subagent file; returns the book and the newest mtime."""
    path = Path(unit.path)
    if unit.hints.get("sdk") == "child" or path.is_file():
        return _read_child(agent, unit, path, now)
    name = path.name
    book = RecordBook(Session(agent=agent, id=name, path=unit.path))
    s = book.session
    files = {Path(f).name: Path(f) for f in unit.files if os.path.isfile(f)}
    newest = max((os.stat(f).st_mtime for f in files.values()), default=path.stat().st_mtime)
    settled = now - newest >= SETTLE_SECONDS
    manifest = _document(files.get(f"{name}.json"), book, s, settled)
    walk = _messages(files.get(f"{name}.messages.json"), book, s, settled)
    if f"{name}.compaction.json" in files:
        _document(files[f"{name}.compaction.json"], book, s, settled)
        s.compactions += 1
    _summarise(s, manifest, walk)
    return book, newest


def _document(path: Path | None, book: RecordBook, s: Session, settled: bool) -> dict[str, Any]:
    if path is None:
        return {}
    doc = json_document(path)
    if isinstance(doc, dict):
        book.count("metadata")
        return doc
    book.bad(1)
    s.truncated = settled
    s.extra.setdefault("bad_files", []).append(path.name)
    return {}


def _messages(path: Path | None, book: RecordBook, s: Session, settled: bool) -> HistoryWalk:
    walk = HistoryWalk()
    doc = _document(path, book, s, settled)
    messages = doc.get("messages")
    if isinstance(messages, list):
        for i, msg in enumerate(messages):
            category = walk.message(i, msg)
            if category == "bad":
                book.bad(i + 2)
            else:
                book.count(category)  # type: ignore[arg-type]
    for t in walk.out:
        book.emit(t.event)
    for record in walk.metric_usage:
        book.add_usage(record)
    s.usage = book.total_usage()
    origin = sub(doc, "origin")
    s.extra["sdk_origin"] = origin
    if isinstance(doc.get("sessionId"), str) and doc["sessionId"]:
        s.extra["sdk_session_id"] = doc["sessionId"]
    if isinstance(doc.get("agent"), str):
        s.extra["sdk_agent"] = doc["agent"]
    s.started, s.ended = widen(s.started, s.ended, norm_iso(doc.get("updated_at")))
    return walk


def _summarise(s: Session, manifest: dict[str, Any], walk: HistoryWalk) -> None:
    meta = sub(manifest, "metadata")
    if isinstance(manifest.get("session_id"), str) and manifest["session_id"]:
        s.id = manifest["session_id"]
    cwd = manifest.get("cwd") or manifest.get("workspace_root") or walk.cwd
    s.cwd = cwd if isinstance(cwd, str) and cwd else None
    s.project = project_of(s.cwd)
    git = sub(meta, "git")
    s.git_branch = git.get("branch") if isinstance(git.get("branch"), str) else None
    s.first_prompt = walk.first_prompt or (manifest["prompt"] if isinstance(manifest.get("prompt"), str) else None)
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    s.title = title_from_prompt(title or s.first_prompt)
    models = list(walk.models)
    if isinstance(manifest.get("model"), str) and manifest["model"] not in models:
        models.append(manifest["model"])
    s.models = models
    s.messages = walk.messages
    s.compactions += walk.compactions
    for key in ("started_at", "ended_at"):
        s.started, s.ended = widen(s.started, s.ended, norm_iso(manifest.get(key)))
    for t in walk.out:
        s.started, s.ended = widen(s.started, s.ended, t.event.ts)
    if isinstance(manifest.get("source"), str):
        s.origin = manifest["source"]
    if manifest.get("interactive") is False:
        s.programmatic = True
    status = manifest.get("status")
    if isinstance(status, str):
        s.extra["status"] = status
        s.ending = _STATUS_ENDINGS.get(status)
    if meta.get("terminal_marker") == _KILLED and status != "completed":
        s.ending = "interrupted"
    if s.ending is None and walk.error:
        s.ending = "error"
    for key in ("provider", "exit_code", "team_name", "pid"):
        if isinstance(manifest.get(key), str | int) and not isinstance(manifest.get(key), bool):
            s.extra[key] = manifest[key]
    recorded = sub(meta, "usage")
    cost = recorded.get("totalCost", meta.get("totalCost"))
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        s.extra["recorded_cost_usd"] = round(float(cost), 10)
    if recorded:
        s.extra["recorded_usage"] = recorded
    s.extra["store"] = "sessions"
    s.version = _cli_version(manifest, s.extra.get("sdk_origin"))


def _cli_version(manifest: Any, origin: Any) -> str | None:
    """The Cline CLI's version: the manifest's ``metadata.sessionHistoryOrigin.version``, else
    the messages document's ``origin.version`` (both "3.0.65" in 3.0.65's files)."""
    for where in (sub(sub(manifest, "metadata"), "sessionHistoryOrigin"), origin):
        version = where.get("version") if isinstance(where, dict) else None
        if isinstance(version, str) and version.strip():
            return version.strip()
    return None


def _read_child(agent: str, unit: Unit, path: Path, now: float) -> tuple[RecordBook, float]:
    parent = str(unit.hints.get("parent") or path.parent.name)
    book = RecordBook(Session(agent=agent, id=f"{parent}__{path.name.removesuffix('.messages.json')}", path=unit.path))
    s = book.session
    newest = path.stat().st_mtime
    walk = _messages(path, book, s, now - newest >= SETTLE_SECONDS)
    origin = s.extra.get("sdk_origin") or {}
    if isinstance(origin.get("sessionId"), str) and origin["sessionId"]:
        s.id = origin["sessionId"]
    if isinstance(origin.get("parentThreadId"), str) and origin["parentThreadId"]:
        parent = origin["parentThreadId"]
    s.first_prompt = walk.first_prompt
    s.title = title_from_prompt(walk.first_prompt)
    s.models = list(walk.models)
    s.messages = walk.messages
    s.compactions = walk.compactions
    for t in walk.out:
        s.started, s.ended = widen(s.started, s.ended, t.event.ts)
    if s.ending is None and walk.error:
        s.ending = "error"
    if isinstance(origin.get("source"), str):
        s.origin = origin["source"]
    s.extra["store"] = "sessions"
    s.extra["subagent"] = True
    call = _spawning_call(path.parent / f"{parent}.messages.json", walk.first_prompt)
    s.parent = ParentRef(agent=agent, id=parent, tool_use_id=call)
    manifest = json_document(path.parent / f"{parent}.json") if (path.parent / f"{parent}.json").is_file() else None
    if isinstance(manifest, dict):
        cwd = manifest.get("cwd")
        s.cwd = cwd if isinstance(cwd, str) and cwd else None
        s.project = project_of(s.cwd)
    s.version = _cli_version(manifest if isinstance(manifest, dict) else {}, origin)
    return book, newest


def _spawning_call(parent_messages: Path, task: str | None) -> str | None:
    """The id of the parent's ``spawn_agent`` call whose task is the subagent's first prompt."""
    if not task or not parent_messages.is_file():
        return None
    doc = json_document(parent_messages)
    messages = doc.get("messages") if isinstance(doc, dict) else None
    for msg in messages if isinstance(messages, list) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            args = block.get("input")
            if isinstance(args, dict) and str(args.get("task", "")).strip() == task.strip():
                value = block.get("id")
                return value if isinstance(value, str) else None
    return None
