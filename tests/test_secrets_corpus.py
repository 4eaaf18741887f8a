"""Recall and precision on the secrets corpus (tests/secrets/corpus.py) and the sample corpus."""

from __future__ import annotations

import json
from functools import cache

from agtaild.secrets import Scanner, load_rules
from tests.secrets.corpus import Corpus, build
from tests.secrets.families import FAMILIES
from tests.secrets.measure import lookalike_findings, recall, sample_corpus_findings, sample_record_findings


@cache
def scanner() -> Scanner:
    return Scanner(load_rules())


@cache
def corpus() -> Corpus:
    return build(1, ruleset=load_rules())


def test_the_corpus_is_deterministic_and_covers_every_rule_and_family() -> None:
    again = build(1, ruleset=load_rules())
    assert json.dumps(again.records) == json.dumps(corpus().records)
    assert again.planted == corpus().planted
    assert json.dumps(build(2).records) != json.dumps(build(1).records)
    families = {p.family.split("#")[0] for p in corpus().planted}
    assert set(FAMILIES) <= families
    planted_rules = {p.rule for p in corpus().planted}
    assert {r.id for r in load_rules().rules if r.enabled} <= planted_rules
    # the list, each planted by hand in its usual text (not only from its pattern)
    by_hand = {p.rule for p in corpus().planted if not p.family.startswith("rule:")}
    for rule in (
        "aws-access-token", "aws-secret-access-key", "github-pat", "github-oauth", "github-app-token",
        "github-refresh-token", "github-fine-grained-pat", "gitlab-pat", "slack-bot-token", "slack-user-token",
        "slack-webhook-url", "stripe-access-token", "openai-api-key", "anthropic-api-key", "gcp-api-key",
        "private-key", "huggingface-access-token", "npm-access-token", "pypi-upload-token", "sendgrid-api-token",
        "twilio-api-key", "azure-storage-account-key", "azure-ad-client-secret", "jwt", "url-password",
        "database-url", "authorization-header", "secret-assignment",
    ):  # fmt: skip
        assert rule in by_hand, rule


def test_at_least_99_percent_of_planted_secrets_are_found_and_none_leaks_when_masked() -> None:
    report = recall(corpus(), scanner())
    assert report.planted > 400
    assert report.rate >= 0.99, [(p.family, p.rule) for p in report.missed]
    assert report.leaked == []


def test_look_alikes_are_not_found() -> None:
    found = lookalike_findings(corpus(), scanner())
    assert found == [], [(kind, f.rule, text[:60]) for kind, f, text in found]
    kinds = {kind for kind, _ in corpus().lookalike_records}
    for kind in (
        "uuids",
        "git-shas",
        "base64-image",
        "package-lock",
        "cache-keys",
        "docs-aws",
        "placeholders",
    ):
        assert kind in kinds


def test_fewer_than_one_false_finding_per_10_mb_of_the_sample_corpus() -> None:
    result = sample_corpus_findings(scanner())
    assert result.bytes > 10e6  # decoded text, not file bytes
    assert result.per_10_mb() < 1, [(path, f.rule, context) for path, f, context in result.findings]
    # the credential a real session holds is found (KNOWN_TRUE), and only where it is
    assert {(f.rule, path.endswith("/crush.db")) for path, f, _ in result.true_findings} == {
        ("database-url", True)
    }


def test_json_records_of_the_sample_corpus_hold_no_finding_either() -> None:
    """The same files through scan_json (a value read with its key before it, embedded JSON
    decoded): what the index will scan a tool's input with."""
    records, found = sample_record_findings(scanner())
    assert records > 5000
    assert found == [], [(path, f.rule, f.field) for path, f in found]
