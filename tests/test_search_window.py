"""Ranked search scores the newest RANK_WINDOW matches (agtaild.index.search): below that many
matches the order is bm25's over all of them; above it, bm25's order over the newest ones —
checked here with a small window against the same ranking done by hand in SQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import load_config
from agtaild.index import search as search_module
from agtaild.query.service import Service
from tests.conftest import CORPUS

WORD = "the"


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("window")
    shutil.copytree(CORPUS / "real" / "claude-2.1.197" / "projects", base / "claude")
    config = load_config(data_dir=str(base / "data"), only_roots=True, root_options=[f"claude-code={base / 'claude'}"])
    service = Service(config, workers=1)
    service.update_index()
    service.base = base
    yield service
    service.close()


def _by_hand(base: Path, window: int | None) -> list[tuple[str, int]]:
    db = sqlite3.connect(base / "data" / "index.sqlite3")
    try:
        weights = ", ".join(map(str, search_module.WEIGHTS))
        newest = f" ORDER BY rowid DESC LIMIT {window}" if window else ""
        rows = db.execute(
            f"SELECT rowid, bm25(events_fts, {weights}) FROM events_fts WHERE events_fts MATCH ?{newest}", (WORD,)
        ).fetchall()
        ranked = sorted(rows, key=lambda r: (r[1], r[0]))
        where = {eid: (sid, seq) for eid, sid, seq in db.execute(
            "SELECT e.id, s.sid, e.seq FROM events e JOIN sessions s ON s.id = e.session_id")}  # fmt: skip
        return [where[eid] for eid, _score in ranked]
    finally:
        db.close()


def _hits(svc: Any, limit: int) -> list[tuple[str, int]]:
    doc = svc.call("search", {"q": WORD, "limit": limit})
    return [(h["session"]["id"], h["event"]["seq"]) for h in doc["hits"]]


def test_below_the_window_the_order_is_bm25_over_every_match(svc: Any) -> None:
    everything = _by_hand(svc.base, None)
    assert 10 < len(everything) < search_module.RANK_WINDOW
    assert _hits(svc, 10) == everything[:10]


def test_above_the_window_the_newest_matches_are_ranked(svc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "RANK_WINDOW", 6)
    # A phrase in at most phrase_rank.MAX_ROWS rows is ranked whole by phrase_rank (fewer
    # than the window at its real size): make the word a common one here.
    monkeypatch.setattr(search_module.phrase_rank, "MAX_ROWS", 2)
    windowed = _by_hand(svc.base, 6)
    assert len(windowed) == 6 and windowed != _by_hand(svc.base, None)[:6]
    assert _hits(svc, 10) == windowed
    # Pages walk the same window: two pages of three are the six.
    first = svc.call("search", {"q": WORD, "limit": 3})
    second = svc.call("search", {"q": WORD, "limit": 3, "cursor": first["next"]})
    assert [(h["session"]["id"], h["event"]["seq"]) for h in first["hits"] + second["hits"]] == windowed
