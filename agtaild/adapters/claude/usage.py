"""Claude Code token usage: counted once per API response, the way ccusage counts it.

One API response is written over several ``assistant`` lines (one content block per line)
that repeat ``message.id``, ``requestId`` and ``usage``; ``output_tokens`` is a placeholder on
all but the last (FORMATS.md §0.2). ccusage (the reference for totals) keeps one entry per
(``message.id``, ``requestId``): the non-sidechain copy when a sidechain replays a message, else
the one with the larger token total. A sidechain copy of a message matches it even under
another ``requestId`` (``/btw`` side questions replay parent messages with new request ids).

``UsageRecord.key`` is ``"<message.id>:<requestId>"``: globally meaningful, so the index can
also drop the copies that old ``--resume`` builds replayed into a new file. A line without a
``message.id`` is never merged with another (as in ccusage): its key is its own ``uuid``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.claude.frames import FramedMap, Frames
from agtaild.model import Usage, UsageRecord

#: Bits of the flags slot in a remembered entry.
SIDECHAIN = 1
HAS_SPEED = 2

_SEMVER_PREFIX = re.compile(r"\d+\.\d+\.\d+")


#: Larger "counts" are not token counts (and would not fit the state's msgpack encoding).
_MAX_COUNT = 2**53


def _count(value: Any) -> int:
    return value if type(value) is int and 0 < value < _MAX_COUNT else 0


def normalize(raw: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """Anthropic usage → (input, output, cache read, cache write); None when counts are missing.

    Cache writes follow ccusage: the ``cache_creation`` breakdown (5-minute + 1-hour writes)
    when present, else ``cache_creation_input_tokens``.
    """
    get = raw.get
    inp = get("input_tokens")
    out = get("output_tokens")
    if type(inp) is not int or type(out) is not int:
        return None
    breakdown = get("cache_creation")
    if type(breakdown) is dict:
        cache_write = _count(breakdown.get("ephemeral_5m_input_tokens")) + _count(
            breakdown.get("ephemeral_1h_input_tokens")
        )
    else:
        cache_write = _count(get("cache_creation_input_tokens"))
    return _count(inp), _count(out), _count(get("cache_read_input_tokens")), cache_write


#: Versions already checked against ccusage's semver rule (a session has one or a few).
_version_ok: dict[str, bool] = {}


def _semver(version: Any) -> bool:
    known = _version_ok.get(version) if type(version) is str else False
    if known is None:
        known = _version_ok[version] = bool(_SEMVER_PREFIX.match(version))
        if len(_version_ok) > 4096:
            _version_ok.clear()
    return bool(known)


def countable(obj: dict[str, Any], message: dict[str, Any], raw: dict[str, Any]) -> bool:
    """ccusage's validity rules for a usage line.

    It drops a line whose ``cwd``, ``version``, ``sessionId``, ``requestId``,
    ``isApiErrorMessage``, ``costUSD``, ``message.id``, ``message.model``, ``usage.speed`` or
    ``usage.cache_*_input_tokens`` is JSON null, whose version is not semver-like, or whose ids
    or model are empty strings.
    """
    get = obj.get
    session_id = get("sessionId", 0)
    request_id = get("requestId", 0)
    version = get("version", 0)
    if (
        session_id is None or request_id is None or version is None or get("cwd", 0) is None
        or get("isApiErrorMessage", 0) is None or get("costUSD", 0) is None
    ):  # fmt: skip
        return False
    message_id = message.get("id", 0)
    model = message.get("model", 0)
    if message_id is None or model is None:
        return False
    if raw.get("speed", 0) is None or raw.get("cache_read_input_tokens", 0) is None:
        return False
    if raw.get("cache_creation_input_tokens", 0) is None:
        return False
    if version != 0 and not _semver(version):
        return False
    return not (session_id == "" or request_id == "" or message_id == "" or model == "")


#: Responses remembered per session: the newest SPILL × FRAMES at least (agtaild.adapters.
#: claude_frames). The copies to de-duplicate sit next to each other (split lines) or close by
#: (sidechain replays); a key seen again after this many newer responses is re-emitted under
#: the same key, which the index upserts.
SPILL = 256
FRAMES = 16
MAX_REMEMBERED = SPILL * FRAMES


class UsageMemory(msgspec.Struct, array_like=True):
    """What the usage book keeps in the parser state."""

    #: The responses counted, by message id (or, for a line without one, by its own key):
    #: ``[[input, output, cache_read, cache_write, flags, request id], …]`` in the order they
    #: were counted. The request id is the key's part after ``"<message id>:"`` (``""`` when
    #: the line had none), None for a line without a message id. One map holds what was a
    #: key → counts map and a message id → first key map: each key held its message id again.
    responses: Frames = msgspec.field(default_factory=Frames)
    #: The session's running sum of the four counts.
    totals: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])


#: The slot of the request id in a remembered entry.
_RID = 5


class UsageBook:
    """The per-session memory of counted responses, one per read (see :class:`UsageMemory`)."""

    def __init__(self, memory: UsageMemory) -> None:
        self.responses = FramedMap(memory.responses, spill=SPILL, frames=FRAMES)
        self.totals = memory.totals
        #: (key, sidechain, raw usage) of the last line whose numbers are already remembered.
        self._last: tuple[str, bool, dict[str, Any]] | None = None

    def offer(self, obj: dict[str, Any], message: dict[str, Any], fallback: str, ts: str | None) -> UsageRecord | None:
        """Count this line's usage; returns the record to upsert, or None if nothing changed.

        Most lines repeat a response already counted with the same numbers, so the cheap
        comparison comes first and the validity rules run only for a line that would count.
        """
        raw = message.get("usage")
        if type(raw) is not dict:
            return None
        message_id = message.get("id")
        request_id = obj.get("requestId")
        rid: str | None
        if type(message_id) is str and message_id:
            rid = request_id if type(request_id) is str else ""
            key = f"{message_id}:{rid}"
            group_key = message_id
        else:
            key = group_key = f"line:{fallback}"
            message_id = rid = None
        sidechain = obj.get("isSidechain") is True
        last = self._last
        if last is not None and last[0] == key and last[1] == sidechain and last[2] == raw:
            return None  # the next line of the same response, same numbers: nothing changes
        counts = normalize(raw)
        if counts is None:
            return None
        flags = (SIDECHAIN if sidechain else 0) | (HAS_SPEED if raw.get("speed") is not None else 0)
        group: list[list[Any]] | None = self.responses.get(group_key)
        existing: list[Any] | None = None
        if group is not None:
            existing = next((e for e in group if e[_RID] == rid), None)
            if existing is None and message_id is not None:
                # The first response counted under this message id: a sidechain copy matches
                # it under any request id.
                first = next((e for e in group if e[_RID] is not None), None)
                if first is not None and (sidechain or first[4] & SIDECHAIN):
                    key, existing = f"{message_id}:{first[_RID]}", first
        if existing is not None and not _replaces(counts, flags, existing):
            self._last = (key, sidechain, raw)
            return None
        if ts is None or not countable(obj, message, raw):
            return None
        totals = self.totals
        for i in range(4):
            totals[i] += counts[i] - (existing[i] if existing is not None else 0)
        if existing is not None:
            existing[:5] = [*counts, flags]
        elif group is not None:
            group.append([*counts, flags, rid])
        else:
            group = [[*counts, flags, rid]]
        self.responses.set(group_key, group)
        self._last = (key, sidechain, raw)
        model = message.get("model")
        usage = Usage(
            input_tokens=counts[0],
            output_tokens=counts[1],
            cache_read_tokens=counts[2],
            cache_write_tokens=counts[3],
            total_tokens=sum(counts),
            cost_usd=None,
        )
        return UsageRecord(key=key, ts=ts, model=model if type(model) is str else None, usage=usage)

    def total(self) -> Usage:
        inp, out, cache_read, cache_write = self.totals
        return Usage(
            input_tokens=inp, output_tokens=out, cache_read_tokens=cache_read, cache_write_tokens=cache_write,
            cost_usd=None,
        ).fix_total()


def _replaces(counts: tuple[int, int, int, int], flags: int, existing: list[Any]) -> bool:
    """ccusage's rule: the non-sidechain copy wins, then the larger total, then one with speed."""
    candidate_side = flags & SIDECHAIN
    existing_side = existing[4] & SIDECHAIN
    if candidate_side != existing_side:
        return bool(existing_side)
    total = counts[0] + counts[1] + counts[2] + counts[3]
    existing_total = existing[0] + existing[1] + existing[2] + existing[3]
    if total != existing_total:
        return total > existing_total
    return bool(flags & HAS_SPEED) and not existing[4] & HAS_SPEED
