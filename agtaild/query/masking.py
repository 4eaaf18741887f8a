"""Secrets never leave in an answer: every text of an answer that carries transcript content is
masked with the scanner's rules (agtaild.secrets) on the way out of the query layer.

Masking here, on the text being sent, covers every front end at once (the CLI in-process and
through the daemon, REST, JSON-RPC, SSE, MCP, the viewer, exports) and a session whose scan has
not run yet alike. A secret becomes ``«secret:RULE …WXYZ»``: the text stays readable and the
JSON valid. Every method's answer goes through it but ``stats`` (counts: see
``UNMASKED_METHODS``), so no new method can be forgotten.

Cheap, because most answers are read again and again (a viewer's page, a follow, an agent's
repeated search) and almost none holds a secret:

* An answer is a tree of *items* (the answer itself, each event, session, hit, project, a
  hit's session). An item's scalar fields that are ids, timestamps or enums by construction
  (agtaild.secrets.items.PLAIN) are not scanned; every other field is, with its name as
  context.
* The whole answer is encoded once (msgspec, in C) and digested: the same answer again (a page
  read again) costs that and one lookup.
* Each item's scanned fields are encoded once (msgspec, in C) and digested: a verdict cache
  maps the digest to "clean" or to the masked fields, so an item seen before costs one encode
  and one lookup. The verdict holds for the same bytes under the same rules only (one cache
  per scanner), so it never hides a secret.
* An item not in that cache may be in the index's: the index pipeline scans every event as it
  is stored and records the digests of the clean ones (agtaild.index.findings); the service
  asks for all of an answer's unknown digests in one query, so a page read first costs about
  as little as a page read again.
* The fields of every item in neither are scanned in one batch (one keyword-set pass
  over all of them before any rule runs, agtaild.secrets.scanner), and only the items that
  hold a secret are rebuilt: a clean item is sent as the very object the query made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import msgspec

from agtaild.secrets.items import PLAIN, digest, fields_to_scan

#: Every method's answer is masked but these, so that a method added later can never leave
#: unmasked because a list forgot it. ``stats`` answers counts keyed by day, hour, model,
#: agent, tool or project, and a model's name under the field ``key``
#: (``claude-haiku-4-5-20251001``) is what the generic API-key rule looks for.
UNMASKED_METHODS = frozenset({"stats"})

__all__ = ["PLAIN", "UNMASKED_METHODS", "AnswerMasker", "mask_answer", "masker_for"]

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

    def mask(
        self, answer: dict[str, Any], known_clean: Callable[[list[bytes]], set[bytes]] | None = None
    ) -> dict[str, Any]:
        """``answer`` with every secret masked; ``known_clean``: which of these item digests
        the index recorded as scanned clean under this scanner's rules."""
        from agtaild.secrets import jsonwalk

        whole = digest(answer)
        if whole is not None:
            verdict = self._verdicts.get(whole)
            if verdict is not None:
                return msgspec.json.decode(verdict) if verdict else answer
        unknown: list[tuple[_Item, bytes | None, dict[str, Any]]] = []
        root = self._collect(answer, unknown)
        if unknown and known_clean is not None:  # verdicts the index recorded (agtaild.index.findings)
            keys = [k for _, k, _ in unknown if k is not None]
            clean = known_clean(keys) if keys else set()
            if clean:
                for known in clean:
                    self._remember(known, _CLEAN)
                unknown = [u for u in unknown if u[1] not in clean]
        pending: list[tuple[_Item, bytes | None, dict[str, Any], int, int]] = []
        texts: list[str] = []
        for item, key, scanned in unknown:
            lo = len(texts)
            for name, v in scanned.items():
                jsonwalk.texts_of(v, texts, name)
            pending.append((item, key, scanned, lo, len(texts)))
        if pending:
            results = self.scanner.results(texts)
            for item, key, scanned, lo, hi in pending:
                if not any(r.spans or r.scanned is not None for r in results[lo:hi]):
                    if key is not None:
                        self._remember(key, _CLEAN)
                    continue
                # A secret in this item (rare): now its plan, to rebuild it masked.
                planned: list[str] = []
                plans = [(k, jsonwalk.plan_value(v, planned, k)) for k, v in scanned.items()]
                scans = self.scanner.results(planned)
                masked = {k: jsonwalk.masked_value(plan, scans, self.scanner) for k, plan in plans}
                item.masked = masked
                if key is not None:
                    try:
                        self._remember(key, msgspec.json.encode(masked))
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

    def _collect(self, value: dict[str, Any], unknown: list[Any]) -> _Item:
        item = _Item(value)
        scanned, subs = fields_to_scan(value)
        for k in subs:
            v = value[k]
            if isinstance(v, dict):
                item.dicts[k] = self._collect(v, unknown)
            else:
                item.lists[k] = [self._collect(x, unknown) for x in v]
        if not scanned:
            return item
        key = digest(scanned)
        if key is not None:
            verdict = self._verdicts.get(key)
            if verdict is not None:
                if verdict:
                    item.masked = msgspec.json.decode(verdict)
                return item
        unknown.append((item, key, scanned))
        return item

    def _remember(self, digest: bytes, verdict: bytes) -> None:
        with self._lock:
            verdicts = self._verdicts
            verdicts[digest] = verdict
            while len(verdicts) > self.max_verdicts:
                del verdicts[next(iter(verdicts))]


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


def mask_answer(
    method: str,
    answer: dict[str, Any],
    scanner: Any = None,
    known_clean: Callable[[Any, list[bytes]], set[bytes]] | None = None,
) -> dict[str, Any]:
    """``known_clean(scanner, digests)``: the digests the index recorded as clean under that
    scanner's rules (agtaild.index.findings.known_clean)."""
    if method in UNMASKED_METHODS:
        return answer
    if scanner is None:
        from agtaild.secrets import default_scanner

        scanner = default_scanner()
    lookup = None if known_clean is None else (lambda keys: known_clean(scanner, keys))
    return masker_for(scanner).mask(answer, lookup)
