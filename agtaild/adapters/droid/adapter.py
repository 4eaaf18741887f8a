"""Factory Droid (``droid``): ``~/.factory/sessions/<cwd-slug>/<id>.jsonl``.

The session log is append-only (parsed by :mod:`agtaild.adapters.droid.parser`) and read incrementally. Beside
it the CLI rewrites ``<id>.settings.json``: the model, autonomy mode, tags (``exec`` for
headless runs) and the session's token totals (``tokenUsage``; ``inclusiveTokenUsage`` adds
child sessions). The JSONL carries no per-message usage, so the sidecar's totals are the
session's one usage record, replaced on every read.

``~/.factory/state/task-invocations.json`` links a ``Task`` subagent's child session to the
parent session and the spawning tool call. No environment variable moves ``~/.factory``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit
from agtaild.adapters.droid.parser import DroidParser
from agtaild.adapters.kit import sidecars
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.kit.resume_ids import safe_id
from agtaild.model import ParentRef, Session, Usage, UsageRecord

_decoder = msgspec.json.Decoder()
_MAX_SIDECAR_BYTES = 16 << 20


class DroidAdapter(JsonlAdapter):
    id: ClassVar[str] = "droid"
    name: ClassVar[str] = "Factory Droid"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = "the sessions folder (~/.factory/sessions; ~/.factory works too)"
    formats_tested: ClassVar[tuple[str, ...]] = ("session JSONL 0.81.0 (peer fixture)", "0.225.2")
    sample_roots: ClassVar[tuple[str, ...]] = ("real/droid-0.225.2/sessions", "droid/agent-sessions/sessions")
    Parser = DroidParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [home / ".factory" / "sessions"]

    def discover(self, root: Path) -> Iterator[Unit]:
        sessions = root / "sessions" if (root / "sessions").is_dir() else root
        # ~/.factory/state/task-invocations.json links child sessions to their parents: a side
        # file of every unit (read from the copies in an archive or import)
        side = sidecars.locate(root, sessions.parent / "state" / "task-invocations.json", "state/task-invocations.json")
        children: dict[str, dict[str, Any]] = {}
        for index in side:
            for child, parent in _task_invocations(index).items():
                children.setdefault(child, parent)
        try:
            folders = sorted(p for p in sessions.iterdir() if p.is_dir() and p.name != sidecars.SIDE_DIR)
        except OSError:
            return
        for folder in [sessions, *folders]:
            try:
                files = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
            except OSError:
                continue
            for path in files:
                sid = path.stem
                unit_files = [str(path)]
                sidecar = path.with_name(f"{sid}.settings.json")
                if sidecar.is_file():
                    unit_files.append(str(sidecar))
                hints: dict[str, Any] = {"id": sid}
                if sid in children:
                    hints["parent"] = children[sid]
                yield Unit(
                    agent=self.id,
                    path=str(path),
                    files=unit_files,
                    root=str(root),
                    hints=hints,
                    sidecars=dict(side),
                    sidecar_key=sidecars.key(children.get(sid)),
                )

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        s = result.session
        settings = _read_json(Path(unit.path).with_name(f"{Path(unit.path).stem}.settings.json"))
        if isinstance(settings, dict):
            _apply_settings(s, settings, result)
        parent = unit.hints.get("parent")
        if isinstance(parent, dict) and isinstance(parent.get("id"), str):
            tool = parent.get("tool_use_id")
            s.parent = ParentRef(agent=self.id, id=parent["id"], tool_use_id=tool if isinstance(tool, str) else None)
            if isinstance(parent.get("subagent_type"), str):
                s.extra["subagent_type"] = parent["subagent_type"]
        return result

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if os.path.exists(f)]

    def side_file_for(self, place: str, data: bytes, units: list[Unit]) -> bytes | None:
        """task-invocations.json with only the invocations that made the units' sessions."""
        try:
            doc = _decoder.decode(data)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
        items = doc.get("invocations") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            return None
        ids = {u.hints.get("id") for u in units}
        kept = [inv for inv in items if isinstance(inv, dict) and inv.get("childSessionId") in ids]
        return msgspec.json.encode({**doc, "invocations": kept})

    def resume(self, session: Session) -> ResumeCommand | None:
        sid = safe_id(session.id)
        if sid is None:
            return None
        return ResumeCommand(argv=["droid", "--resume", sid], cwd=session.cwd)


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_SIDECAR_BYTES:
            return None
        return _decoder.decode(read_regular(path))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None


def _count(raw: dict[str, Any], key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def settings_usage(raw: Any) -> Usage | None:
    """A settings ``tokenUsage`` → Usage. Droid already leaves cached tokens out of input."""
    if not isinstance(raw, dict):
        return None
    usage = Usage(
        input_tokens=_count(raw, "inputTokens"),
        output_tokens=_count(raw, "outputTokens"),
        cache_read_tokens=_count(raw, "cacheReadTokens"),
        cache_write_tokens=_count(raw, "cacheCreationTokens"),
        reasoning_tokens=_count(raw, "thinkingTokens"),
    ).fix_total()
    return None if usage.is_zero() else usage


def _apply_settings(s: Session, settings: dict[str, Any], result: ReadResult) -> None:
    model = settings.get("model")
    if isinstance(model, str) and model and model not in s.models:
        s.models.append(model)
    tags = settings.get("tags")
    names = [t.get("name") for t in tags if isinstance(t, dict)] if isinstance(tags, list) else []
    if "exec" in names:
        s.programmatic = True
        s.origin = "exec"
    for key in ("autonomyMode", "reasoningEffort", "interactionMode", "assistantActiveTimeMs"):
        if settings.get(key) is not None:
            s.extra[key] = settings[key]
    usage = settings_usage(settings.get("tokenUsage"))
    if usage is not None:
        s.usage = usage
        result.usage = [UsageRecord(key="settings:tokenUsage", ts=s.ended, model=model if isinstance(model, str) else None, usage=usage)]


def _task_invocations(path: str) -> dict[str, dict[str, Any]]:
    """child session id → {id, tool_use_id, subagent_type} of the parent, from the state file
    (one that does not decode is reported: agtaild.adapters.kit.sidecars)."""
    doc = sidecars.load_json(path)
    items = doc.get("invocations") if isinstance(doc, dict) else None
    out: dict[str, dict[str, Any]] = {}
    for inv in items if isinstance(items, list) else []:
        if not isinstance(inv, dict):
            continue
        child, parent = inv.get("childSessionId"), inv.get("parentSessionId")
        if isinstance(child, str) and isinstance(parent, str):
            out[child] = {
                "id": parent,
                "tool_use_id": inv.get("parentToolUseId"),
                "subagent_type": inv.get("subagentType"),
            }
    return out
