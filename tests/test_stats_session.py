"""Stats by session (agtaild.index.stats_session) give the generic path's answer byte for byte:
the same rows in the same order, the same prices, the same float additions. The generic path
(``stats.assemble``, what every grouping used before) is the reference: each test asks both."""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agtaild.config import Config, RootSpec
from agtaild.index import stats as stats_module
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

SONNET = "claude-sonnet-4-5-20250929"  # priced, with a long-context rate
OPUS = "claude-opus-4-1-20250805"


def both(svc: Service, monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> tuple[bytes, bytes]:
    """(this module's answer, the generic path's answer), encoded as the API encodes them."""
    fast = msgspec.json.encode(svc.call("stats", params))
    with monkeypatch.context() as m:
        m.setattr(stats_module, "by_session", lambda *a, **k: None)
        generic = msgspec.json.encode(svc.call("stats", params))
    return fast, generic


def usage(key: str, model: str | None, ts: str, n: int, *, big: bool = False) -> str:
    inp = 250_000 + n if big else n  # over 200k input tokens: the long-context rate
    return toy_line(
        t="usage", key=key, model=model, ts=ts, **{"in": inp, "out": 3 * n, "cr": 7 * n, "cw": 2 * n}
    )


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    """40 sessions: ids in another order than the files are read in (row ids), 1-6 responses
    on 1-3 days, the unpriced models only in project /src/p0 (so the others' totals have a
    cost), long-context responses, and a session whose one response has no tokens."""
    root = tmp_path / "root"
    rng = random.Random(13)
    priced = [SONNET, OPUS, "gpt-5-codex"]
    for s in range(40):
        sid = f"{rng.getrandbits(32):08x}"
        lines = [toy_line(t="meta", id=sid, cwd=f"/src/p{s % 3}", title=f"session {s}")]
        for k in range(rng.randint(1, 6)):
            model = rng.choice([*priced, "mystery-model-9", None]) if s % 3 == 0 else rng.choice(priced)
            day = 1 + rng.randint(0, 2)  # several days of one model: rollup rows summed per group
            lines.append(
                usage(f"{s}-{k}", model, f"2026-03-0{day}T1{k}:00:00Z", rng.randint(1, 10**6), big=k == 2)
            )
        write_session(root / f"p{s % 3}" / f"{s:02d}.jsonl", lines)
    # A tie: the same tokens in two sessions, read in the other order than their keys sort.
    for name, sid in (("ta", "TB"), ("tb", "TA"), ("tc", "TC"), ("td", "TD")):
        write_session(
            root / "p2" / f"{name}.jsonl",
            [toy_line(t="meta", id=sid, cwd="/src/p2"), usage(f"{sid}-1", OPUS, "2026-03-02T10:00:00Z", 777)],
        )
    # Tokens of nothing: a zero-token response of an unpriced model costs 0.0, not null.
    write_session(
        root / "p1" / "Z.jsonl",
        [
            toy_line(t="meta", id="Z", cwd="/src/p1"),
            toy_line(t="usage", key="z1", model="mystery-model-9", ts="2026-03-02T10:00:00Z"),
        ],
    )
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


QUERIES: list[dict[str, Any]] = [
    {"by": "session"},
    {"by": "session", "agent": "toy"},
    {"by": "session", "since": "2026-03-02"},
    {"by": "session", "until": "2026-03-02"},
    {"by": "session", "since": "2026-03-01T12:00:00Z"},  # a time bound: the responses, grouped in SQL
    {"by": "session", "until": "2026-03-03T11:30:00+00:00"},
    {"by": "session", "project": "p1"},
    {"by": "session", "imported": False},
    {"by": "session", "imported": True},  # nothing in scope
    {"by": "session", "since": "2030-01-01"},
]


@pytest.mark.parametrize("params", QUERIES, ids=[str(q) for q in QUERIES])
def test_the_same_answer_as_the_generic_path(
    svc: Service, monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]
) -> None:
    fast, generic = both(svc, monkeypatch, params)
    assert fast == generic


def test_the_fixture_covers_what_the_answer_depends_on(svc: Service) -> None:
    """Unknown costs, several models per session, zero-cost rows and long-context rates."""
    doc = svc.call("stats", {"by": "session"})
    rows = {r["key"]: r for r in doc["rows"]}
    assert len(rows) == 45
    keys = [r["key"] for r in doc["rows"]]
    tied = keys.index("toy:TA")
    assert keys[tied : tied + 4] == ["toy:TA", "toy:TB", "toy:TC", "toy:TD"]  # the tie, cut by key
    assert any(r["cost_usd"] is None for r in rows.values()) and doc["totals"]["cost_usd"] is None
    assert any(len(r["models"]) >= 3 for r in rows.values())
    assert "(unknown)" in {m for r in rows.values() for m in r["models"]}
    assert rows["toy:Z"]["cost_usd"] == 0.0 and rows["toy:Z"]["models"] == ["mystery-model-9"]
    assert svc.call("stats", {"by": "session", "project": "p1"})["totals"]["cost_usd"] is not None
    # The sessions' row ids (the order the files were read in) are not the keys' order.
    db = sqlite3.connect(Path(str(svc.config.data_dir)) / "index.sqlite3")
    try:
        by_id = [k for (k,) in db.execute("SELECT agent || ':' || sid FROM sessions ORDER BY id")]
    finally:
        db.close()
    assert len(by_id) == 45 and by_id != sorted(by_id)
    # ... also among the tied sessions, whichever order the files were read in.
    assert [k for k in by_id if k.startswith("toy:T")] != ["toy:TA", "toy:TB", "toy:TC", "toy:TD"]


def test_the_totals_add_costs_in_the_generic_order(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The totals' cost adds many float costs, whose last digits depend on the order."""
    for params in ({"by": "session", "since": "2026-03-02"}, {"by": "session", "project": "p1"}):
        fast, generic = both(svc, monkeypatch, params)
        assert fast == generic
    costs = [r["cost_usd"] for r in msgspec.json.decode(fast)["rows"]]
    total = msgspec.json.decode(fast)["totals"]["cost_usd"]
    assert total is not None and len(costs) > 10
    # This fixture is one where the order shows: the same costs added otherwise differ.
    assert math.fsum(costs) != total or sum(sorted(costs)) != total


def test_copies_sharing_a_key_are_summed_before_pricing(
    tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two files holding one session id: one row, its tokens summed per model, then priced."""
    root = tmp_path / "root"
    for where, n in (("a", 1000), ("b", 2000)):
        write_session(
            root / where / "S.jsonl",
            [toy_line(t="meta", id="S", title=where), usage(f"{where}1", SONNET, "2026-03-01T10:00:00Z", n)],
        )
    svc = Service(toy_config(tmp_path, root))
    try:
        svc.update_index()
        fast, generic = both(svc, monkeypatch, {"by": "session"})
        assert fast == generic
        rows = msgspec.json.decode(fast)["rows"]
        assert [r["key"] for r in rows] == ["toy:S"] and rows[0]["input_tokens"] == 3000
    finally:
        svc.close()


def test_the_corpus(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    svc = Service(Config(data_dir=str(tmp_path / "data"), roots=roots, archive=False))
    try:
        svc.update_index()
        for params in (
            {"by": "session"},
            {"by": "session", "agent": "codex"},
            {"by": "session", "imported": False},
        ):
            fast, generic = both(svc, monkeypatch, params)
            assert fast == generic
            assert msgspec.json.decode(fast)["rows"]
    finally:
        svc.close()


def test_an_older_index_gets_the_wider_rollup_index(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """m008_statsession: the rollup's index by session covers the by=session read (no sort, no
    table look-up); an index made before it gets it when opened."""
    path = Path(str(svc.config.data_dir)) / "index.sqlite3"
    query = "SELECT u.session_id, u.model, u.long_ctx, u.input FROM usage_rollup u WHERE u.agent = 'toy' ORDER BY 1, 2, 3"
    before = svc.call("stats", {"by": "session"})
    svc.close()
    db = sqlite3.connect(path)
    try:
        plan = str(db.execute(f"EXPLAIN QUERY PLAN {query}").fetchall())
        assert "COVERING INDEX usage_rollup_" in plan and "TEMP B-TREE" not in plan
        # m017's index by (agent, session) covers an agent's rows too: without it, m008's alone
        db.execute("DROP INDEX usage_rollup_agent")
        db.execute("DROP INDEX usage_rollup_session")
        db.execute("CREATE INDEX usage_rollup_session ON usage_rollup(session_id)")
        db.execute("DELETE FROM _migrations WHERE name IN ('m008_statsession', 'm017_rollup_agent')")
        db.commit()
        assert "TEMP B-TREE" in str(db.execute(f"EXPLAIN QUERY PLAN {query}").fetchall())
    finally:
        db.close()
    again = Service(svc.config)
    try:
        assert again.call("stats", {"by": "session"}) == before
    finally:
        again.close()
    db = sqlite3.connect(path)
    try:
        plan = str(db.execute(f"EXPLAIN QUERY PLAN {query}").fetchall())
        assert "COVERING INDEX usage_rollup_" in plan and "TEMP B-TREE" not in plan
        assert "COVERING INDEX usage_rollup_session" in str(
            db.execute(f"EXPLAIN QUERY PLAN {query.replace(' WHERE u.agent = ' + repr('toy'), '')}").fetchall()
        )
    finally:
        db.close()


def test_tokens_of_a_session_row_that_is_gone(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rollup rows whose session row is missing (never left by the writer): the generic path's
    join drops them, and so does the answer."""
    path = Path(str(svc.config.data_dir)) / "index.sqlite3"
    before = svc.call("stats", {"by": "session"})
    db = sqlite3.connect(path)
    try:
        db.execute(
            "INSERT INTO usage_rollup (session_id, agent, day, model, long_ctx, input, output, cache_read,"
            " cache_write, reasoning) VALUES (999999, 'toy', '2026-03-01', ?, 0, 5, 5, 5, 5, 0)",
            (SONNET,),
        )
        db.commit()
    finally:
        db.close()
    fast, generic = both(svc, monkeypatch, {"by": "session"})
    assert fast == generic == msgspec.json.encode(before)
