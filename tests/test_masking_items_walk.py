"""The JSON export masks each event as the exits do (agtaild.query.masking: the strings gathered
in one cheap pass, one batched scan, an event rebuilt only when it holds a secret), no longer
with a walk of every value into nodes (jsonwalk.mask_value). The two mask alike: on the sample
corpus with and without planted keys, and on keys an embedded JSON document spells with
escapes, which only decoding it reveals."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest

from agtaild.query.masking import AnswerMasker
from agtaild.secrets import default_scanner, jsonwalk
from agtaild.secrets.items import fields_to_scan
from tests.secrets.sample_text import corpus_records

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
        masked = AnswerMasker(scanner, max_verdicts=0).mask({"events": [ev]})["events"][0]
        assert masked != ev and "secret:" in json.dumps(masked)  # the mask, re-encoded as the document was
        assert masked == walked(scanner, ev)


def test_the_export_masks_a_key_spelled_in_escapes() -> None:
    from agtaild.share.redact import Redactor

    page = [dict(ev, seq=i) for i, ev in enumerate(HIDDEN)]
    docs = [json.loads(d) for d in Redactor().documents(page)]
    assert [d["seq"] for d in docs] == list(range(len(HIDDEN)))
    text = json.dumps(docs, ensure_ascii=False)
    decoded = json.dumps([json.loads(d["input"]["arguments"]) for d in docs[:1]])
    assert GITHUB not in text and AWS not in text and GITHUB[4:] not in decoded
    assert docs[-1] == page[-1]  # a clean event is written as it is


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
