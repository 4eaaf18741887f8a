"""Secrets never leave in an answer: every text of an answer that carries transcript content is
masked with the scanner's rules (agtaild.secrets) on the way out of the query layer.

Masking here, on the text being sent, covers every front end at once (the CLI in-process and
through the daemon, REST, JSON-RPC, SSE, MCP, the viewer, exports) and a session whose scan has
not run yet alike. A secret becomes ``«secret:RULE …WXYZ»``: the text stays readable and the
JSON valid. Answers of numbers only (stats, agents) pass as they are.

Cheap, because most answers are read again and again (a viewer's page, a follow, an agent's
repeated search) and almost none holds a secret:

* An answer is a tree of *items* (the answer itself, each event, session, hit, project, a
  hit's session). An item's scalar fields that are ids, timestamps or enums by construction
  (:data:`PLAIN`) are not scanned; every other field is, with its name as context.
* The whole answer is encoded once (msgspec, in C) and digested: the same answer again (a page
  read again) costs that and one lookup.
* Each item's scanned fields are encoded once (msgspec, in C) and digested: a verdict cache
  maps the digest to "clean" or to the masked fields, so an item seen before costs one encode
  and one lookup. The verdict holds for the same bytes under the same rules only (one cache
  per scanner), so it never hides a secret.
* The fields of every item not in the cache are scanned in one batch (one keyword-set pass
  over all of them before any rule runs, agtaild.secrets.scanner), and only the items that
  hold a secret are rebuilt: a clean item is sent as the very object the query made.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import msgspec

#: Methods whose answers hold text from transcripts (titles, prompts, tool input and output,
#: snippets, paths).
TEXT_METHODS = frozenset(
    {"sessions.list", "sessions.get", "events.list", "search", "projects.list", "resume.command", "secrets.list"}
)

#: Item fields whose scalar values are ids, timestamps, enums or flags by construction: never
#: transcript text. A field of this name holding a list or dict is scanned all the same.
PLAIN = frozenset(
    {
        "seq", "kind", "ts", "role", "uuid", "parent_uuid", "tool_use_id", "subtype", "is_error",
        "sidechain", "agent", "id", "short_id", "started", "ended", "mtime", "messages",
        "programmatic", "imported", "archived", "bad_lines", "truncated", "compactions",
        "resumable", "session_id", "event_seq", "first_seen", "last_seen", "rule", "fingerprint",
        "confidence", "last_active", "cwd_exists", "rank", "score",
    }
)  # fmt: skip
#: Fields whose list of dicts, or dict, are items of their own (own cache entries, own PLAIN).
ITEM_LISTS = frozenset({"events", "sessions", "hits", "projects", "secrets", "places"})
ITEM_DICTS = frozenset({"session", "event"})
ITEM_KEYS = ITEM_LISTS | ITEM_DICTS
_SCALARS = frozenset({bool, int, float})

#: Verdicts kept per scanner (oldest dropped first); ~100 bytes each when clean.
MAX_VERDICTS = 200_000
_CLEAN = b""


class AnswerMasker:
    """Masks answers with one scanner's rules, remembering which items were clean."""

    def __init__(self, scanner: Any, max_verdicts: int = MAX_VERDICTS) -> None:
        self.scanner = scanner
        self.max_verdicts = max_verdicts
        self._verdicts: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def mask(self, answer: dict[str, Any]) -> dict[str, Any]:
        from agtaild.secrets import jsonwalk

        whole = _digest(answer)
        if whole is not None:
            verdict = self._verdicts.get(whole)
            if verdict is not None:
                return msgspec.json.decode(verdict) if verdict else answer
        pending: list[tuple[_Item, bytes | None, dict[str, Any], int, int]] = []
        texts: list[str] = []
        root = self._collect(answer, pending, texts, jsonwalk)
        if pending:
            results = self.scanner.results(texts)
            for item, digest, scanned, lo, hi in pending:
                if not any(r.spans or r.scanned is not None for r in results[lo:hi]):
                    if digest is not None:
                        self._remember(digest, _CLEAN)
                    continue
                # A secret in this item (rare): now its plan, to rebuild it masked.
                planned: list[str] = []
                plans = [(k, jsonwalk.plan_value(v, planned, k)) for k, v in scanned.items()]
                scans = self.scanner.results(planned)
                masked = {k: jsonwalk.masked_value(plan, scans, self.scanner) for k, plan in plans}
                item.masked = masked
                if digest is not None:
                    try:
                        self._remember(digest, msgspec.json.encode(masked))
                    except (TypeError, ValueError, OverflowError):
                        pass
        out: dict[str, Any] = root.build()
        if whole is not None:
            try:
                self._remember(whole, _CLEAN if out is answer else msgspec.json.encode(out))
            except (TypeError, ValueError, OverflowError):
                pass
        return out

    # -- the tree of items ------------------------------------------------------------------

    def _collect(self, value: dict[str, Any], pending: list[Any], texts: list[str], jsonwalk: Any) -> _Item:
        item = _Item(value)
        scanned = {
            k: v
            for k, v in value.items()
            if v is not None and v.__class__ not in _SCALARS and not (k in PLAIN and v.__class__ is str)
        }
        for k in ITEM_KEYS.intersection(scanned):
            v = scanned[k]
            if k in ITEM_DICTS and isinstance(v, dict):
                item.dicts[k] = self._collect(v, pending, texts, jsonwalk)
                del scanned[k]
            elif k in ITEM_LISTS and isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                item.lists[k] = [self._collect(x, pending, texts, jsonwalk) for x in v]
                del scanned[k]
        if not scanned:
            return item
        digest = _digest(scanned)
        if digest is not None:
            verdict = self._verdicts.get(digest)
            if verdict is not None:
                if verdict:
                    item.masked = msgspec.json.decode(verdict)
                return item
        lo = len(texts)
        for k, v in scanned.items():
            jsonwalk.texts_of(v, texts, k)
        pending.append((item, digest, scanned, lo, len(texts)))
        return item

    def _remember(self, digest: bytes, verdict: bytes) -> None:
        with self._lock:
            verdicts = self._verdicts
            verdicts[digest] = verdict
            while len(verdicts) > self.max_verdicts:
                del verdicts[next(iter(verdicts))]


def _digest(value: Any) -> bytes | None:
    """What a verdict is kept under: a digest of the value's JSON bytes (None: not JSON, so
    scanned every time)."""
    try:
        return hashlib.sha256(msgspec.json.encode(value)).digest()  # sha256: the fastest here (CPU SHA extensions)
    except (TypeError, ValueError, OverflowError):
        return None


class _Item:
    __slots__ = ("dicts", "lists", "masked", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self.masked: dict[str, Any] | None = None
        self.lists: dict[str, list[_Item]] = {}
        self.dicts: dict[str, _Item] = {}

    def build(self) -> dict[str, Any]:
        """The item with its masked fields and masked sub-items; the very same dict when
        nothing in it changed."""
        if not self.lists and not self.dicts:
            if self.masked is None:
                return self.value
            return {**self.value, **self.masked}
        changed: dict[str, Any] = {}
        for k, items in self.lists.items():
            built = [x.build() for x in items]
            if any(a is not b for a, b in zip(built, self.value[k], strict=True)):
                changed[k] = built
        for k, sub in self.dicts.items():
            one = sub.build()
            if one is not self.value[k]:
                changed[k] = one
        if self.masked is None and not changed:
            return self.value
        return {**self.value, **(self.masked or {}), **changed}


_maskers: dict[int, AnswerMasker] = {}
_maskers_lock = threading.Lock()


def masker_for(scanner: Any) -> AnswerMasker:
    with _maskers_lock:
        masker = _maskers.get(id(scanner))
        if masker is None or masker.scanner is not scanner:
            masker = _maskers[id(scanner)] = AnswerMasker(scanner)
        return masker


def mask_answer(method: str, answer: dict[str, Any], scanner: Any = None) -> dict[str, Any]:
    if method not in TEXT_METHODS:
        return answer
    if scanner is None:
        from agtaild.secrets import default_scanner

        scanner = default_scanner()
    return masker_for(scanner).mask(answer)
