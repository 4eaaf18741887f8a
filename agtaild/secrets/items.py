"""What of an answer's item is scanned, and what a verdict about it is kept under.

An *item* is a dict of an answer (the answer itself, an event, a session, a hit, a project, a
finding). Its scalar fields that are ids, timestamps, enums or flags by construction
(:data:`PLAIN`) are never transcript text and are not scanned; numbers, booleans and nulls
neither; every other field is, with its name as context. Fields that hold items of their own
(:data:`ITEM_LISTS`, :data:`ITEM_DICTS`) are split off and treated as items.

The index (agtaild.index.findings) and the exits (agtaild.query.masking) both go through
:func:`fields_to_scan` and :func:`digest`, so a verdict the index recorded for an event is a
verdict about the very bytes an exit is about to send.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

import agtaild
from agtaild.secrets.scanner import Scanner

#: Item fields whose scalar values are ids, timestamps, enums or flags by construction: never
#: transcript text. A field of this name holding a list or dict is scanned all the same.
PLAIN = frozenset(
    {
        "seq", "kind", "ts", "role", "uuid", "parent_uuid", "tool_use_id", "subtype", "is_error",
        "sidechain", "agent", "id", "short_id", "started", "ended", "mtime", "messages",
        "programmatic", "imported", "archived", "bad_lines", "truncated", "compactions",
        "resumable", "session_id", "event_seq", "first_seen", "last_seen", "rule", "fingerprint",
        "confidence", "last_active", "cwd_exists", "rank", "score", "allowlisted",
    }
)  # fmt: skip
#: Fields whose list of dicts, or dict, are items of their own.
ITEM_LISTS = frozenset({"events", "sessions", "hits", "projects", "secrets", "places"})
ITEM_DICTS = frozenset({"session", "event"})
ITEM_KEYS = ITEM_LISTS | ITEM_DICTS
_SCALARS = frozenset({bool, int, float})
#: Bump when what is scanned of an item, or how, changes: verdicts of another format are void.
FORMAT = 1


def fields_to_scan(value: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the fields of ``value`` to scan, the names of its fields that are items of their own)."""
    scanned = {
        k: v
        for k, v in value.items()
        if v is not None and v.__class__ not in _SCALARS and not (k in PLAIN and v.__class__ is str)
    }
    subs: list[str] = []
    for k in ITEM_KEYS.intersection(scanned):
        v = scanned[k]
        if (k in ITEM_DICTS and isinstance(v, dict)) or (
            k in ITEM_LISTS and isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
        ):
            subs.append(k)
            del scanned[k]
    return scanned, subs


def digest(value: Any) -> bytes | None:
    """What a verdict is kept under: 16 bytes of the sha256 of the value's JSON (None: not
    JSON, so scanned every time). sha256: the fastest digest here (CPU SHA extensions)."""
    try:
        return hashlib.sha256(msgspec.json.encode(value)).digest()[:16]
    except (TypeError, ValueError, OverflowError):
        return None


_identities: dict[int, tuple[Scanner, str]] = {}


def rules_identity(scanner: Scanner) -> str:
    """A name for what the scanner finds: its rules, their allowlists, agtail's version and
    :data:`FORMAT`. A verdict recorded under another identity is not trusted."""
    known = _identities.get(id(scanner))
    if known is not None and known[0] is scanner:
        return known[1]
    name = _identity(scanner)
    _identities[id(scanner)] = (scanner, name)
    return name


def _identity(scanner: Scanner) -> str:
    h = hashlib.sha256(f"agtail {agtaild.__version__} items {FORMAT}\n".encode())

    def allow(a: Any) -> str:
        return repr((a.target, [getattr(rx, "pattern", str(rx)) for rx in a.regexes], a.stopwords, a.condition, a.has_paths))

    for rule in scanner.rules:
        h.update(
            repr(
                (rule.id, rule.pattern, rule.keywords, rule.entropy, rule.require_digit, rule.secret_group,
                 rule.confidence, rule.priority, [allow(a) for a in rule.allowlists])
            ).encode()
        )  # fmt: skip
    for a in scanner.global_allowlists:
        h.update(allow(a).encode())
    return h.hexdigest()[:32]
