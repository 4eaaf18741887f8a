"""One-phrase queries ranked without bm25()'s second pass (agtaild/index/phrase_rank.py): the
scores must be the very doubles FTS5's bm25() returns, so the order, the pages and the
cursors are the same whichever way a page was ranked."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import load_config
from agtaild.index import phrase_rank
from agtaild.index.phrase_rank import MAX_ROWS, phrase_instances, rank_hits, table_totals
from agtaild.index.search import WEIGHTS, SearchScope, _one_phrase_page
from agtaild.index.text import compile_query
from agtaild.index.varint import read, read_all, total
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

BM25 = f"bm25(events_fts, {', '.join(map(str, WEIGHTS))})"

#: Text that makes a tokenizer imitation go wrong: case, diacritics FTS5 folds away, symbols
#: it keeps inside a token (So: ✓, emoji), CJK runs, underscores and punctuation between
#: words, overlapping occurrences, the phrase in every column and several times per row.
TRICKY = [
    "Parse the JSON rpc DAEMON config; json-rpc daemon restarted (json_rpc daemon)",
    "jsón rpc daémon — JSON RPC Daemon✓ and json rpc daemon✓ then json rpc daemons",
    "go go go go: the go go loop",
    "日本語 json rpc daemon テスト json rpc daemon 索引",
    "cafe café CAFÉ caféteria cafes",
    "👩‍💻json rpc daemon👩‍💻 json rpc daemon 🎉",
    "x" * 300 + " json rpc daemon " + "filler " * 400,
    "trigger trig TRIG trigram trïgger strig",
    "İstanbul json rpc daemon ǅemal ß json rpc daemon",
]
QUERIES = [
    ("json rpc daemon", "phrase"),
    ("JSON-RPC daemon", "phrase"),
    ("go go", "phrase"),
    ("go", "phrase"),
    ("cafe", "phrase"),
    ("json rpc", "prefix"),
    ("trig", "prefix"),
    ("daemon", "words"),
    ("filler filler", "phrase"),
]


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    root = tmp_path / "root"
    rng = random.Random(3)
    for n in range(6):  # at most 108 hits for any phrase: under MAX_ROWS
        lines = [toy_line(t="meta", id=f"S{n}", cwd=f"/home/me/p{n % 3}")]
        for i in range(6):
            ts = f"2026-02-{1 + i:02d}T00:00:{n:02d}Z"
            pick = rng.sample(TRICKY, 3)
            lines.append(toy_line(t="msg", role=rng.choice(["user", "assistant"]), text=pick[0], ts=ts))
            lines.append(toy_line(t="tool", id=f"{n}-{i}", name="Bash", input={"command": pick[1]}, ts=ts))
            lines.append(
                toy_line(t="result", id=f"{n}-{i}", output=pick[2] + " " + "word " * rng.randint(0, 60))
            )
            # Rows without the phrases, so that their IDF is not the floor bm25 puts under it.
            lines.append(toy_line(t="msg", role="assistant", text="nothing here " * rng.randint(1, 9), ts=ts))
            lines.append(toy_line(t="msg", role="user", text="plain words", ts=ts))
        write_session(root / f"S{n}.jsonl", lines)
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


def bm25_rows(db: sqlite3.Connection, match: str) -> list[tuple[int, float]]:
    sql = f"SELECT rowid, {BM25} AS s FROM events_fts WHERE events_fts MATCH ? ORDER BY s, rowid"
    return [(r[0], r[1]) for r in db.execute(sql, (match,))]


def fast_rows(db: sqlite3.Connection, q: str, mode: str) -> list[tuple[int, float]] | None:
    query = compile_query(q, mode)
    assert query.words is not None and len(query.runs) == 1
    ids = [r[0] for r in db.execute("SELECT rowid FROM events_fts WHERE events_fts MATCH ?", (query.words,))]
    scores = rank_hits(db, ids, query.runs[0], query.prefix_last, WEIGHTS)
    return None if scores is None else sorted(scores.items(), key=lambda r: (r[1], r[0]))


@pytest.mark.parametrize(("q", "mode"), QUERIES)
def test_scores_are_bm25s_own(svc: Service, q: str, mode: str) -> None:
    db = svc._reader()
    expected = bm25_rows(db, compile_query(q, mode).words or "")
    assert expected, f"the fixture should hold {q!r}"
    # The same doubles, not merely the same order (x86-64: no fused multiply-add in FTS5's C).
    assert fast_rows(db, q, mode) == expected


def test_occurrences_are_fts5s(svc: Service) -> None:
    rows = [("Json RPC daemon✓ json rpc daemon", None, "go go go"), ("jsón rpc-daemon", "go", None)]
    assert phrase_instances(rows, ["json", "rpc", "daemon"], False) == [[(0, 3)], [(0, 0)]]
    assert phrase_instances(rows, ["go", "go"], False) == [[(2, 0), (2, 1)], []]
    assert phrase_instances(rows, ["rpc", "dae"], True) == [[(0, 1), (0, 4)], [(0, 1)]]


def test_sizes_come_from_fts5s_own_records(svc: Service) -> None:
    db = svc._reader()
    rows, tokens = table_totals(db)
    blobs = [bytes(r[0]) for r in db.execute("SELECT sz FROM events_fts_docsize")]
    sizes = [sum(read_all(b)) for b in blobs]
    assert rows == len(sizes) == db.execute("SELECT count(*) FROM events").fetchone()[0]
    assert tokens == sum(sizes) > 0
    assert [total(b) for b in blobs] == sizes


def test_varints_are_sqlites() -> None:
    assert read_all(bytes([0x81, 0x00, 0x05, 0xFF, 0x7F])) == [128, 5, 16383]
    assert read_all(bytes([0xFF] * 8 + [0x01])) == [(1 << 64) - 255]
    assert read_all(bytes([0x05, 0x81])) == [5, 1]  # cut off: read what is there, no error
    assert read(bytes([0x05, 0x81, 0x01, 0x7F]), 1) == (129, 3)
    with pytest.raises(IndexError):  # a record cut short is not read as a number
        read(bytes([0x05, 0x81]), 1)
    assert total(bytes([0x05, 0x7F, 0x00])) == 132  # one byte each: the sum of the bytes
    assert total(bytes([0x05, 0x81, 0x00, 0x81])) == 5 + 128 + 1
    rng = random.Random(3)
    for _ in range(2000):  # any bytes: the sum of what read_all reads
        blob = bytes(
            rng.choice((rng.randrange(128), rng.randrange(128, 256))) for _ in range(rng.randrange(20))
        )
        assert total(blob) == sum(read_all(blob)), blob


def test_pages_match_the_bm25_query(svc: Service) -> None:
    """Keyset pages of the fast path, with and without a filter, against the bm25() SQL."""
    db = svc._reader()
    base = (
        f"SELECT f.rowid, {BM25} AS s FROM events_fts f JOIN events e ON e.id = f.rowid"
        " JOIN sessions s2 ON s2.id = e.session_id WHERE events_fts MATCH ?"
    )
    cases: list[tuple[SearchScope, str, list[Any]]] = [
        (SearchScope(), "", []),
        (SearchScope(cwd="/home/me/p1"), " AND s2.cwd = ?", ["/home/me/p1"]),
        (SearchScope(kind="tool_use"), " AND e.kind = ?", ["tool_use"]),
    ]
    for scope, cond, args in cases:
        expected = [
            (r[0], r[1])
            for r in db.execute(base + cond + " ORDER BY s, f.rowid", ['"json rpc daemon"', *args])
        ]
        assert expected and expected[0][1] < -0.01  # a real IDF, not the floor bm25 puts under it
        got: list[tuple[int, float]] = []
        after = None
        while True:
            page = _one_phrase_page(
                db, compile_query("json rpc daemon"), *scope.event_sql(), limit=7, after=after
            )
            assert page is not None
            got += page[:7]
            if len(page) <= 7:
                break
            after = (page[6][1], page[6][0])
        assert got == expected


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"cwd": "/home/me/p1"},
        {"kind": "tool_use"},
        {"since": "2026-02-04"},
        {"session": "toy:S3"},
        {"mode": "prefix"},
    ],
    ids=repr,
)
def test_service_pages_are_the_same_either_way(
    svc: Service, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def pages() -> list[dict[str, Any]]:
        out, cursor = [], None
        while True:
            doc = svc.call(
                "search",
                {"q": "json rpc daemon", "limit": 4, **params, **({"cursor": cursor} if cursor else {})},
            )
            out.append(doc)
            cursor = doc["next"]
            if not cursor:
                return out

    fast = pages()
    monkeypatch.setattr(phrase_rank, "MAX_ROWS", 0)  # every query goes to bm25()
    slow = pages()
    assert fast == slow and fast[0]["hits"]


def test_big_or_mixed_queries_keep_bm25(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    db = svc._reader()
    scope = SearchScope()
    assert (
        _one_phrase_page(db, compile_query("json daemon", "words"), *scope.event_sql(), limit=5, after=None)
        is None
    )
    assert _one_phrase_page(db, compile_query("json テスト"), *scope.event_sql(), limit=5, after=None) is None
    assert _one_phrase_page(db, compile_query("word"), *scope.event_sql(), limit=5, after=None) is not None
    monkeypatch.setattr(phrase_rank, "MAX_CHARS", 10)
    assert _one_phrase_page(db, compile_query("word"), *scope.event_sql(), limit=5, after=None) is None


def test_the_sample_corpus_ranks_as_bm25(tmp_path: Path, corpus: Path) -> None:
    """Phrases taken from real transcripts (every language and symbol they hold)."""
    roots = [
        f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}",
        f"codex={corpus / 'codex' / 'agent-sessions' / 'sessions'}",
    ]
    service = Service(load_config(data_dir=str(tmp_path / "data"), root_options=roots, only_roots=True))
    try:
        service.update_index()
        db = service._reader()
        rng = random.Random(11)
        ids = [
            r[0]
            for r in db.execute("SELECT id FROM events WHERE text IS NOT NULL OR tool_result IS NOT NULL")
        ]
        tried = ranked = 0
        for eid in rng.sample(ids, min(150, len(ids))):
            cols = [
                c
                for c in db.execute(
                    "SELECT text, tool_input, tool_result FROM events WHERE id = ?", (eid,)
                ).fetchone()
                if c
            ]
            words = rng.choice(cols).split()
            start = rng.randrange(len(words)) if words else 0
            q = " ".join(w for w in words[start : start + rng.randint(1, 3)] if w.isascii())
            for mode in ("phrase", "prefix"):
                query = compile_query(q, mode)
                if not query.words or query.wide or len(query.runs) != 1:
                    continue
                tried += 1
                ids_found = [
                    r[0]
                    for r in db.execute(
                        "SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT ?",
                        (query.words, MAX_ROWS + 1),
                    )
                ]
                scores = rank_hits(db, ids_found, query.runs[0], query.prefix_last, WEIGHTS)
                if scores is None:
                    continue
                ranked += 1
                assert sorted(scores.items(), key=lambda r: (r[1], r[0])) == bm25_rows(db, query.words), (
                    q,
                    mode,
                )
        assert tried >= 100 and ranked >= tried // 2, (tried, ranked)
    finally:
        service.close()


def test_a_row_that_disagrees_with_the_index_goes_to_bm25(svc: Service) -> None:
    """FTS5 matched a row whose stored text no longer holds the phrase (or that is gone):
    the phrase's count would be wrong, so bm25() ranks the query instead."""
    reader = svc._reader()
    query = compile_query("json rpc daemon")
    ids = [
        r[0] for r in reader.execute("SELECT rowid FROM events_fts WHERE events_fts MATCH ?", (query.words,))
    ]
    assert rank_hits(reader, ids, query.runs[0], False, WEIGHTS) is not None
    assert rank_hits(reader, [*ids, 10**9], query.runs[0], False, WEIGHTS) is None
    expected = bm25_rows(reader, query.words or "")
    writer = sqlite3.connect(svc.config.index_path)
    with writer:  # behind FTS5's back: the index still lists the row
        writer.execute(
            "UPDATE events SET text = 'gone', tool_input = NULL, tool_result = NULL WHERE id = ?", (ids[0],)
        )
    writer.close()
    assert rank_hits(reader, ids, query.runs[0], False, WEIGHTS) is None
    assert _one_phrase_page(reader, query, *SearchScope().event_sql(), limit=5, after=None) is None
    assert bm25_rows(reader, query.words or "") == expected  # what the service then serves
