"""The in-memory nearest-neighbour search (agtaild.semantic.knn): exact below a size, an inverted
file above it, rows added later searched too, and a reload after a deletion. Small matrices with
the size thresholds lowered; speed is bench/bench_semantic.py's, not a test's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agtaild.semantic import knn
from agtaild.semantic.knn import Matrix
from agtaild.semantic.store import VectorStore
from tests.semantic_fakes import np

DIM = 32


def _clustered(rng: Any, n: int, centres: Any) -> Any:
    """Unit vectors near the given centres (as embeddings of related texts are)."""
    picks = rng.integers(0, len(centres), n)
    vecs = centres[picks] + 0.35 * rng.normal(size=(n, DIM))
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def _store(tmp_path: Path, vecs: Any, first_event: int = 0) -> VectorStore:
    store = VectorStore(tmp_path / "v.sqlite3", tmp_path / "index.sqlite3")
    store.use_model("test:knn", DIM)
    _add(store, vecs, first_event)
    return store


def _add(store: VectorStore, vecs: Any, first_event: int) -> None:
    ids = range(first_event, first_event + len(vecs))
    store.add([(i, 1, i) for i in ids], [(i, 0) for i in ids], vecs)


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(knn, "PARTITION_MIN_ROWS", 1000)
    monkeypatch.setattr(knn, "PAGE", 700)  # loading takes several pages


def test_small_matrices_stay_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vecs = _clustered(rng, 500, rng.normal(size=(8, DIM)))
    store = _store(tmp_path, vecs)
    m = Matrix()
    m.refresh(store, DIM, partition=True)
    assert m.partition is None and m.rows == 500
    best = m.nearest_events(vecs[123], 5)
    assert best[0][0] == 123 and best[0][1] == pytest.approx(1.0, abs=0.02)
    scores = [s for _e, s in best]
    assert scores == sorted(scores, reverse=True)


def test_the_lists_find_what_the_exact_search_finds(tmp_path: Path, small_thresholds: None) -> None:
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(40, DIM))
    vecs = _clustered(rng, 4000, centres)
    store = _store(tmp_path, vecs)
    m = Matrix()
    m.refresh(store, DIM)
    assert m.partition is None  # a search alone never makes the lists
    m.refresh(store, DIM, partition=True)
    part = m.partition
    assert part is not None and part.rows == 4000 and part.lists == 63
    assert sorted(part.order.tolist()) == list(range(4000))  # every row in exactly one list
    found = total = 0
    for i in rng.choice(4000, 40, replace=False):
        exact = {e for e, _s in m.nearest_events(vecs[i], 10, exact=True)}
        listed = m.nearest_events(vecs[i], 10)
        assert listed[0][0] == i  # a stored vector finds itself
        found += len(exact & {e for e, _s in listed})
        total += len(exact)
    assert found / total >= 0.8


def test_rows_added_after_the_lists_are_searched_and_then_listed(
    tmp_path: Path, small_thresholds: None
) -> None:
    rng = np.random.default_rng(5)
    vecs = _clustered(rng, 2000, rng.normal(size=(20, DIM)))
    store = _store(tmp_path, vecs)
    m = Matrix()
    m.refresh(store, DIM, partition=True)
    assert m.partition is not None and m.partition.rows == 2000
    odd = np.zeros((1, DIM), dtype=np.float32)
    odd[0, 0] = 1.0
    _add(store, odd, 9000)
    m.refresh(store, DIM)
    assert m.nearest_events(odd[0], 1)[0][0] == 9000  # not in any list yet: scanned as a newer row
    _add(store, _clustered(rng, 600, rng.normal(size=(5, DIM))), 10000)
    m.refresh(store, DIM, partition=True)  # 601 new rows > a quarter: the lists are made again
    assert m.partition is not None and m.partition.rows == 2601
    assert m.nearest_events(odd[0], 1)[0][0] == 9000


def test_a_deletion_reloads_and_drops_the_lists(tmp_path: Path, small_thresholds: None) -> None:
    rng = np.random.default_rng(6)
    vecs = _clustered(rng, 1500, rng.normal(size=(10, DIM)))
    store = _store(tmp_path, vecs)
    m = Matrix()
    m.refresh(store, DIM, partition=True)
    assert m.partition is not None
    store.use_model("test:other", DIM)  # another model: the store is emptied
    _add(store, vecs[:10], 0)
    m.refresh(store, DIM)
    assert m.partition is None and m.rows == 10
    assert {e for e, _s in m.nearest_events(vecs[3], 3)} <= set(range(10))


@pytest.mark.parametrize("dots", ["numkong", "numpy"])
def test_int8_and_float_scorers_find_the_same_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dots: str
) -> None:
    """The search's scorer (numkong's int8 products with the query rounded to int8, or numpy's
    float blocks without it) ranks as the exact float search does, up to the query's rounding."""
    if dots == "numkong":
        pytest.importorskip("numkong", reason="numkong is part of the semantic extra")
    else:
        monkeypatch.setattr(knn, "_NUMKONG", False)
    rng = np.random.default_rng(7)
    vecs = _clustered(rng, 3000, rng.normal(size=(40, DIM)))
    store = _store(tmp_path, vecs)
    matrix = Matrix()
    matrix.refresh(store, DIM)
    agree = []
    for q in vecs[rng.choice(len(vecs), 25, replace=False)] + 0.1 * rng.normal(size=(25, DIM)).astype(
        np.float32
    ):
        exact = matrix.nearest_events(q, 10, exact=True)
        found = matrix.nearest_events(q, 10)
        assert [e for e, _ in found] and found == sorted(found, key=lambda p: -p[1])
        # the same cosines, within int8 rounding of the query
        by_event = dict(exact)
        for eid, score in found:
            if eid in by_event:
                assert abs(score - by_event[eid]) < 0.02
        agree.append(len({e for e, _ in exact} & {e for e, _ in found}) / 10)
    assert sum(agree) / len(agree) >= 0.9
    if dots == "numkong":
        assert knn._int8_dots() is not None
