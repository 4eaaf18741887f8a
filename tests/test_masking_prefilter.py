"""The keyword test that lets masking skip most texts (Scanner.may_find, jsonwalk.may_find_encoded)
never skips one that holds a secret: on every text of the sample corpus and on planted keys,
including keys an embedded JSON document spells with escapes, the answer masker that uses it
masks exactly what a walk of every value masks."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import msgspec
import pytest

from agtaild.query.masking import AnswerMasker
from agtaild.secrets import default_scanner, jsonwalk
from agtaild.secrets.items import fields_to_scan
from tests.secrets.families import FAMILIES
from tests.secrets.sample_text import corpus_records, corpus_texts

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"


def _escaped(text: str, letters: str) -> str:
    """``text`` as a JSON string literal whose ``letters`` are written as ``\\uXXXX``."""
    body = json.dumps(text)[1:-1]
    for c in letters:
        body = body.replace(c, f"\\u{ord(c):04x}")
    return body


def walked(scanner: Any, ev: dict[str, Any]) -> dict[str, Any]:
    """What masking an event by walking every value of every scanned field gives."""
    scanned, _ = fields_to_scan(ev)
    texts: list[str] = []
    plans = [(k, jsonwalk.plan_value(v, texts, k)) for k, v in scanned.items()]
    results = scanner.results(texts)
    if not any(r.spans or r.scanned is not None for r in results):
        return ev
    return {**ev, **{k: jsonwalk.masked_value(p, results, scanner) for k, p in plans}}


def event(**fields: Any) -> dict[str, Any]:
    return {"seq": 1, "kind": "tool_use", "ts": "2026-01-01T00:00:00Z", "text": None, "input": None,
            "result": None, "uuid": "u1", "extra": {}, **fields}  # fmt: skip


HIDDEN = [
    # a Codex-style call whose arguments are a JSON document that spells the key's prefix in escapes
    event(input={"arguments": '{"cmd": "git push ' + _escaped(GITHUB, "gh") + '"}'}),
    event(result='[{"text": "' + _escaped(f"AWS_ACCESS_KEY_ID={AWS}", "AKI") + '"}]'),
    # two levels deep: a JSON document inside a JSON document inside a string
    event(input={"payload": json.dumps({"inner": '{"k": "' + _escaped(GITHUB, "ghp") + '"}'})}),
    event(text=f"plain {GITHUB}"),
    event(input={"env": {"GITHUB_TOKEN": GITHUB}}),
    event(text="nothing to see", extra={"note": "a secret word, no key"}),
]


def test_a_key_spelled_in_escapes_is_masked() -> None:
    scanner = default_scanner()
    for ev in HIDDEN[:3]:
        data = msgspec.json.encode(fields_to_scan(ev)[0])
        assert GITHUB.encode() not in data and AWS.encode() not in data  # hidden from a byte search
        assert jsonwalk.may_find_encoded(scanner, data)
        masked = AnswerMasker(scanner, max_verdicts=0).mask({"events": [ev]})["events"][0]
        assert masked != ev and "secret:" in json.dumps(masked)  # the mask, re-encoded as the document was
        assert masked == walked(scanner, ev)


def test_the_canary_and_case_do_not_fool_the_keyword_test() -> None:
    scanner = default_scanner()
    assert scanner.may_find(b"plain words only here") is False  # the canary holds "secret": not a hit
    assert scanner.may_find(b"a SECRET word") is True
    assert scanner.may_find_text(f"x {GITHUB.upper()}") is True


def test_no_text_with_a_finding_is_skipped() -> None:
    """The sample corpus (clean) and every family of planted keys, alone and inside a corpus text."""
    scanner = default_scanner()
    rng = random.Random(26)
    carriers = [carrier for family in FAMILIES.values() for carrier, _ in [family(rng) for _ in range(3)]]
    texts: list[str] = list(carriers)
    for i, (_, text) in enumerate(itertools.islice(corpus_texts(), 0, None, 7)):  # a seventh: enough shapes
        texts.append(text)
        if i % 10 == 0:
            texts.append(f"{text}\n{carriers[i % len(carriers)]}")
    found = skipped = 0
    for t, findings in zip(texts, scanner.scan_many(texts), strict=True):
        if findings:
            found += 1
            assert scanner.may_find_text(t), t[:200]
        elif not scanner.may_find_text(t):
            skipped += 1
    assert all(scanner.scan_many(carriers))
    assert len(texts) > 1000 and found > 1000 and skipped > len(texts) // 4


@pytest.mark.parametrize("planted", [False, True])
def test_the_answer_masker_masks_what_a_full_walk_masks(planted: bool) -> None:
    scanner = default_scanner()
    events: list[dict[str, Any]] = list(HIDDEN)
    for _, record in itertools.islice(corpus_records(), 0, None, 3):
        if isinstance(record, dict):
            if planted and len(events) % 7 == 0:
                record = {**record, "planted": f"token {GITHUB}"}
            events.append(event(input=record, text=str(record.get("type") or "")))
    assert len(events) > 500
    masker = AnswerMasker(scanner, max_verdicts=0)
    masked: list[dict[str, Any]] = []
    for i in range(0, len(events), 200):
        masked.extend(masker.mask({"events": events[i : i + 200]})["events"])
    assert masked == [walked(scanner, ev) for ev in events]
    assert (
        planted is False or sum(m is not e for m, e in zip(masked, events, strict=True)) >= len(events) // 7
    )
