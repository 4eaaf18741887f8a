"""Secrets in agent transcripts: find them, and mask them before text leaves the machine.

The rules are data (``agtaild/secrets/data/``: gitleaks' published rules plus agtail's own,
docs/secrets.md); the scanner runs them fast and with bounded cost (scanner.py); masking
rescans whatever it is given with the same rules, so text whose scan never ran is masked all
the same. The functions below use the shipped rules; build a :class:`Scanner` from
:func:`load_rules` for others (a user's rule file, ``include_low=False``, ``disabled=…``).

    scan(text)            -> [Finding(rule, start, end, fingerprint, confidence, tail, field)]
    scan_many(texts)      -> a tuple of findings per text (batched: the fast way for many texts)
    scan_json(value)      -> findings in every string of a dict/list value, with their field
    mask(text)            -> the text with «secret:RULE …WXYZ» in place of each secret
    mask_many(texts)
    mask_json(value)      -> a copy of the value with every string masked, still valid JSON
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from agtaild.secrets import jsonwalk, masking
from agtaild.secrets.rules import Rule, RuleFileError, RuleProblem, RuleSet, load_rules
from agtaild.secrets.scanner import Finding, Scanner, Span, TextScan

__all__ = [
    "Finding",
    "Rule",
    "RuleFileError",
    "RuleProblem",
    "RuleSet",
    "Scanner",
    "Span",
    "TextScan",
    "default_scanner",
    "load_rules",
    "mask",
    "mask_json",
    "mask_many",
    "scan",
    "scan_json",
    "scan_many",
]

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def default_scanner() -> Scanner:
    """The shipped rules, every one enabled by them (low-confidence ones included)."""
    ruleset = load_rules()
    for problem in ruleset.problems:
        log.warning("secret rules: %s", problem)
    return Scanner(ruleset)


def scan(text: str, *, field: str = "", scanner: Scanner | None = None) -> list[Finding]:
    return (scanner or default_scanner()).scan(text, field)


def scan_many(texts: Sequence[str], *, scanner: Scanner | None = None) -> list[tuple[Finding, ...]]:
    return (scanner or default_scanner()).scan_many(texts)


def scan_json(value: Any, *, field: str = "", scanner: Scanner | None = None) -> list[Finding]:
    return jsonwalk.scan_value(scanner or default_scanner(), value, field)


def mask(text: str, *, scanner: Scanner | None = None) -> str:
    return masking.apply(text, (scanner or default_scanner()).results([text])[0])


def mask_many(texts: Sequence[str], *, scanner: Scanner | None = None) -> list[str]:
    results = (scanner or default_scanner()).results(texts)
    return [masking.apply(t, r) for t, r in zip(texts, results, strict=True)]


def mask_json(value: Any, *, scanner: Scanner | None = None) -> Any:
    return jsonwalk.mask_value(scanner or default_scanner(), value)
