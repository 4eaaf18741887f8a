"""Recall, leaks and false findings of a scanner on the test corpora (tests and bench share them)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agtaild.secrets import Finding, Scanner, mask_json, scan_json
from tests.conftest import CORPUS
from tests.secrets.corpus import Corpus, Planted
from tests.secrets.sample_text import corpus_records, corpus_texts


def resolve(value: Any, pointer: str) -> str:
    """The string a finding's ``field`` points at (JSON Pointer, ``#json``, ``#key``)."""
    parts = pointer.split("#json")
    for index, part in enumerate(parts):
        is_key = part.endswith("#key")
        if is_key:
            part = part[: -len("#key")]
        segments = [s.replace("~1", "/").replace("~0", "~") for s in part.split("/")[1:]] if part else []
        for position, segment in enumerate(segments):
            if is_key and position == len(segments) - 1:
                value = segment
                break
            value = value[int(segment)] if isinstance(value, list | tuple) else value[segment]
        if index < len(parts) - 1:
            value = json.loads(value)
    if not isinstance(value, str):
        raise ValueError(f"{pointer} is not a string")
    return value


def segments(secret: str) -> list[str]:
    """The pieces of a secret that must never leave unmasked: its lines (PEM bodies are cut
    by line numbers in a Read tool's output), without PEM armor lines, 8 characters or more."""
    pieces = re.split(r"\s+|\\n|→", secret)
    return [p for p in pieces if len(p) >= 8 and not p.startswith("-----") and not p.endswith("-----")] or [
        secret
    ]


def strings(value: Any) -> Iterator[str]:
    """Every string in ``value``, and in every string that is a JSON document."""
    if isinstance(value, str):
        yield value
        if value.lstrip()[:1] in ("{", "["):
            try:
                yield from strings(json.loads(value))
            except ValueError:
                pass
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


@dataclass
class Recall:
    planted: int = 0
    found: int = 0
    missed: list[Planted] = field(default_factory=list)
    named_otherwise: Counter[tuple[str, str]] = field(default_factory=Counter)
    leaked: list[Planted] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.found / self.planted if self.planted else 0.0


def recall(corpus: Corpus, scanner: Scanner) -> Recall:
    """Which planted secrets a finding covers (any rule: overlapping findings are one), which
    rule named them, and which still show in the masked record."""
    report = Recall(planted=len(corpus.planted))
    findings = [scan_json(r, scanner=scanner) for r in corpus.records]
    masked = [list(strings(mask_json(r, scanner=scanner))) for r in corpus.records]
    for planted in corpus.planted:
        record = corpus.records[planted.record]
        needle = max(segments(planted.secret), key=len)
        rules = set()
        for f in findings[planted.record]:
            text = resolve(record, f.field)
            for m in re.finditer(re.escape(needle), text):
                if m.start() < f.end and m.end() > f.start:
                    rules.add(f.rule)
        if rules:
            report.found += 1
            if planted.rule not in rules:
                report.named_otherwise[(planted.rule, ",".join(sorted(rules)))] += 1
        else:
            report.missed.append(planted)
        if any(piece in text for text in masked[planted.record] for piece in segments(planted.secret)):
            report.leaked.append(planted)
    return report


def lookalike_findings(corpus: Corpus, scanner: Scanner) -> list[tuple[str, Finding, str]]:
    """(kind, finding, the text found) for every finding in a look-alike record."""
    out = []
    for kind, record in corpus.lookalike_records:
        for f in scan_json(record, scanner=scanner):
            out.append((kind, f, resolve(record, f.field)[f.start : f.end]))
    return out


@dataclass
class SampleScan:
    texts: int
    bytes: int
    findings: list[tuple[str, Finding, str]]  # (file, finding, context around it)
    true_findings: list[tuple[str, Finding, str]] = field(default_factory=list)  # those of KNOWN_TRUE

    def per_10_mb(self, confidence: str | None = None) -> float:
        n = sum(1 for _, f, _ in self.findings if confidence is None or f.confidence == confidence)
        return n / (self.bytes / 10e6)


#: True findings in tests/corpus: (file below tests/corpus, rule, text around the finding). A real session
#: copied byte for byte may hold a credential its owner published (here a local development
#: database URL with its password, read from the project's .env by the agent): found, it is
#: not a false finding, and it must stay found.
KNOWN_TRUE = frozenset(
    {
        (
            "crush/dbos-transact-golang/dbos-transact-golang/.crush/crush.db",
            "database-url",
            "postgres://postgres:dbos@localhost",
        ),
    }
)


def known_true(path: str, f: Finding, text: str) -> bool:
    try:
        rel = Path(path).resolve().relative_to(Path(CORPUS).resolve()).as_posix()
    except ValueError:
        rel = path
    return any(rel == k_path and f.rule == k_rule and k_text in text for k_path, k_rule, k_text in KNOWN_TRUE)


def sample_corpus_findings(scanner: Scanner) -> SampleScan:
    """Every finding in the decoded text of tests/corpus (public sample sessions: none holds a
    real secret but those in :data:`KNOWN_TRUE`, so every other finding there is a false one)."""
    pairs = list(corpus_texts())
    texts = [t for _, t in pairs]
    found: list[tuple[str, Finding, str]] = []
    true: list[tuple[str, Finding, str]] = []
    for (path, text), findings in zip(pairs, scanner.scan_many(texts), strict=True):
        for f in findings:
            hit = (str(path), f, text[max(0, f.start - 40) : f.end + 10])
            (true if known_true(str(path), f, hit[2]) else found).append(hit)
    return SampleScan(len(texts), sum(len(t.encode()) for t in texts), found, true)


def sample_record_findings(scanner: Scanner) -> tuple[int, list[tuple[str, Finding]]]:
    """scan_json over every JSONL record and JSON file of tests/corpus (each value read with
    its key before it): (records, findings)."""
    found = []
    count = 0
    for path, value in corpus_records():
        count += 1
        found.extend((str(path), f) for f in scan_json(value, scanner=scanner))
    return count, found
