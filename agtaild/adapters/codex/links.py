"""Things outside one rollout that the Codex reader needs: files, names and parent threads.

* Which files under a sessions root are rollouts (``.jsonl``, cold ``.jsonl.zst``, the old
  TypeScript CLI's ``rollout-*.json``), and the ``archived_sessions/`` folder beside it.
* Thread names from ``session_index.jsonl`` (append-only, the newest entry wins).
* A parent thread's rollout, to find (a) the spawn call that created a sub-agent and (b) the
  parent's running token total at fork time — the exact end of a fork's copied usage.

Everything is cached on the adapter (by file size and mtime), so a home with many sub-agents
costs one directory walk and one read per parent file, not one per child.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.codex.text import as_dict, as_str, epoch_of, thread_id_from_filename
from agtaild.adapters.codex.usage import token_count_rows, usage_record_rows
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.files import open_regular, read_regular

ARCHIVED_DIR = "archived_sessions"
SESSION_INDEX = "session_index.jsonl"
ROLLOUT_SUFFIXES = (".jsonl", ".jsonl.zst")
#: How often a missing parent may trigger a new walk of the sessions root.
REINDEX_SECONDS = 10.0
#: Below this many files, a parent whose file name lacks its id is looked up by first line.
FIRST_LINE_SCAN_LIMIT = 500

_decoder = msgspec.json.Decoder()


def is_rollout_name(name: str) -> bool:
    if name.endswith(ROLLOUT_SUFFIXES):
        return True
    return name.startswith("rollout-") and name.endswith(".json")


def iter_rollouts(directory: Path, *, skip_archived: bool = False) -> Iterator[Path]:
    """Rollout files below ``directory`` (any depth), sorted; hidden entries are ignored."""
    return map(Path, rollout_files(str(directory), skip_archived=skip_archived))


def rollout_files(directory: str, *, skip_archived: bool = False) -> Iterator[str]:
    """:func:`iter_rollouts` as plain path strings (discovery's walk, before every update)."""
    for entry in scan.entries(directory):
        name = entry.name
        if name.startswith("."):
            continue
        if scan.is_dir(entry, follow_symlinks=False):
            if skip_archived and name == ARCHIVED_DIR:
                continue
            yield from rollout_files(entry.path)
        elif is_rollout_name(name) and scan.is_file(entry):
            yield entry.path


def archived_dirs(root: Path) -> list[Path]:
    """``archived_sessions`` beside the sessions root, or inside it (an import/archive mirror)."""
    return [d for d in (root.parent / ARCHIVED_DIR, root / ARCHIVED_DIR) if d.is_dir() and d != root]


def read_rollout_bytes(path: Path) -> bytes:
    data = read_regular(path)
    if path.name.endswith(".zst"):
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            return reader.read()
    return data


def first_record(path: Path, limit: int = 1 << 20) -> Any:
    """The first line of a rollout, decoded (None when unreadable)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(limit)
        return _decoder.decode(head.split(b"\n", 1)[0])
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None


def _line_around(data: bytes, pos: int) -> bytes:
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    return data[start : end if end >= 0 else len(data)]


def _decode(raw: bytes) -> dict[str, Any]:
    try:
        return as_dict(_decoder.decode(raw))
    except (msgspec.DecodeError, UnicodeDecodeError):
        return {}


def spawn_call_in(data: bytes, child_id: str) -> str | None:
    """The call_id of the parent's tool call that spawned ``child_id``.

    0.17x: the `item_completed` CollabAgentToolCall (its id is the call id) names the child in
    ``receiver_thread_ids``; older builds: `collab_tool_call.new_thread_id`, or the spawn
    call's output text mentioning the child's id.
    """
    needle = child_id.encode()
    pos = data.find(needle)
    while pos >= 0:
        record = _decode(_line_around(data, pos))
        payload = as_dict(record.get("payload"))
        item = as_dict(payload.get("item"))
        if item.get("type") == "CollabAgentToolCall" and child_id in (item.get("receiver_thread_ids") or []):
            return as_str(item.get("id"))
        if payload.get("type") == "collab_tool_call" and payload.get("new_thread_id") == child_id:
            return as_str(payload.get("call_id"))
        if payload.get("type") == "function_call_output" and as_str(payload.get("call_id")):
            return as_str(payload.get("call_id"))
        pos = data.find(needle, pos + len(needle))
    return None


def total_at(data: bytes, until_ts: str | None) -> int | None:
    """The parent's running total_tokens at ``until_ts`` (its last usage row not after it)."""
    limit = epoch_of(until_ts)
    found: int | None = None
    for raw in data.split(b"\n"):
        if b"token_count" not in raw and b"token_usage_record" not in raw:
            continue
        record = _decode(raw)
        payload = as_dict(record.get("payload"))
        if record.get("type") == "token_usage_record":
            total = usage_record_rows(payload)[0]
        elif payload.get("type") == "token_count":
            total = token_count_rows(payload)[0]
        else:
            continue
        when = epoch_of(as_str(record.get("timestamp")))
        if total is None or (limit is not None and when is not None and when > limit):
            continue
        found = total[-1]
    return found


class RolloutLinks:
    """Cached lookups across the rollouts of one adapter instance (see the module docstring)."""

    def __init__(self) -> None:
        self._ids: dict[str, tuple[float, dict[str, Path]]] = {}
        self._names: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}
        self._bytes: tuple[tuple[str, int, int], bytes] | None = None

    def rollout_of(self, root: str, thread_id: str) -> Path | None:
        cached = self._ids.get(root)
        if cached is not None and thread_id in cached[1]:
            return cached[1][thread_id]
        if cached is not None and time.monotonic() - cached[0] < REINDEX_SECONDS:
            return self._by_first_line(root, thread_id)
        base = Path(root)
        index: dict[str, Path] = {}
        for directory in [base, *archived_dirs(base)]:
            for path in iter_rollouts(directory):
                index.setdefault(thread_id_from_filename(str(path)), path)
        self._ids[root] = (time.monotonic(), index)
        return index.get(thread_id) or self._by_first_line(root, thread_id)

    def _by_first_line(self, root: str, thread_id: str) -> Path | None:
        paths = list(self._ids.get(root, (0.0, {}))[1].values())
        if len(paths) > FIRST_LINE_SCAN_LIMIT:
            return None
        for path in paths:
            if path.name.endswith(".zst"):
                continue
            record = as_dict(first_record(path))
            if as_dict(record.get("payload")).get("id") == thread_id:
                self._ids[root][1][thread_id] = path
                return path
        return None

    def content(self, path: Path) -> bytes:
        """A rollout's bytes (decompressed), cached for the most recent file."""
        try:
            st = path.stat()
        except OSError:
            return b""
        key = (str(path), st.st_size, st.st_mtime_ns)
        if self._bytes is not None and self._bytes[0] == key:
            return self._bytes[1]
        try:
            data = read_rollout_bytes(path)
        except (OSError, Exception):  # a corrupt .zst must not stop the child's read
            data = b""
        self._bytes = (key, data)
        return data

    def thread_names(self, root: str) -> dict[str, str]:
        """``session_index.jsonl`` beside the sessions root: thread id → newest thread name."""
        path = Path(root).parent / SESSION_INDEX
        try:
            st = path.stat()
        except OSError:
            return {}
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._names.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        names: dict[str, str] = {}
        try:
            data = read_regular(path)
        except OSError:
            data = b""
        for raw in data.split(b"\n"):
            entry = _decode(raw) if raw.strip() else {}
            thread, name = as_str(entry.get("id")), as_str(entry.get("thread_name"))
            if thread and name:
                names[thread] = name
        self._names[str(path)] = (stamp, names)
        return names
