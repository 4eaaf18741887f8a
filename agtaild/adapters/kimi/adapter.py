"""Kimi CLI (MoonshotAI ``kimi-cli``): ``~/.kimi/sessions/<md5(work dir)>/<id>/``.

``$KIMI_SHARE_DIR`` replaces ``~/.kimi``. A session directory holds ``wire.jsonl`` (the event
log read here, incrementally: :mod:`agtaild.adapters.kimi.wire`), ``context.jsonl`` (the model context, which
revert/clear rotate; not read) and ``state.json`` (rewritten: ``custom_title``, archive flag,
todos). A subagent (``Agent`` tool) keeps the same files in ``<id>/subagents/<agent_id>/``
plus ``meta.json``; it is a child session whose parent is the session and whose spawning
call is found in the parent's mirrored ``SubagentEvent`` lines.

The work dir is not in the session: ``kimi.json`` in the share dir lists the work dirs, and the
bucket name is the MD5 of one of them (``<kaos>_<md5>`` for non-local ones).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kimi.code import KimiCodeReader
from agtaild.adapters.kimi.wire import KimiWireParser
from agtaild.adapters.kit import sidecars
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter
from agtaild.adapters.kit.resume_ids import UUID, safe_id
from agtaild.model import ParentRef, Session, project_of

_decoder = msgspec.json.Decoder()
_MAX_JSON_BYTES = 16 << 20


class KimiAdapter(JsonlAdapter):
    id: ClassVar[str] = "kimi"
    name: ClassVar[str] = "Kimi CLI / Kimi Code"
    env_vars: ClassVar[tuple[str, ...]] = ("KIMI_SHARE_DIR", "KIMI_CODE_HOME")
    root_help: ClassVar[str] = (
        "the sessions folder of Kimi CLI (~/.kimi/sessions; ~/.kimi works too) "
        "or of Kimi Code (~/.kimi-code/sessions)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("kimi-cli 1.51.0 (wire 1.10)", "Kimi Code wire 1.4 (peer fixture)")
    sample_roots: ClassVar[tuple[str, ...]] = ("real/kimi-1.51.0/sessions", "kimi/agent-sessions/sessions")
    Parser = KimiWireParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        share = env_path(env, "KIMI_SHARE_DIR") or home / ".kimi"
        code = env_path(env, "KIMI_CODE_HOME") or home / ".kimi-code"
        return [share / "sessions", code / "sessions"]

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        sessions = root / "sessions" if (root / "sessions").is_dir() else root
        # kimi.json (the work dirs) sits in the share dir, beside the sessions: a side file
        side = sidecars.locate(root, sessions.parent / "kimi.json", "kimi.json")
        work_dirs: dict[str, str] = {}  # bucket -> work dir: what kimi.json says of a unit
        for path in side:
            doc = sidecars.load_json(path)  # a broken one is reported once, here
            dirs = doc.get("work_dirs") if isinstance(doc, dict) else None
            for wd in dirs if isinstance(dirs, list) else []:
                for name in _bucket_of(wd) if isinstance(wd, dict) else ():
                    work_dirs.setdefault(name, str(wd["path"]))
        for bucket in _subdirs(sessions):
            if bucket.name == sidecars.SIDE_DIR:
                continue
            for folder in _subdirs(bucket):
                if folder.name.startswith("session_") and (folder / "agents").is_dir():
                    yield from KimiCodeReader(self.id).units(folder, root)
                    continue
                wire = folder / "wire.jsonl"
                if not wire.is_file():
                    continue
                said = sidecars.key(work_dirs.get(bucket.name))
                yield self._unit(folder, root, {"id": folder.name, "bucket": bucket.name}, side, said)
                for sub in _subdirs(folder / "subagents"):
                    if (sub / "wire.jsonl").is_file():
                        hints = {"id": sub.name, "bucket": bucket.name, "parent": folder.name}
                        yield self._unit(sub, root, hints, side, said)

    def _unit(self, folder: Path, root: Path, hints: dict[str, Any], side: dict[str, str], said: str) -> Unit:
        files = [str(folder / n) for n in ("wire.jsonl", "context.jsonl", "state.json", "meta.json") if (folder / n).is_file()]
        return Unit(
            agent=self.id,
            path=str(folder / "wire.jsonl"),
            files=files,
            root=str(root),
            hints=hints,
            sidecars=dict(side),
            sidecar_key=said,
        )

    # -- reading --------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        if unit.hints.get("kimi_code"):
            return KimiCodeReader(self.id).read(unit, state, now=now)
        result = super().read(unit, state, now=now)
        s = result.session
        folder = Path(unit.path).parent
        parent = unit.hints.get("parent")
        bucket = folder.parent.parent.parent if parent else folder.parent  # <bucket>/<id>[/subagents/<aid>]
        registries = sidecars.of(unit.sidecars, "kimi.json") or [str(bucket.parent.parent / "kimi.json")]
        s.cwd = next(filter(None, (_work_dir(Path(p), bucket.name) for p in registries)), None) or s.cwd
        s.project = project_of(s.cwd)
        state_doc = _read_json(folder / "state.json")
        if isinstance(state_doc, dict):
            _apply_state(s, state_doc)
        if not s.title:
            s.title = _first_line(s.first_prompt)
        if isinstance(parent, str):
            meta = _read_json(folder / "meta.json")
            if isinstance(meta, dict):
                s.extra["subagent_type"] = meta.get("subagent_type")
                s.title = _str(meta.get("description")) or s.title
            s.parent = ParentRef(agent=self.id, id=parent, tool_use_id=_spawning_call(folder.parent.parent / "wire.jsonl", s.id))
            s.resumable = False
        return result

    def native_files(self, unit: Unit) -> list[str]:
        if unit.hints.get("kimi_code"):
            return KimiCodeReader(self.id).native_files(unit)
        folder = Path(unit.path).parent
        extra = [folder / n for n in ("prompt.txt", "output")]
        return [*unit.files, *(str(p) for p in extra if p.is_file())]

    def side_file_for(self, place: str, data: bytes, units: list[Unit]) -> bytes | None:
        """kimi.json with only the work dirs whose MD5 names the units' buckets."""
        try:
            doc = _decoder.decode(data)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
        dirs = doc.get("work_dirs") if isinstance(doc, dict) else None
        if not isinstance(dirs, list):
            return None
        buckets = {u.hints.get("bucket") for u in units}
        kept = [wd for wd in dirs if isinstance(wd, dict) and _bucket_of(wd) & buckets]
        return msgspec.json.encode({"work_dirs": kept})

    def resume(self, session: Session) -> ResumeCommand | None:
        if session.parent is not None or not session.resumable:
            return None
        sid = safe_id(session.id, UUID)
        if sid is None:
            return None
        if session.extra.get("kimi_code"):
            return None  # Kimi Code's resume flag could not be verified (no CLI, fixtures only)
        # kimi --session <id> appends to the same session directory (the recorded mt runs).
        return ResumeCommand(argv=["kimi", "--session", sid], cwd=session.cwd)


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return None


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_JSON_BYTES:
            return None
        return _decoder.decode(read_regular(path))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None


def _bucket_of(wd: dict[str, Any]) -> set[str]:
    """The bucket names a work dir entry gives (``<md5>``, ``<kaos>_<md5>``)."""
    path = wd.get("path")
    if not isinstance(path, str):
        return set()
    digest = hashlib.md5(path.encode("utf-8"), usedforsecurity=False).hexdigest()
    return {digest, f"{wd.get('kaos')}_{digest}"}


def _work_dir(kimi_json: Path, bucket: str) -> str | None:
    """The work dir whose MD5 names ``bucket`` (``<kaos>_<md5>`` for non-local KAOS)."""
    doc = sidecars.load_json(str(kimi_json), report=False)
    dirs = doc.get("work_dirs") if isinstance(doc, dict) else None
    for wd in dirs if isinstance(dirs, list) else []:
        if isinstance(wd, dict) and bucket in _bucket_of(wd):
            return str(wd["path"])
    return None


def _apply_state(s: Session, doc: dict[str, Any]) -> None:
    title = _str(doc.get("custom_title"))
    if title:
        s.title = title
    if doc.get("archived") is True:
        s.extra["archived_in_kimi"] = True
    if isinstance(doc.get("todos"), list) and doc["todos"]:
        s.extra["todos"] = doc["todos"]
    if doc.get("plan_mode") is True:
        s.extra["plan_mode"] = True


def _spawning_call(parent_wire: Path, agent_id: str) -> str | None:
    """The parent's ``Agent`` call that ran ``agent_id``: its mirrored SubagentEvent lines
    carry ``parent_tool_call_id`` next to ``agent_id``."""
    needle = f'"agent_id": "{agent_id}"'.encode()
    compact = f'"agent_id":"{agent_id}"'.encode()
    try:
        data = read_regular(parent_wire)
    except OSError:
        return None
    at = max(data.find(needle), data.find(compact))
    if at < 0:
        return None
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    try:
        rec = _decoder.decode(data[start : end if end >= 0 else len(data)])
        payload = rec["message"]["payload"]
    except (msgspec.DecodeError, KeyError, TypeError):
        return None
    call = payload.get("parent_tool_call_id") if isinstance(payload, dict) else None
    return call if isinstance(call, str) else None
