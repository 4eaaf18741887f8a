"""Scanning and masking: findings, offsets, overlaps, JSON values, batches, long texts, budget."""

from __future__ import annotations

import hashlib
import itertools
import json
from functools import cache

import msgspec
import pytest

from agtaild.secrets import (
    Scanner,
    TextScan,
    jsonwalk,
    load_rules,
    mask,
    mask_json,
    mask_many,
    scan,
    scan_json,
    scan_many,
    textbytes,
)
from agtaild.secrets import scanner as scanner_mod
from tests.secrets.corpus import build
from tests.secrets.sample_text import corpus_texts

# Joined at run time: no whole fake token is written in a source file.
GHP = "ghp_" + "k2Vd8QmZ1xR7pL4tN9bW" + "3cF6hJ0yS5gAeU2q"
AKIA = "AKIA" + "Q7ZK4MW2" + "JX5T3VPL"
OPENAI = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv" + "1Wx2Yz3Ab4Cd5Ef6Gh7Ij8Kl9Mn0Op"


@cache
def scanner() -> Scanner:
    return Scanner(load_rules())


def exhaustive(sc: Scanner, text: str) -> TextScan:
    """Every rule over the text alone, without the batch prefilter: what the scanner must equal."""
    hits: dict[int, list[scanner_mod._Hit]] = {}
    short: dict[int, int] = {}
    sc._scan_unit([(r, 0) for r in range(len(sc.rules))], text, textbytes.encode(text), (0, 0), hits, short)
    return sc._resolve(hits.get(0, []), short.get(0))


def test_a_finding_has_rule_character_offsets_and_a_fingerprint_never_the_secret() -> None:
    text = f"日本語のテスト 🔑 export GITHUB_TOKEN={GHP}\n"
    (finding,) = scan(text, field="text")
    assert (finding.rule, finding.confidence, finding.field) == ("github-pat", "high", "text")
    assert text[finding.start : finding.end] == GHP
    assert finding.fingerprint == hashlib.sha256(GHP.encode()).hexdigest()
    assert finding.tail == GHP[-4:]
    assert GHP not in msgspec.json.encode(finding).decode()


def test_mask_keeps_the_rule_and_the_last_characters() -> None:
    text = f"key {AKIA} then https://bob:Xy7kq2Wz@git.acme-corp.io/r.git\n"
    assert mask(text) == "key «secret:aws-access-token …3VPL» then https://bob:«secret:url-password …Wz»@git.acme-corp.io/r.git\n"
    masked = mask(text)
    assert mask(masked) == masked  # a mask is never a secret


def test_overlapping_findings_are_one_secret_named_by_the_specific_rule() -> None:
    text = f'GITHUB_TOKEN={GHP}\n{{"api_key": "{OPENAI}"}}\nAuthorization: Bearer {GHP}'
    findings = scan(text)
    assert [f.rule for f in findings] == ["github-pat", "openai-api-key-prefixed", "github-pat"]
    assert len({f.fingerprint for f in findings}) == 2  # the same token twice: one fingerprint
    assert GHP not in mask(text) and OPENAI not in mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "password=example",
        "api_key=xxx",
        "token: <your-key>",
        "API_KEY=${API_KEY}",
        "password: '********'",
        "secret = os.environ['SECRET']",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "postgres://user:password@localhost:5432/db",
        "token_count: 12345678 input_tokens: 4567",
        "",
    ],
)
def test_placeholders_examples_and_words_are_not_secrets(text: str) -> None:
    assert scan(text) == []
    assert mask(text) == text


def test_mask_json_masks_every_string_and_stays_valid_json() -> None:
    value = {
        "type": "response_item",
        "count": 3,
        "ok": True,
        "tags": ("a", f"token {GHP}"),
        f"{AKIA}": "a key as a dict key",
        "env": {"OPENAI_API_KEY": OPENAI, "PATH": "/usr/bin"},
        # Codex: the call's arguments as a JSON string; inside it \" hides what follows the key
        "arguments": json.dumps({"command": ["bash", "-lc", f'curl -H "Authorization: Bearer {OPENAI}" "$URL"']}),
        "secret_key": "Zk29xQm71Lw0Pv3Rt8Ys",  # only its key says it is a secret
    }
    masked = mask_json(value)
    dumped = json.dumps(masked, ensure_ascii=False)
    for secret in (GHP, AKIA, OPENAI, "Zk29xQm71Lw0Pv3Rt8Ys"):
        assert secret not in dumped
    assert masked["count"] == 3 and masked["ok"] is True and isinstance(masked["tags"], tuple)
    assert masked["env"]["PATH"] == "/usr/bin"
    assert masked["secret_key"] == "«secret:secret-assignment …t8Ys»"
    assert "«secret:aws-access-token …3VPL»" in masked
    inner = json.loads(masked["arguments"])  # re-encoded: still a JSON document
    assert inner["command"][2] == f'curl -H "Authorization: Bearer «secret:openai-api-key-prefixed …{OPENAI[-4:]}»" "$URL"'
    fields = {f.field: f.rule for f in scan_json(value, field="input")}
    assert fields["input/arguments#json/command/2"] == "openai-api-key-prefixed"
    assert fields["input/env/OPENAI_API_KEY"] == "openai-api-key-prefixed"
    assert fields[f"input/{AKIA}#key"] == "aws-access-token"
    assert fields["input/tags/1"] == "github-pat"
    assert fields["input/secret_key"] == "secret-assignment"


def test_mask_json_refuses_a_value_nested_too_deep() -> None:
    deep: object = GHP
    for _ in range(jsonwalk.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        mask_json(deep)


def test_batched_scans_equal_each_text_scanned_alone_by_every_rule() -> None:
    """The keyword set and the superset pass only skip work: on the planted corpus (every
    rule), the look-alikes and a slice of the sample corpus, a batch gives exactly what every
    rule run over each text alone gives."""
    sc = scanner()
    corpus = build(3, ruleset=load_rules())
    texts: list[str] = []
    for record in corpus.records + [r for _, r in corpus.lookalike_records]:
        jsonwalk._plan(record, "", texts, 0, 0)
    texts += [t for _, t in itertools.islice(corpus_texts(), 0, 60000, 20)]
    batched = sc.results(texts)
    assert sum(len(r.findings) for r in batched) > 300
    for text, got in zip(texts, batched, strict=True):
        assert got == exhaustive(sc, text)
    assert [r.findings for r in batched] == sc.scan_many(texts)
    assert mask_many(texts, scanner=sc) == [mask(t, scanner=sc) for t in texts]


def test_when_the_keyword_set_gives_up_every_rule_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = Scanner(load_rules())

    class GaveUp:  # RE2's set returns no match at all when its automaton runs out of memory
        def Match(self, text: bytes) -> None:
            return None

    monkeypatch.setattr(sc, "_set", GaveUp())
    texts = [f"GITHUB_TOKEN={GHP}", "nothing here", f"id {AKIA}"]
    assert [[f.rule for f in r] for r in sc.scan_many(texts)] == [["github-pat"], [], ["aws-access-token"]]


def test_a_lone_surrogate_keeps_offsets_right() -> None:
    text = "\ud800 broken json escape, then " + GHP
    (finding,) = scan(text)
    assert text[finding.start : finding.end] == GHP
    assert GHP not in mask(text)


def test_long_texts_are_scanned_in_overlapping_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner_mod, "CHUNK_CHARS", 2000)
    monkeypatch.setattr(scanner_mod, "CHUNK_OVERLAP", 200)
    filler = "lorem ipsum dolor sit amet é "  # non-ASCII: byte and character offsets differ
    secrets = [GHP, AKIA, OPENAI]
    for shift in range(0, 60, 7):
        parts = [filler * 60 + "x" * shift]
        for secret in secrets * 3:
            parts += [f" {secret} ", filler * 65]
        text = "".join(parts)
        assert len(text) > 9 * 2000
        findings = scan(text)
        assert [text[f.start : f.end] for f in findings] == secrets * 3
        masked = mask(text)
        assert not any(s in masked for s in secrets)


def test_a_text_over_a_mebibyte_keeps_every_secret() -> None:
    filler = "build log line without anything in it\n" * 30000
    text = f"{filler}GITHUB_TOKEN={GHP}\n{filler}{AKIA}\n{filler}"
    assert len(text) > 3 * scanner_mod.CHUNK_CHARS
    assert [text[f.start : f.end] for f in scan(text)] == [GHP, AKIA]


def test_the_budget_stops_a_hostile_text_and_masking_withholds_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner_mod, "MAX_MATCHES", 50)
    tokens = ["ghp_" + f"{i:04d}" + "k2Vd8QmZ1xR7pL4tN9bW3cF6hJ0y" + "AbCd" for i in range(200)]
    text = "head " + " ".join(tokens) + " tail"
    (result,) = Scanner(load_rules()).results([text])
    assert result.scanned is not None and 0 < result.scanned < len(text)
    assert 0 < len(result.findings) <= 50
    masked = mask(text)
    assert "«secret:unscanned" in masked and masked.startswith("head «secret:github-pat")
    assert not any(t in masked for t in tokens)
    assert not masked.endswith(" tail")


def test_scan_many_and_empty_input() -> None:
    assert scan_many([]) == []
    assert scan_many(["", "plain words", f"k {GHP}"])[2][0].rule == "github-pat"
