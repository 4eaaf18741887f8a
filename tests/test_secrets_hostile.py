"""Hostile texts: the scanner stays linear (RE2) and bounded (its per-text budget).

The bounds are generous on purpose (the machine is shared): measured on 2 busy cores, the
100 MB line takes ~1.7 CPU-s, the others well under 1 s.
"""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Callable
from functools import cache

import pytest

from agtaild.secrets import Scanner, load_rules, mask
from agtaild.secrets import scanner as scanner_mod

pytestmark = pytest.mark.slow

BOUND_CPU_SECONDS = 10.0


@cache
def scanner() -> Scanner:
    return Scanner(load_rules())


def _line_100_mb() -> str:
    rng = random.Random(1)
    # Words that are keywords of many rules, so that their candidates all run over it.
    words = ("the", "token", "usage", "key", "config", "password", "reset", "api", "auth", "secret", "access")
    words += ("failed", "at", "42", "s.", "ey", "sk", "a3-", "bearer")
    unit = " ".join(rng.choice(words) for _ in range(200_000))
    return (unit * (100_000_000 // len(unit) + 1))[:100_000_000]


CASES: dict[str, Callable[[], str]] = {
    "a 100 MB single line": _line_100_mb,
    "a 10 MB base64 blob": lambda: base64.b64encode(random.Random(2).randbytes(7_500_000)).decode(),
    "AKIA × 1e6": lambda: "AKIA" * 1_000_000,
    "AKIA and a space × 1e6": lambda: "AKIA " * 1_000_000,
    "a million near-matches (one character short)": lambda: " ".join(["AKIA" + "Q7ZK4MW2JX5T3VP"] * 1_000_000),
    "credentials in URLs × 4e5": lambda: "https://u:p4ss@h" * 400_000,
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_text_is_scanned_and_masked_within_bounds(name: str) -> None:
    text = CASES[name]()
    sc = scanner()
    started = time.process_time()
    (result,) = sc.results([text])
    elapsed = time.process_time() - started
    assert elapsed < BOUND_CPU_SECONDS, f"{name}: {elapsed:.1f} CPU-s"
    started = time.process_time()
    masked = mask(text, scanner=sc)
    assert time.process_time() - started < BOUND_CPU_SECONDS
    if result.scanned is None:
        assert result.findings == () and masked is text  # nothing in these is a secret
    else:  # the budget stopped it: the rest is withheld
        assert len(result.findings) <= scanner_mod.MAX_MATCHES
        assert "«secret:unscanned" in masked and len(masked) < len(text)
        assert "p4ss" not in masked


def test_the_budget_holds_for_a_text_full_of_real_looking_secrets() -> None:
    tokens = " ".join(f"ghp_{i:08d}k2Vd8QmZ1xR7pL4tN9bW3cF6hJ0y" for i in range(100_000))
    started = time.process_time()
    (result,) = scanner().results([tokens])
    assert time.process_time() - started < BOUND_CPU_SECONDS
    assert result.scanned is not None and len(result.findings) <= scanner_mod.MAX_MATCHES
