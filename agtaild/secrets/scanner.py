"""Finding secrets in texts: fast on ordinary text, linear and bounded on hostile text.

A straightforward scan runs the ~230 rules over every text, each whose keyword the text holds
(gitleaks' method): the issue measured ≈ 9.5 MB of text per CPU-second, and far less on small
texts, where Python's cost per call dominates (bench/bench_secrets.py measures both). So the
scanner works on batches:

1. Consecutive texts are joined (``\\n`` between them) into a batch of about
   :data:`BATCH_BYTES` characters.
2. One pass of an RE2 set of every rule's keywords (literal, any case) says which keywords
   occur in the batch; only the rules of those keywords are candidates. A canary at the end
   of the batch proves the pass reached the end (RE2's set gives up silently when its
   automaton runs out of memory); without it, every rule is a candidate.
3. Each candidate runs once over the whole batch, in its superset form (patterns.py): every
   text a match touches is marked for that rule.
4. Each marked text is scanned alone with the exact rule (keywords, groups, entropy,
   allowlists, as gitleaks defines them), so a finding never depends on its neighbours —
   from where the superset's first match in it starts (less the rule's *lead*): no match of
   the rule can start before that.

Texts longer than :data:`CHUNK_CHARS` are scanned in overlapping pieces (bounded memory).
Budget: after :data:`MAX_MATCHES` matches of one rule in one piece the scan of that text stops
there, and :attr:`TextScan.scanned` says how far it is complete (masking withholds the rest).

Two rules may find the same secret (``GITHUB_TOKEN=ghp_…``: github-pat and
secret-assignment). Overlapping findings are one secret: the rule with the highest priority
names it, and masking covers all of them.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import msgspec
import re2

from agtaild.secrets import patterns, textbytes
from agtaild.secrets.rules import Allowlist, Rule, RuleSet

BATCH_BYTES = 32 << 10
CHUNK_CHARS = 1 << 20
CHUNK_OVERLAP = 16 << 10
#: Superset matches of one rule in one batch after which every later text of the batch is
#: simply marked for the exact scan (a pattern matching everywhere costs Python per match).
MAX_BATCH_HITS = 256
#: Matches of one rule examined in one text (or piece) before that text's scan stops.
MAX_MATCHES = 10_000

SEP = b"\n"
CANARY = b"\x00agtail-secrets-canary\x00"
#: agtail's own mask: never a secret (masking masked text changes nothing).
MASK_OPEN = "«secret:"


class Finding(msgspec.Struct, frozen=True):
    """One secret in one text. ``start``/``end`` are character offsets in that text;
    ``fingerprint`` is the sha256 (hex) of the secret, never the secret; ``tail`` its last
    characters (at most 4, and at most a quarter of it), for a masked display."""

    rule: str
    start: int
    end: int
    fingerprint: str
    confidence: str
    tail: str = ""
    field: str = ""


class Span(msgspec.Struct, frozen=True):
    """What masking replaces: overlapping findings merged, named by the best rule."""

    start: int
    end: int
    rule: str
    tail: str


class TextScan(NamedTuple):
    findings: tuple[Finding, ...] = ()
    spans: tuple[Span, ...] = ()
    #: ``None`` when the whole text was examined; else how many characters were (the
    #: budget stopped the scan there: masking withholds the rest).
    scanned: int | None = None


CLEAN = TextScan()


class _Hit(msgspec.Struct, frozen=True):
    rule: int
    start: int
    end: int
    secret: str


def fingerprint(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def tail_of(secret: str) -> str:
    """The last characters a mask may show: ≤ 4, ≤ a quarter of the secret, no spaces, and
    not a run of one punctuation mark (``-----`` of a PEM END line says nothing)."""
    keep = min(4, len(secret) // 4)
    tail = secret[-keep:] if keep else ""
    if any(c.isspace() for c in tail) or (tail and len(set(tail)) == 1 and not tail[0].isalnum()):
        return ""
    return tail


class Scanner:
    """The rules of a :class:`RuleSet`, ready to run. Build one and reuse it (compiling the
    keyword set costs milliseconds); it holds no per-scan state and is thread-safe."""

    def __init__(
        self, ruleset: RuleSet, *, include_low: bool = True, disabled: Sequence[str] = ()
    ) -> None:
        off = set(disabled)
        self.rules: tuple[Rule, ...] = tuple(
            r
            for r in ruleset.rules
            if r.enabled and r.id not in off and (include_low or r.confidence == "high")
        )
        self.global_allowlists: tuple[Allowlist, ...] = ruleset.allowlists
        self._order = {i: (r.priority, r.confidence == "high") for i, r in enumerate(self.rules)}
        keywords: dict[bytes, list[int]] = {}
        always: list[int] = []
        for index, rule in enumerate(self.rules):
            if not rule.keywords:
                always.append(index)
            for kw in rule.keywords:
                keywords.setdefault(kw, []).append(index)
        self._always = tuple(always)
        self._set = re2.Set.SearchSet(
            patterns.options(patterns.KEYWORD_SET_MAX_MEM, literal=True, case_sensitive=False)
        )
        self._by_keyword: list[tuple[int, ...]] = []
        for kw, indexes in keywords.items():
            self._set.Add(kw)
            self._by_keyword.append(tuple(indexes))
        self._canary = self._set.Add(CANARY)  # the last index: every keyword's is below it
        self._set.Compile()

    # -- public -----------------------------------------------------------------------

    def scan(self, text: str, field: str = "") -> list[Finding]:
        findings = self.results([text])[0].findings
        return [msgspec.structs.replace(f, field=field) for f in findings] if field else list(findings)

    def scan_many(self, texts: Sequence[str]) -> list[tuple[Finding, ...]]:
        """The findings of each text (a tuple: most are the same empty one)."""
        return [r.findings for r in self.results(texts)]

    def results(self, texts: Sequence[str]) -> list[TextScan]:
        """Findings, masking spans and completeness of each text, in order."""
        hits, short = self._hits(texts)
        out = [CLEAN] * len(texts)
        for i in hits.keys() | short.keys():
            out[i] = self._resolve(hits.get(i, []), short.get(i))
        return out

    # -- the batch: which texts may hold a match of which rule --------------------------

    def _hits(self, texts: Sequence[str]) -> tuple[dict[int, list[_Hit]], dict[int, int]]:
        """Every rule's matches per text (by index), and the texts whose scan stopped early
        (index → characters examined). A batch is a run of consecutive texts."""
        hits: dict[int, list[_Hit]] = {}
        short: dict[int, int] = {}
        lengths = list(map(len, texts))
        ends = list(itertools.accumulate(lengths))  # ends[i]: characters of texts[:i + 1]
        long = [i for i, n in enumerate(lengths) if n > CHUNK_CHARS] if lengths and max(lengths) > CHUNK_CHARS else []
        long.append(len(texts))
        i = 0
        for stop in long:
            while i < stop:  # texts[i:stop] are short: batches of about BATCH_BYTES characters
                j = bisect.bisect_right(ends, (ends[i - 1] if i else 0) + BATCH_BYTES, i + 1, stop)
                j = max(j, i + 1)
                self._scan_batch(texts[i:j], i, None, hits, short)
                i = j
            if stop < len(texts):
                for offset, piece in textbytes.pieces(texts[stop], CHUNK_CHARS, CHUNK_OVERLAP):
                    self._scan_batch([piece], stop, offset, hits, short)
                    if stop in short:  # the budget ran out: the rest is withheld, not scanned
                        break
                i = stop + 1
        return hits, short

    def _scan_batch(
        self,
        pieces: Sequence[str],
        first: int,
        offset: int | None,
        hits: dict[int, list[_Hit]],
        short: dict[int, int],
    ) -> None:
        """Scan ``pieces``: the texts ``first``, ``first + 1`` …, or (``offset`` given) one
        piece of text ``first`` that starts at that character."""
        try:
            encoded = list(map(str.encode, pieces))
        except UnicodeEncodeError:
            encoded = list(map(textbytes.encode, pieces))
        buf = SEP.join(encoded)
        found = self._set.Match(buf + SEP + CANARY) or []
        if self._canary in found:
            candidates = set(self._always)
            for k in found:
                if k != self._canary:
                    candidates.update(self._by_keyword[k])
        else:  # the keyword automaton gave up: every rule runs
            candidates = set(range(len(self.rules)))
        if not candidates:
            return
        # Piece u starts at byte cum[u] + u of buf (u separators before it).
        cum = list(itertools.accumulate(map(len, encoded), initial=0))
        marked: dict[int, dict[int, int]] = {}  # piece → rule → byte where its first superset match starts
        for r in candidates:
            self._mark(self.rules[r].superset, buf, cum, r, marked)
        for u in sorted(marked):
            where = (first, offset) if offset is not None else (first + u, 0)
            self._scan_unit(sorted(marked[u].items()), pieces[u], encoded[u], where, hits, short)

    @staticmethod
    def _mark(superset: Any, buf: bytes, cum: list[int], r: int, marked: dict[int, dict[int, int]]) -> None:
        match = superset._regexp.Match
        units = range(len(cum) - 1)

        def start(u: int) -> int:
            return cum[u] + u

        pos, count, end = 0, 0, len(buf)
        while pos < end:
            s, e = match(patterns.UNANCHORED, buf, pos, end)[0]
            if s < 0:
                return
            first = bisect.bisect_right(units, s, key=start) - 1
            last = bisect.bisect_right(units, max(s, e - 1), lo=first, key=start) - 1
            count += 1
            if count >= MAX_BATCH_HITS:  # a pattern matching everywhere: the rest is simply marked
                last = len(units) - 1
            marked.setdefault(first, {}).setdefault(r, s - start(first))
            for u in range(first + 1, last + 1):
                marked.setdefault(u, {}).setdefault(r, 0)
            if count >= MAX_BATCH_HITS:
                return
            pos = e if e > s else s + 1

    # -- one text: the exact rules -------------------------------------------------------

    def _scan_unit(
        self,
        rules: list[tuple[int, int]],
        text: str,
        b: bytes,
        where: tuple[int, int],
        hits: dict[int, list[_Hit]],
        short: dict[int, int],
    ) -> None:
        index, offset = where
        lower = b.lower()
        found: list[tuple[int, int, int, str]] = []  # (rule, byte start, byte end, secret)
        limit = len(b)
        for r, first in rules:
            rule = self.rules[r]
            if rule.keywords and not any(kw in lower for kw in rule.keywords):
                continue
            # No match of the rule starts before its superset's first match, less the lead.
            limit = min(limit, self._run_rule(r, rule, b, found, max(0, first - rule.lead)))
        if not found and limit == len(b):
            return
        to_char = textbytes.char_offsets(b, text, [x for f in found for x in f[1:3]] + [limit])
        out = hits.setdefault(index, [])
        for r, s, e, secret in found:
            out.append(_Hit(r, offset + to_char[s], offset + to_char[e], secret))
        if limit < len(b):
            reached = offset + to_char[limit]
            short[index] = min(short.get(index, reached), reached)

    def _run_rule(self, r: int, rule: Rule, b: bytes, found: list[tuple[int, int, int, str]], pos: int = 0) -> int:
        """Append the rule's findings in ``b`` from ``pos``; the byte offset up to which it looked."""
        match = rule.regex._regexp.Match
        group = rule.secret_group
        n, count = len(b), 0
        while pos <= n:
            spans = match(patterns.UNANCHORED, b, pos, n)
            ms, me = spans[0]
            if ms < 0:
                break
            count += 1
            if count > MAX_MATCHES:
                return ms
            if group:
                ss, se = spans[group]
            else:
                ss, se = next((sp for sp in spans[1:] if sp[0] >= 0 and sp[1] > sp[0]), spans[0])
            if ss >= 0 and se > ss:
                secret = b[ss:se].decode()
                if self._keep(rule, secret, b, ms, me):
                    found.append((r, ss, se, secret))
            if me > ms:
                pos = me
            else:  # an empty match: step over one whole character
                pos = ms + 1
                while pos < n and (b[pos] & 0xC0) == 0x80:
                    pos += 1
        return n

    def _keep(self, rule: Rule, secret: str, b: bytes, ms: int, me: int) -> bool:
        if MASK_OPEN in secret:
            return False
        if rule.entropy and patterns.shannon_entropy(secret) <= rule.entropy:
            return False
        if rule.require_digit and not any(c.isdigit() for c in secret):
            return False
        for allowlist in self.global_allowlists + rule.allowlists:
            if _allows(allowlist, secret, b, ms, me):
                return False
        return True

    # -- overlapping findings -------------------------------------------------------------

    def _rank(self, hit: _Hit) -> tuple[int, bool, int, int]:
        """Which of overlapping findings names the secret: priority, then confidence, then
        the longer secret, then the rule loaded first."""
        priority, high = self._order[hit.rule]
        return (priority, high, hit.end - hit.start, -hit.rule)

    def _resolve(self, hits: list[_Hit], scanned: int | None) -> TextScan:
        if not hits:
            return TextScan((), (), scanned)
        hits = sorted(set(hits), key=lambda h: (h.start, -h.end))
        findings: list[Finding] = []
        spans: list[Span] = []
        cluster = [hits[0]]
        end = hits[0].end
        for hit in [*hits[1:], None]:
            if hit is not None and hit.start < end:
                cluster.append(hit)
                end = max(end, hit.end)
                continue
            best = max(cluster, key=self._rank)
            rule = self.rules[best.rule]
            tail = tail_of(best.secret)
            if scanned is None or best.start < scanned:
                findings.append(
                    Finding(rule.id, best.start, best.end, fingerprint(best.secret), rule.confidence, tail)
                )
                spans.append(Span(cluster[0].start, end, rule.id, tail))
            if hit is not None:
                cluster, end = [hit], hit.end
        return TextScan(tuple(findings), tuple(spans), scanned)


def _allows(allowlist: Allowlist, secret: str, b: bytes, ms: int, me: int) -> bool:
    checks: list[bool] = []
    if allowlist.regexes:
        if allowlist.target == "match":
            target = b[ms:me]
        elif allowlist.target == "line":
            target = b[b.rfind(b"\n", 0, ms) + 1 : (b.find(b"\n", me) + 1 or len(b) + 1) - 1]
        else:
            target = secret.encode()
        if allowlist.either is not None:
            checks.append(allowlist.either._regexp.Match(patterns.UNANCHORED, target, 0, len(target))[0][0] >= 0)
        else:
            checks.append(any(rx.search(target) is not None for rx in allowlist.regexes))
    if allowlist.stopwords:
        low = secret.lower()
        checks.append(any(word in low for word in allowlist.stopwords))
    if allowlist.has_paths:
        checks.append(False)  # a text has no file path
    if not checks:
        return False
    return all(checks) if allowlist.condition == "AND" else any(checks)
