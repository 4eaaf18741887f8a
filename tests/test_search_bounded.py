"""Ranked search on a big index (agtaild/index/bounded_rank.py), run here on a small one with
RANK_SPAN and the window lowered: the window's order against bm25 computed from scratch in
the test, older matches newest first, pages, prefixes, one session, regexes, CJK, and the
order below RANK_SPAN left as it was."""

from __future__ import annotations

import math
import random
import re
import sqlite3
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import load_config
from agtaild.index import bounded_rank, fts_terms
from agtaild.index import search as search_module
from agtaild.index.bounded_rank import ascii_counter
from agtaild.index.search import WEIGHTS
from agtaild.index.text import compile_query
from agtaild.index.varint import read_all
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, write_session

SPAN = 150
WINDOW = 12
WORDS = ["alpha", "beta", "gamma", "parser", "session", "sessions", "sessile", "token", "usage", "cost"]
#: Words that touch the phrases without being them (unicode61 keeps letters, symbols and
#: marks in a token; dashes, underscores and punctuation separate).
ODD = [
    "sessioné",
    "ésession",
    "session✓",
    "session—parser",
    "session_parser",
    "日本語",
    "テスト",
    "索引テスト",
    "—",
    "…",
]


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 40))]
    for _ in range(rng.randint(0, 3)):
        words.insert(rng.randint(0, len(words)), rng.choice(ODD))
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), "refactor the parser")
    return " ".join(words)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    import agtaild.adapters as registry

    mp = pytest.MonkeyPatch()
    mp.setattr(registry, "_extra", [ToyAdapter()])
    registry.all_adapters.cache_clear()
    tmp = tmp_path_factory.mktemp("bounded")
    root = tmp / "root"
    rng = random.Random(7)
    for n in range(12):
        lines = [toy_line(t="meta", id=f"S{n:02d}", cwd=f"/home/me/p{n % 3}")]
        for i in range(9):
            ts = f"2026-03-{1 + n:02d}T00:{i:02d}:00Z"
            lines.append(toy_line(t="msg", role=rng.choice(["user", "assistant"]), text=_text(rng), ts=ts))
            lines.append(toy_line(t="tool", id=f"{n}-{i}", name="Bash", input={"command": _text(rng)}, ts=ts))
            lines.append(toy_line(t="result", id=f"{n}-{i}", output=_text(rng) + " " + _text(rng)))
        write_session(root / f"S{n:02d}.jsonl", lines)
    service = Service(toy_config(tmp, root))
    try:
        service.update_index()
        yield service
    finally:
        service.close()
        mp.undo()
        registry.all_adapters.cache_clear()


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_rank, "RANK_SPAN", SPAN)
    monkeypatch.setattr(bounded_rank, "WINDOW", WINDOW)


# -- bm25 from scratch ---------------------------------------------------------------------


def _tokens(text: str | None, fold: bool = True) -> list[str]:
    """unicode61 (remove_diacritics 2, categories L* N* Co So) as the test reads it (without
    ``fold``: the tokens as written, lower case)."""
    if not text:
        return []
    out, cur = [], []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat[0] in "LNM" or cat in ("Co", "So"):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    if not fold:
        return [tok.lower() for tok in out]
    folded = []
    for tok in out:
        base = "".join(c for c in unicodedata.normalize("NFKD", tok.lower()) if not unicodedata.combining(c))
        folded.append(base)
    return folded


def _occurrences(tokens: list[str], phrase: list[str], prefix: bool) -> int:
    n = 0
    for i in range(len(tokens) - len(phrase) + 1):
        head = all(tokens[i + j] == phrase[j] for j in range(len(phrase) - 1))
        last = tokens[i + len(phrase) - 1]
        if head and (last.startswith(phrase[-1]) if prefix else last == phrase[-1]):
            n += 1
    return n


def brute_bm25(db: sqlite3.Connection, ids: list[int], phrase: list[str], prefix: bool = False) -> list[int]:
    """``ids`` in bm25 order (FTS5's formula: k1 1.2, b 0.75, the column weights), every
    number computed here from the events' text; the IDF over the whole table."""
    rows = {r[0]: r[1:] for r in db.execute("SELECT id, text, tool_input, tool_result FROM events")}
    tokens = {eid: [_tokens(c) for c in cols] for eid, cols in rows.items()}
    sizes = {r[0]: sum(read_all(bytes(r[1]))) for r in db.execute("SELECT id, sz FROM events_fts_docsize")}
    for eid, cols in tokens.items():  # the test's tokenizer is FTS5's on this text
        assert sum(len(c) for c in cols) == sizes[eid], rows[eid]
    avgdl = sum(sizes.values()) / len(sizes)
    hits = sum(1 for cols in tokens.values() if any(_occurrences(c, phrase, prefix) for c in cols))
    idf = max(math.log((len(sizes) - hits + 0.5) / (hits + 0.5)), 1e-6)
    scores = {}
    for eid in ids:
        freq = sum(w * _occurrences(c, phrase, prefix) for w, c in zip(WEIGHTS, tokens[eid], strict=True))
        scores[eid] = -idf * freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * sizes[eid] / avgdl))
    return sorted(ids, key=lambda eid: (scores[eid], eid))


# -- helpers ---------------------------------------------------------------------------------


def _walk(
    db: sqlite3.Connection, match: str, lo: int, hi: int, n: int, table: str = "events_fts"
) -> list[int]:
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?"
    return [r[0] for r in db.execute(sql, (match, lo, hi, n))]


def _top(db: sqlite3.Connection) -> int:
    top = db.execute("SELECT max(id) FROM events").fetchone()[0]
    assert top > SPAN
    return int(top)


def _ids(svc: Service, params: dict[str, Any]) -> list[int]:
    """Every hit of the search, page after page, as event ids."""
    db = svc._reader()
    where = {
        (sid, seq): eid
        for eid, sid, seq in db.execute(
            "SELECT e.id, s.sid, e.seq FROM events e JOIN sessions s ON s.id = e.session_id"
        )
    }
    out: list[int] = []
    cursor = None
    while True:
        doc = svc.call("search", {"limit": 5, **params, **({"cursor": cursor} if cursor else {})})
        out += [where[(h["session"]["id"], h["event"]["seq"])] for h in doc["hits"]]
        cursor = doc["next"]
        if not cursor:
            return out


def _all(db: sqlite3.Connection, match: str, table: str = "events_fts") -> list[int]:
    return [
        r[0]
        for r in db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC", (match,))
    ]


# -- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "phrase"),
    [
        ("session", ["session"]),
        ("parser", ["parser"]),
        ("refactor the parser", ["refactor", "the", "parser"]),
    ],
)
def test_window_is_bm25s_order_and_older_matches_follow_newest_first(
    svc: Service, bounded: None, q: str, phrase: list[str]
) -> None:
    db = svc._reader()
    top = _top(db)
    match = '"' + q + '"'
    window = _walk(db, match, top - SPAN + 1, top, WINDOW)
    everything = _all(db, match)
    assert len(everything) > len(window) > 3
    got = _ids(svc, {"q": q})
    assert got[: len(window)] == brute_bm25(db, window, phrase)
    edge = window[-1] if len(window) == WINDOW else top - SPAN + 1
    assert got[len(window) :] == [eid for eid in everything if eid < edge]  # newest first
    assert sorted(got) == sorted(everything)  # every match, once


def test_scores_are_fts5s_bm25_times_a_constant(svc: Service, bounded: None) -> None:
    """For one phrase the estimated IDF is a common factor: bm25()'s scores over the window
    divided by the bounded ones are one number."""
    db = svc._reader()
    top = _top(db)
    q = compile_query("session")
    rows = search_module.ranked_rows(db, q, search_module.SearchScope(), limit=WINDOW)
    window = _walk(db, '"session"', top - SPAN + 1, top, WINDOW)
    assert sorted(r[0] for r in rows[:WINDOW]) == sorted(window)
    weights = ", ".join(map(str, WEIGHTS))
    marks = ",".join(map(str, window))
    fts = dict(
        db.execute(
            f"SELECT rowid, bm25(events_fts, {weights}) FROM events_fts WHERE events_fts MATCH ? AND rowid IN ({marks})",
            ('"session"',),
        ).fetchall()
    )
    ratios = {round(fts[eid] / score, 9) for eid, score in rows[:WINDOW]}
    assert len(ratios) == 1 and next(iter(ratios)) > 0


def test_pages_walk_the_same_order(svc: Service, bounded: None) -> None:
    one_page = svc.call("search", {"q": "session", "limit": 1000})["hits"]
    paged = []
    cursor = None
    while True:
        doc = svc.call("search", {"q": "session", "limit": 7, **({"cursor": cursor} if cursor else {})})
        paged += doc["hits"]
        cursor = doc["next"]
        if not cursor:
            break
    assert [(h["session"]["id"], h["event"]["seq"]) for h in paged] == [
        (h["session"]["id"], h["event"]["seq"]) for h in one_page
    ]


def test_prefix_is_its_terms_and_ranked_as_bm25(svc: Service, bounded: None) -> None:
    db = svc._reader()
    own = sqlite3.connect(db.execute("PRAGMA database_list").fetchone()[2])
    try:
        own.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, events_fts, 'row')")
        vocab = {
            r[0] for r in own.execute("SELECT term FROM temp.vocab WHERE term >= 'sess' AND term < 'sest'")
        }
    finally:
        own.close()
    listed = fts_terms.prefix_terms(db, "sess")
    assert (
        listed is not None
        and set(listed) == vocab
        and {"session", "sessions", "sessile", "sessione"} <= vocab
    )
    expr = fts_terms.expand_prefix(db, ["sess"])
    assert expr is not None and set(re.findall(r'"([^"]+)"', expr)) == vocab
    top = _top(db)
    window = _walk(db, '"sess" *', top - SPAN + 1, top, WINDOW)
    got = _ids(svc, {"q": "sess", "mode": "prefix"})
    assert got[:WINDOW] == brute_bm25(db, window, ["sess"], prefix=True)
    assert sorted(got) == sorted(_all(db, '"sess" *'))


def test_a_prefix_of_many_terms_keeps_the_most_frequent(
    svc: Service, bounded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = svc._reader()
    monkeypatch.setattr(fts_terms, "MAX_TERMS", 1)
    sizes = fts_terms.prefix_terms(db, "sess")
    assert sizes is not None
    counts = {
        t: db.execute("SELECT count(*) FROM events_fts WHERE events_fts MATCH ?", (f'"{t}"',)).fetchone()[0]
        for t in sizes
    }
    assert (
        fts_terms.expand_prefix(db, ["sess"]) == '("session")'
        and max(counts, key=lambda t: counts[t]) == "session"
    )
    hits = _ids(svc, {"q": "sess", "mode": "prefix"})
    assert hits and set(hits) <= set(_all(db, '"session"'))


def test_one_session_is_ranked_in_its_own_ids(svc: Service, bounded: None) -> None:
    db = svc._reader()
    top = _top(db)
    sid, name, lo, hi = db.execute(
        "SELECT s.id, s.sid, min(e.id), max(e.id) FROM sessions s JOIN events e ON e.session_id = s.id"
        " GROUP BY s.id ORDER BY min(e.id) LIMIT 1"
    ).fetchone()
    assert hi < top - SPAN  # outside the span of the whole index
    mine = [eid for eid in _all(db, '"parser"') if lo <= eid <= hi]
    assert len(mine) > WINDOW
    got = _ids(svc, {"q": "parser", "session": f"toy:{name}"})
    window = mine[:WINDOW]
    assert got[:WINDOW] == brute_bm25(db, window, ["parser"])
    assert got[WINDOW:] == mine[WINDOW:]
    marks = ",".join(map(str, got))
    assert db.execute(
        f"SELECT count(*) FROM events WHERE session_id = ? AND id IN ({marks})", (sid,)
    ).fetchone()[0] == len(got)


def test_regex_finds_the_same_events_newest_first(
    svc: Service, bounded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"q": r"refactor\s+the\s+pars\w+", "mode": "regex"}
    expanded = _ids(svc, params)
    assert fts_terms.every_term(svc._reader(), "pars") == '("parser")'
    monkeypatch.setattr(fts_terms, "every_term", lambda _db, _prefix: None)  # FTS5's prefix query
    assert _ids(svc, params) == expanded and expanded == sorted(expanded, reverse=True) and len(expanded) > 3


def test_cjk_words_are_ranked_as_the_trigram_bm25(svc: Service, bounded: None) -> None:
    db = svc._reader()
    top = _top(db)
    window = _walk(db, '"テスト"', top - SPAN + 1, top, WINDOW, "events_cjk")
    assert len(window) > 2
    weights = ", ".join(map(str, WEIGHTS[:2]))
    marks = ",".join(map(str, window))
    expected = [
        r[0]
        for r in db.execute(
            f"SELECT rowid, bm25(events_cjk, {weights}) AS s FROM events_cjk WHERE events_cjk MATCH ? AND rowid IN ({marks})"
            " ORDER BY s, rowid",
            ('"テスト"',),
        )
    ]
    got = _ids(svc, {"q": "テスト"})
    assert got[: len(window)] == expected
    assert sorted(got) == sorted(_all(db, '"テスト"', "events_cjk"))


def test_several_phrases_match_them_all(svc: Service, bounded: None) -> None:
    db = svc._reader()
    got = _ids(svc, {"q": "token cost", "mode": "words"})
    assert sorted(got) == sorted(_all(db, '"token" AND "cost"'))


def test_below_the_span_nothing_changes(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """With RANK_SPAN above the index's ids the bounded way is never taken: bm25() over every
    match (below RANK_WINDOW), by hand."""

    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise AssertionError("the bounded way ran below RANK_SPAN")

    monkeypatch.setattr(bounded_rank, "rows", refuse)
    db = svc._reader()
    weights = ", ".join(map(str, WEIGHTS))
    for q, mode in (
        ("session", "phrase"),
        ("refactor the parser", "phrase"),
        ("sess", "prefix"),
        ("token cost", "words"),
    ):
        match = compile_query(q, mode).words
        expected = [
            r[0]
            for r in db.execute(
                f"SELECT rowid, bm25(events_fts, {weights}) AS s FROM events_fts WHERE events_fts MATCH ? ORDER BY s, rowid",
                (match,),
            )
        ]
        assert _ids(svc, {"q": q, "mode": mode}) == expected


def test_the_counter_is_unicode61s_view() -> None:
    count = ascii_counter(["session"], False)
    assert count("Session, session_x SESSION—x".encode()) == 3
    assert count(b"sessions subsession session2") == 0
    assert count("sessioné ésession session✓ 日本語session".encode()) == 0
    assert count("…session… «session» テスト session".encode()) == 3
    assert ascii_counter(["go", "go"], False)(b"go go go: the go go loop") == 3
    assert ascii_counter(["json", "rpc"], False)("json—rpc json_rpc jsonrpc json✓rpc".encode()) == 2
    assert ascii_counter(["sess"], True)("session sessile sessé ésess".encode()) == 3


def test_one_word_is_counted_as_the_tokens_hold_it() -> None:
    """The counter of one word (and of one prefix) against the test's own unicode61 over
    random texts: words glued to each other, to letters of other scripts, to symbols, marks
    and separators, at the start and the end, upper and lower case."""
    rng = random.Random(11)
    glue = ["", "", " ", "  ", "—", "_", "…", "✓", "é", "日", "\u0301", "-", ".", "\n", "«", "2"]
    pieces = [*WORDS, *ODD, "Session", "SESSION", "sessionsession", "sess", "ss", "ion", "Sessé"]
    checked = 0
    for _ in range(400):
        text = "".join(rng.choice(pieces) + rng.choice(glue) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.5:
            text = rng.choice(glue) + text
        tokens, written = _tokens(text), _tokens(text, fold=False)
        for word in ("session", "parser", "sess", "s", "ion"):
            for prefix in (False, True):

                def hit(token: str, word: str = word, prefix: bool = prefix) -> bool:
                    return token.startswith(word) if prefix else token == word

                # unicode61 folds é to e and drops marks ("sessé" is "sesse" to FTS5): the
                # counter, ASCII only, does not see such a token as the word (documented)
                if any(a != b and (hit(a) or hit(b)) for a, b in zip(tokens, written, strict=True)):
                    continue
                expected = _occurrences(tokens, [word], prefix)
                assert ascii_counter([word], prefix)(text.encode()) == expected, (text, word, prefix)
                checked += 1
    assert checked > 3000


def test_the_wide_counter_counts_characters() -> None:
    """Words of letters without case are searched in the bytes; others case folded, as text."""
    assert bounded_rank.wide_counter("テスト")("テストテスト 索引テスト テス ト".encode()) == 3
    assert bounded_rank.wide_counter("ススス")("スススス ススス".encode()) == 3  # overlapping
    assert bounded_rank.wide_counter("ーーー")("ーーーー".encode()) == 2  # Lm, overlapping
    assert bounded_rank.wide_counter("École")("école ÉCOLE Ecole".encode()) == 2
    assert bounded_rank.wide_counter("テスト")(b"\xff\xfe") == 0  # bytes that are not UTF-8


def test_real_transcripts_are_counted_as_fts5_counts(tmp_path: Path, corpus: Path) -> None:
    """Phrases taken from real transcripts (every language and symbol they hold): the bounded
    scores of all their hits are bm25()'s times one factor (the counter's frequencies and the
    sizes are FTS5's; only a phrase written with letters FTS5 folds, ``é`` for ``e``, would be
    missed, and these transcripts have none in the phrases drawn)."""
    roots = [
        f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}",
        f"codex={corpus / 'codex' / 'agent-sessions' / 'sessions'}",
    ]
    service = Service(load_config(data_dir=str(tmp_path / "data"), root_options=roots, only_roots=True))
    try:
        service.update_index()
        db = service._reader()
        rng = random.Random(5)
        ids = [
            r[0]
            for r in db.execute("SELECT id FROM events WHERE text IS NOT NULL OR tool_result IS NOT NULL")
        ]
        weights = ", ".join(map(str, WEIGHTS))
        tried, exact, unequal = 0, 0, []
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
                fts = dict(
                    db.execute(
                        f"SELECT rowid, bm25(events_fts, {weights}) FROM events_fts WHERE events_fts MATCH ? LIMIT 300",
                        (query.words,),
                    ).fetchall()
                )
                walk = bounded_rank.Walk("events_fts f", "f.rowid", [], [])
                walk.phrases = bounded_rank.ascii_phrases(query.runs, query.prefix_last)
                ours = bounded_rank.score(db, walk, list(fts), [1.0], WEIGHTS)
                ratios = {round(fts[i] / s, 9) if s else None for i, s in ours.items()}
                if len(ratios) == 1 and None not in ratios:
                    exact += 1
                else:
                    unequal.append((q, mode))
        assert tried >= 100 and exact == tried, unequal
    finally:
        service.close()


def test_the_terms_listed_are_fts5vocabs(svc: Service) -> None:
    """The terms read from FTS5's records are fts5vocab's, for prefixes of one term, of many,
    of none."""
    db = svc._reader()
    own = sqlite3.connect(db.execute("PRAGMA database_list").fetchone()[2])
    try:
        own.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, events_fts, 'row')")
        for prefix in ("s", "se", "sess", "p", "t", "a", "r", "x", "zz", "1", "ses"):
            high = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            vocab = {
                r[0]
                for r in own.execute(
                    "SELECT term FROM temp.vocab WHERE term >= ? AND term < ?", (prefix, high)
                )
            }
            listed = fts_terms.prefix_terms(db, prefix)
            assert listed is not None and set(listed) == vocab, prefix
    finally:
        own.close()
