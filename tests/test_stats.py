"""Stats: tokens counted once per response across files, priced from the table, never guessed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import Config, RootSpec
from agtaild.errors import UsageError
from agtaild.pricing import load_pricing
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

SONNET = "claude-sonnet-4-20250514"


def usage_line(key: str, model: str | None, ts: str, n: int) -> str:
    return toy_line(
        t="usage", key=key, model=model, ts=ts, **{"in": n, "out": 2 * n, "cr": 3 * n, "cw": 4 * n}
    )


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    root = tmp_path / "root"
    write_session(
        root / "a" / "A.jsonl",
        [
            toy_line(t="meta", id="A", cwd="/src/alpha"),
            usage_line("k1", SONNET, "2026-03-01T10:00:00Z", 100),
            usage_line("k2", "gpt-5-codex", "2026-03-02T10:00:00Z", 10),
        ],
    )
    # B replays k1 (a resume copy, smaller) and adds a model nobody prices.
    write_session(
        root / "b" / "B.jsonl",
        [
            toy_line(t="meta", id="B", cwd="/src/beta"),
            usage_line("k1", SONNET, "2026-03-01T10:00:00Z", 50),
            usage_line("k3", "mystery-model-9", "2026-03-02T11:00:00Z", 1),
        ],
    )
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


def test_each_response_counts_once_and_the_largest_copy_wins(svc: Service) -> None:
    doc = svc.call("stats", {"by": "model"})
    rows = {r["key"]: r for r in doc["rows"]}
    assert rows[SONNET]["input_tokens"] == 100  # not 150: B's copy of k1 is not counted
    assert rows[SONNET]["total_tokens"] == 1000
    assert doc["totals"]["total_tokens"] == 1000 + 100 + 10
    # sonnet 4: 100 in × $3 + 200 out × $15 + 300 cache read × $0.30 + 400 cache write × $3.75 per MTok
    assert rows[SONNET]["cost_usd"] == pytest.approx((300 + 3000 + 90 + 1500) / 1e6)
    # gpt-5-codex: 10 in × $1.25 + 20 out × $10 + 30 cache read × $0.125 (+ 40 cache write at input price)
    assert rows["gpt-5-codex"]["cost_usd"] == pytest.approx((12.5 + 200 + 3.75 + 50) / 1e6)


def test_an_unknown_model_makes_cost_unknown(svc: Service) -> None:
    doc = svc.call("stats", {"by": "model"})
    rows = {r["key"]: r for r in doc["rows"]}
    assert rows["mystery-model-9"]["cost_usd"] is None
    assert doc["totals"]["cost_usd"] is None
    by_day = {r["key"]: r for r in svc.call("stats", {"by": "day"})["rows"]}
    assert by_day["2026-03-01"]["cost_usd"] is not None
    assert by_day["2026-03-02"]["cost_usd"] is None


def test_groupings(svc: Service) -> None:
    assert [r["key"] for r in svc.call("stats", {})["rows"]] == ["2026-03-01", "2026-03-02"]
    assert [r["key"] for r in svc.call("stats", {"by": "agent"})["rows"]] == ["toy"]
    projects = {r["key"]: r["total_tokens"] for r in svc.call("stats", {"by": "project"})["rows"]}
    assert projects == {"alpha": 1100, "beta": 10}
    sessions = {r["key"]: r for r in svc.call("stats", {"by": "session"})["rows"]}
    assert set(sessions) == {"toy:A", "toy:B"} and sessions["toy:B"]["total_tokens"] == 10


def test_filters(svc: Service) -> None:
    since = svc.call("stats", {"since": "2026-03-02"})
    assert [r["key"] for r in since["rows"]] == ["2026-03-02"]
    until = svc.call("stats", {"until": "20260301"})
    assert [r["key"] for r in until["rows"]] == ["2026-03-01"]
    assert svc.call("stats", {"project": "beta"})["totals"]["total_tokens"] == 10
    assert svc.call("stats", {"agent": "toy"})["totals"]["total_tokens"] == 1110
    with pytest.raises(UsageError, match="unknown agent 'nobody'"):
        svc.call("stats", {"agent": "nobody"})
    with pytest.raises(UsageError, match="'by'"):
        svc.call("stats", {"by": "week"})
    with pytest.raises(UsageError, match="'since'"):
        svc.call("stats", {"since": "last tuesday"})


def test_precise_time_bounds_read_the_responses(svc: Service) -> None:
    # 10:30 on the 2nd: k2 (10:00) is before it, k3 (11:00) after; the rollup cannot split a day.
    doc = svc.call("stats", {"by": "model", "since": "2026-03-02T10:30:00+00:00"})
    assert {r["key"]: r["total_tokens"] for r in doc["rows"]} == {"mystery-model-9": 10}
    until = svc.call("stats", {"by": "model", "until": "2026-03-02T10:30:00+00:00"})
    assert {r["key"] for r in until["rows"]} == {SONNET, "gpt-5-codex"}


def test_session_usage_counts_its_own_file(svc: Service) -> None:
    b = svc.call("sessions.get", {"agent": "toy", "id": "B"})["session"]
    assert b["usage"]["input_tokens"] == 51  # its own copy of k1 and k3
    assert b["usage"]["cost_usd"] is None


def test_a_user_pricing_file_overrides_per_model(
    svc: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "prices.json"
    user.write_text(
        json.dumps(
            {"models": {"mystery-model-9": {"input": 1, "output": 1, "cache_write": 1, "cache_read": 1}}}
        )
    )
    monkeypatch.setenv("AGTAIL_PRICING", str(user))
    doc = svc.call("stats", {"by": "model"})
    assert {r["key"]: r["cost_usd"] for r in doc["rows"]}["mystery-model-9"] == pytest.approx(10 / 1e6)
    assert doc["totals"]["cost_usd"] is not None
    user.write_text("{not json")
    with pytest.raises(UsageError, match=r"prices\.json"):
        svc.call("stats", {})
    user.write_text(json.dumps({"models": {"x": {"input": "cheap"}}}))
    with pytest.raises(UsageError, match="input"):
        svc.call("stats", {})


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),
        ("claude-sonnet-4@20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5"),
        ("openai/gpt-5.5", "gpt-5.5"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("GPT-5-Codex", "gpt-5-codex"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ],
)
def test_model_names_match_by_documented_rules(name: str, expected: str) -> None:
    table = load_pricing()
    assert table.lookup(name) is table.models[expected]


@pytest.mark.parametrize(
    "name", ["gpt-5.1-codex-max-turbo", "claude-sonnet", "sonnet", "<synthetic>", "gpt", "claude-4"]
)
def test_no_fuzzy_guessing(name: str) -> None:
    assert load_pricing().lookup(name) is None
    assert load_pricing().cost(name, 1, 1, 1, 1) is None
    assert load_pricing().cost(name, 0, 0, 0, 0) == 0.0


def test_long_context_rate_applies_to_the_whole_request() -> None:
    table = load_pricing()
    assert table.cost("claude-sonnet-4-5", 1_000_000, 0, 0, 0, long_context=True) == pytest.approx(6.0)
    assert table.cost("claude-sonnet-4-5", 1_000_000, 0, 0, 0) == pytest.approx(3.0)
    assert table.cost("claude-haiku-4-5", 1_000_000, 0, 0, 0, long_context=True) == pytest.approx(1.0)


def test_the_shipped_table_names_its_date_and_sources() -> None:
    table = load_pricing()
    assert table.date and table.date[:4].isdigit()
    assert "anthropic" in table.sources and "openai" in table.sources


# -- the real corpus ----------------------------------------------------------------------
def _roots(corpus: Path) -> list[RootSpec]:
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    return roots


def _summed_adapter_usage(roots: list[RootSpec]) -> dict[str, int]:
    """What the adapters report, each (agent, key) once at its largest — read directly."""
    best: dict[tuple[str, str], Any] = {}
    for root in roots:
        adapter = get_adapter(root.agent)
        for unit in adapter.discover(Path(root.path)):
            for rec in adapter.read(unit, None, now=1e12).usage:
                u = rec.usage
                total = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens
                k = (root.agent, rec.key)
                if k not in best or total > best[k][0]:
                    best[k] = (total, u)
    sums = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    for _, u in best.values():
        for field in sums:
            sums[field] += getattr(u, field)
    sums["total_tokens"] = sum(sums.values())
    return sums


def test_stats_totals_equal_the_adapters_usage_on_the_corpus(corpus: Path, tmp_path: Path) -> None:
    roots = _roots(corpus)
    assert roots
    svc = Service(Config(data_dir=str(tmp_path / "data"), roots=roots, archive=False))
    try:
        svc.update_index()
        totals = svc.call("stats", {"by": "agent"})["totals"]
    finally:
        svc.close()
    expected = _summed_adapter_usage(roots)
    assert expected["total_tokens"] > 0
    assert {k: totals[k] for k in expected} == expected
