"""The secret rules as data: the shipped files, a user's bad rule file, the superset patterns."""

from __future__ import annotations

import hashlib
import random
import tomllib
import warnings
from pathlib import Path

import pytest
import re2

from agtaild.secrets import RuleFileError, Scanner, load_rules, mask, scan
from agtaild.secrets.patterns import compile_pattern, superset_pattern
from agtaild.secrets.rules import DATA, SHIPPED
from tests.secrets import regex_sample

TOKEN = "ghp_" + "k2Vd8QmZ1xR7pL4tN9bW" + "3cF6hJ0yS5gAeU2q"  # joined here: no whole token in a source file


def test_the_shipped_rules_load_without_a_problem() -> None:
    ruleset = load_rules(strict=True)
    ids = [r.id for r in ruleset.rules]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 230
    gitleaks = tomllib.loads((DATA / "gitleaks.toml").read_text())
    # Every gitleaks rule is used, except the five that need a file's path (pkcs12-file has
    # no pattern at all): each of those is listed, with why.
    path_rules = {r["id"] for r in gitleaks["rules"] if "path" in r}
    assert {p.rule for p in ruleset.skipped} == path_rules
    assert all("file path" in p.reason for p in ruleset.skipped)
    assert {r["id"] for r in gitleaks["rules"]} - path_rules <= set(ids)
    assert all(r.source for r in ruleset.rules)
    assert all(r.confidence in ("high", "low") for r in ruleset.rules)
    assert ruleset.rule("github-pat").source == "gitleaks v8.30.1 (gitleaks.toml)"
    assert ruleset.rule("url-password").source.startswith("agtail")


def test_gitleaks_is_shipped_as_published_with_its_licence() -> None:
    own = tomllib.loads(SHIPPED.read_text())
    (source,) = own["sources"]
    assert source["version"] == "v8.30.1" and len(source["commit"]) == 40
    assert hashlib.sha256((DATA / source["file"]).read_bytes()).hexdigest() == source["sha256"]
    licence = (DATA / source["license_file"]).read_text()
    assert licence.startswith("MIT License") and "Zachary Rice" in licence


def test_a_changed_gitleaks_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "gitleaks.toml").write_text((DATA / "gitleaks.toml").read_text() + "\n# edited\n")
    (tmp_path / "agtail.toml").write_text(SHIPPED.read_text())
    ruleset = load_rules([tmp_path / "agtail.toml"], shipped=False)
    assert any("not the recorded upstream file" in p.reason for p in ruleset.problems)


def test_generic_api_key_is_low_confidence_and_switchable() -> None:
    ruleset = load_rules()
    assert ruleset.rule("generic-api-key").confidence == "low"
    text = "deploy_auth = Zk29xQm71Lw0Pv3Rt8Ys"  # only gitleaks' generic rule knows this name
    assert [f.rule for f in Scanner(ruleset).scan(text)] == ["generic-api-key"]
    assert Scanner(ruleset, include_low=False).scan(text) == []
    assert Scanner(ruleset, disabled=["generic-api-key"]).scan(text) == []
    assert "generic-api-key" not in {r.id for r in Scanner(ruleset, include_low=False).rules}


BAD_FILE = r"""
format = 1

[[rules]]
id = "bad-pattern"
description = "a lookahead: RE2 refuses it"
regex = '''(?=secret)secret-\d+'''
keywords = ["secret"]

[[rules]]
id = "bad-type"
regex = '''zzz-\d+'''
entropy = "high"

[[rules]]
id = "empty-match"
regex = '''x*'''

[[rules]]
id = "bad-group"
regex = '''acme-(\d+)'''
secretGroup = 3

[[rules]]
description = "no id"
regex = '''qqq'''

[[rules]]
id = "acme-token"
description = "the one good rule"
regex = '''\b(acme_[a-z0-9]{20})\b'''
keywords = ["acme_"]
source = "a test"

[[rules]]
id = "acme-token"
regex = '''acme'''

[[overrides]]
id = "no-such-rule"
enabled = false
"""


def test_a_bad_rule_is_refused_with_its_id_and_reason_and_the_others_run(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(BAD_FILE)
    ruleset = load_rules([path])
    by_rule = {p.rule: p.reason for p in ruleset.problems}
    assert "RE2 refuses the pattern" in by_rule["bad-pattern"]
    assert "entropy" in by_rule["bad-type"]
    assert "empty string" in by_rule["empty-match"]
    assert "secretGroup 3" in by_rule["bad-group"]
    assert "without an id" in by_rule[None]
    assert "another rule has this id" in by_rule["acme-token"]
    assert "not loaded" in by_rule["no-such-rule"]
    assert all(p.file == "mine.toml" for p in ruleset.problems)
    loaded = {r.id for r in ruleset.rules}
    assert "acme-token" in loaded and not loaded & {"bad-pattern", "bad-type", "empty-match", "bad-group"}
    scanner = Scanner(ruleset)
    secret = "acme_" + "k3j9" * 5
    assert [f.rule for f in scanner.scan(f"key {secret} and {TOKEN}")] == ["acme-token", "github-pat"]
    with pytest.raises(RuleFileError) as raised:
        load_rules([path], strict=True)
    assert "bad-pattern" in str(raised.value) and len(raised.value.problems) == len(ruleset.problems)


def test_an_unreadable_rule_file_is_a_problem_and_the_shipped_rules_still_run(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[[rules]\nid = ")
    missing = tmp_path / "missing.toml"
    ruleset = load_rules([broken, missing])
    assert [(p.file, p.rule) for p in ruleset.problems] == [("broken.toml", None), ("missing.toml", None)]
    assert all("cannot read the rule file" in p.reason for p in ruleset.problems)
    assert [f.rule for f in Scanner(ruleset).scan(f"token {TOKEN}")] == ["github-pat"]


def test_an_override_in_a_user_file_changes_a_shipped_rule(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[[overrides]]\nid = "github-pat"\nenabled = false\n')
    assert Scanner(load_rules([path])).scan(f"token {TOKEN}") == []
    path.write_text('[[overrides]]\nid = "github-pat"\ncolour = "red"\n')
    ruleset = load_rules([path])
    assert [p.rule for p in ruleset.problems] == ["github-pat"] and "unknown fields" in ruleset.problems[0].reason


def test_a_rule_that_needs_a_file_path_is_skipped_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text("[[rules]]\nid = 'tf'\nregex = 'password = \"(\\\\w+)\"'\npath = '\\.tf$'\n")
    ruleset = load_rules([path], shipped=False, strict=True)
    assert ruleset.rules == () and [p.rule for p in ruleset.skipped] == ["tf"]


# -- the superset form the batch pass runs ---------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\b(AKIA[A-Z2-7]{16})\b", r"(AKIA[A-Z2-7]{16,})\b"),
        (r"(?i)[\w.-]{0,50}?(?:key|token)[\s'\"]{0,3}=(\w{10,150})(?:\s|$)", r"(?i)(?:key|token)[\s'\"]*=(\w{10,})(?:\s|(?m:$))"),
        (r"(?:^|[\s>=])x\z", r"(?:(?m:^)|[\s>=])x(?m:$)"),
        (r"[^$^]{2}[\]^]\{3}", r"[^$^]{2,}[\]^]\{3}"),
        (r"\Qa$b\E", r"\Qa$b\E"),
    ],
)
def test_superset_pattern(pattern: str, expected: str) -> None:
    assert superset_pattern(pattern) == expected
    compile_pattern(expected)


def test_every_rules_superset_matches_wherever_the_rule_does() -> None:
    """The batch pass may only mark more texts than the exact rules find, never fewer: for a
    sample of every rule, alone and inside a batch of texts joined with \\n, the superset
    form finds a match overlapping the rule's."""
    ruleset = load_rules()
    rng = random.Random(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for rule in ruleset.rules:
            if rule.superset is rule.regex:
                continue
            made = regex_sample.sample(rule, ruleset.allowlists, rng)
            assert made is not None, rule.id
            assert rule.regex.search(made.match) is not None, rule.id
            for text in (made.match, f"lead line\n{made.match}\nnext line", f"x {made.match}"):
                exact = rule.regex.search(text)
                if exact is None:  # an anchored rule, moved off its line start
                    continue
                batch = f"before\n{text}\nafter"
                offset = len("before\n")
                spans = [m.span() for m in rule.superset.finditer(batch)]
                assert any(s < offset + exact.end() and e > offset + exact.start() for s, e in spans), rule.id


def test_supersets_compile_with_re2_limits() -> None:
    for rule in load_rules().rules:
        assert isinstance(rule.superset, type(re2.compile("x")))


def test_module_functions_use_the_shipped_rules() -> None:
    assert [f.rule for f in scan(f"GITHUB_TOKEN={TOKEN}")] == ["github-pat"]
    assert mask(f"GITHUB_TOKEN={TOKEN}") == "GITHUB_TOKEN=«secret:github-pat …eU2q»"
