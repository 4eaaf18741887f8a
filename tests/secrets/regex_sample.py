"""Random strings that match a rule's pattern: a fake, format-valid secret for every rule.

gitleaks tests its rules the same way (a secret generated from the rule's regex). The pattern
is parsed with Python's own regex parser (RE2's syntax is close enough once ``\\z`` is
spelled ``\\Z`` and a mid-pattern ``(?i)`` is dropped), then walked: a random choice at every
alternation, class and repetition. The group that is the secret (the rule's ``secretGroup``,
else the first non-empty group, as gitleaks picks it) is tracked while generating.

A sample is kept only if it is a secret by the rule's own data — entropy, digit, allowlists
and stopwords, checked here (not by the scanner under test) — and the rule's pattern finds
it (RE2 directly).
"""

from __future__ import annotations

import math
import random
import re._parser as sre  # Python's regex parser: the pattern's structure
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

import re2

PRINTABLE = [c for c in string.ascii_letters + string.digits + "-_.+/=:@~"]
_WORD = string.ascii_letters + string.digits + "_"
_ALL = [chr(c) for c in range(33, 127)]


@dataclass(frozen=True)
class Sample:
    rule: str
    match: str
    secret_start: int
    secret_end: int

    @property
    def secret(self) -> str:
        return self.match[self.secret_start : self.secret_end]


_POSIX = {"[:alnum:]": "a-zA-Z0-9", "[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:upper:]": "A-Z", "[:lower:]": "a-z", "[:xdigit:]": "0-9a-fA-F"}


def python_form(pattern: str) -> str:
    """RE2 syntax → what Python's parser reads (for structure only)."""
    pattern = pattern.replace("\\z", "\\Z")
    for posix, ranges in _POSIX.items():
        pattern = pattern.replace(posix, ranges)
    head, rest = (pattern[:4], pattern[4:]) if pattern.startswith("(?i)") else ("", pattern)
    return head + rest.replace("(?i)", "")


def _members(items: list[tuple[Any, Any]]) -> list[str]:
    negate = False
    chosen: set[str] = set()
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chosen.add(chr(av))
        elif name == "RANGE":
            chosen.update(chr(c) for c in range(av[0], av[1] + 1) if c < 0x2000)
        elif name == "CATEGORY":
            cat = str(av)
            if cat.endswith("CATEGORY_DIGIT"):
                chosen.update(string.digits)
            elif cat.endswith("CATEGORY_WORD"):
                chosen.update(_WORD)
            elif cat.endswith("CATEGORY_SPACE"):
                chosen.add(" ")
            elif cat.endswith("CATEGORY_NOT_DIGIT"):
                chosen.update(c for c in _ALL if not c.isdigit())
            elif cat.endswith("CATEGORY_NOT_WORD"):
                chosen.update(c for c in _ALL if c not in _WORD)
            elif cat.endswith("CATEGORY_NOT_SPACE"):
                chosen.update(_ALL)
    if negate:
        return [c for c in PRINTABLE if c not in chosen]
    # Prefer printable, unremarkable characters when the class allows them.
    plain = sorted(c for c in chosen if c in PRINTABLE)
    return plain or sorted(chosen)


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.out: list[str] = []
        self.groups: dict[int, tuple[int, int]] = {}

    def pos(self) -> int:
        return sum(map(len, self.out))

    def walk(self, parsed: Any) -> None:
        rng = self.rng
        for op, av in parsed:
            name = str(op)
            if name == "LITERAL":
                self.out.append(chr(av))
            elif name == "NOT_LITERAL":
                self.out.append(rng.choice([c for c in PRINTABLE if c != chr(av)]))
            elif name == "ANY":
                self.out.append(rng.choice(string.ascii_letters))
            elif name == "IN":
                self.out.append(rng.choice(_members(av)))
            elif name == "BRANCH":
                self.walk(rng.choice(av[1]))
            elif name == "SUBPATTERN":
                group, _, _, inner = av
                start = self.pos()
                self.walk(inner)
                if group:
                    self.groups[group] = (start, self.pos())
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, inner = av
                high = min(high, low + 12)
                for _ in range(rng.randint(low, high)):
                    self.walk(inner)
            elif name == "AT":
                continue  # anchors and boundaries: the planted context provides them
            else:
                raise ValueError(f"cannot generate {name}")


def entropy(text: str) -> float:
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in Counter(text).values()) if n else 0.0


def _allowed(allowlists: Any, secret: str, match: str) -> bool:
    for al in allowlists:
        checks = []
        if al.regexes:
            target = match if al.target in ("match", "line") else secret
            checks.append(any(rx.search(target) for rx in al.regexes))
        if al.stopwords:
            checks.append(any(w in secret.lower() for w in al.stopwords))
        if al.has_paths:
            checks.append(False)
        if checks and (all(checks) if al.condition == "AND" else any(checks)):
            return True
    return False


def sample(rule: Any, global_allowlists: Any, rng: random.Random, tries: int = 400) -> Sample | None:
    """A string the rule reports as a secret, or None when none was generated in ``tries``."""
    parsed = sre.parse(python_form(rule.pattern))
    regex = re2.compile(rule.pattern)
    for _ in range(tries):
        gen = _Gen(rng)
        gen.walk(parsed)
        match = "".join(gen.out)
        if rule.secret_group:
            span = gen.groups.get(rule.secret_group, (0, 0))
        else:
            span = next((gen.groups[g] for g in sorted(gen.groups) if gen.groups[g][1] > gen.groups[g][0]), (0, len(match)))
        secret = match[span[0] : span[1]]
        if not secret.strip() or "\n" in match:
            continue
        if rule.entropy and entropy(secret) <= rule.entropy:
            continue
        if rule.require_digit and not any(c.isdigit() for c in secret):
            continue
        if _allowed(tuple(global_allowlists) + rule.allowlists, secret, match):
            continue
        if regex.search(match) is None:
            continue
        return Sample(rule.id, match, span[0], span[1])
    return None
