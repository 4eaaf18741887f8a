"""Snippets made in Python for word and phrase hits mark what FTS5's ``snippet()`` would mark.

Search used to ask FTS5 for every hit's snippet, which tokenizes the whole column again; the
snippet now comes from agtaild.index.text.highlight_pattern over the stored text, and FTS5
only makes the ones that pattern cannot find (words matched through folded diacritics).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.index.text import MARK_END, MARK_START, compile_query, find_phrases, highlight_pattern
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

TEXTS = [
    "The JSON-RPC daemon answers over a unix socket",
    "the json rpc Daemon restarted; json-rpc_daemon again",
    "a rare_result_word appears here " + "filler " * 40,
    "done with the café rewrite",
    "Refactor the parser, then refactor the parser's tests",
    "prefixes: trigram trigrams trig",
    "日本json is one token for the tokenizer, json alone is another",
]

QUERIES = [
    ("json rpc daemon", "phrase"),
    ("daemon", "phrase"),
    ("rare_result_word", "phrase"),
    ("cafe", "phrase"),
    ("refactor the parser", "phrase"),
    ("trig", "prefix"),
    ("the parser", "prefix"),
    ("parser refactor", "words"),
    ("json", "phrase"),
    ("JSON RPC", "phrase"),
]


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    root = tmp_path / "root"
    lines = [toy_line(t="meta", id="S1", cwd="/home/me/p")]
    for i, text in enumerate(TEXTS):
        lines.append(toy_line(t="msg", role="user", text=text, ts=f"2026-02-01T00:00:{i:02d}Z"))
        lines.append(toy_line(t="tool", id=f"c{i}", name="Bash", input={"command": "ls"}))
        lines.append(toy_line(t="result", id=f"c{i}", output="output line\n" + text))
    write_session(root / "S1.jsonl", lines)
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


def marked(snippet: str) -> list[str]:
    return [m.lower() for m in re.findall(f"{MARK_START}(.*?){MARK_END}", snippet)]


def fts_marked(svc: Service, words: str, rowid: int) -> list[str]:
    db = svc._db  # the service's own connection: FTS5's answer for the same row
    row = db.execute(
        f"SELECT snippet(events_fts, -1, '{MARK_START}', '{MARK_END}', '…', 64) FROM events_fts"
        " WHERE events_fts MATCH ? AND rowid = ?",
        (words, rowid),
    ).fetchone()
    return marked(row[0])


@pytest.mark.parametrize(("q", "mode"), QUERIES)
def test_snippets_mark_what_fts5_marks(svc: Service, q: str, mode: str) -> None:
    query = compile_query(q, mode)
    assert query.words is not None
    hits: list[dict[str, Any]] = svc.call("search", {"q": q, "mode": mode, "limit": 100})["hits"]
    ids = [
        r[0] for r in svc._db.execute("SELECT rowid FROM events_fts WHERE events_fts MATCH ?", (query.words,))
    ]
    assert len(hits) == len(ids) > 0
    for hit in hits:
        ours = marked(hit["snippet"])
        assert ours, (q, hit["snippet"])
        row = svc._db.execute(
            "SELECT id FROM events WHERE session_id = (SELECT id FROM sessions WHERE sid = ?) AND seq = ?",
            (hit["session"]["id"], hit["event"]["seq"]),
        ).fetchone()
        theirs = fts_marked(svc, query.words, row[0])
        # FTS5 marks every match in its window; ours marks those in a shorter window, in order.
        assert set(ours) <= set(theirs), (q, ours, theirs)


def test_pattern_follows_the_tokenizer() -> None:
    def found(q: str, text: str, mode: str = "phrase") -> list[str]:
        pattern = highlight_pattern(compile_query(q, mode))
        assert pattern is not None
        found = find_phrases(pattern, text)
        assert found is not None
        return found

    assert found("json rpc daemon", "JSON-RPC  daemon; json rpc daemons") == ["JSON-RPC  daemon"]
    assert found("rare_result_word", "x rare_result_word y") == ["rare_result_word"]
    assert found("json", "日本json json_x") == ["json"]  # 日本json is one token
    assert found("trig", "trigram trig xtrig", "prefix") == ["trigram", "trig"]
    assert found("the trig", "the trigram", "prefix") == ["the trigram"]
    assert found("parser refactor", "refactor the parser", "words") == ["refactor", "parser"]
    assert found("json", "at the start: json") == ["json"]
    assert found("json", "json") == ["json"]
    assert found("a b", "A_B ab a-b") == ["A_B", "a-b"]
    # Lower-casing "İ" makes two characters: no positions to trust, FTS5 makes that snippet.
    pattern = highlight_pattern(compile_query("json"))
    assert pattern is not None and find_phrases(pattern, "İ json") is None
    assert highlight_pattern(compile_query("日本語")) is None
    assert highlight_pattern(compile_query("x", "regex")) is None


def test_diacritics_fall_back_to_fts5(svc: Service) -> None:
    # "cafe" finds "café" through the tokenizer's folding; the pattern does not: FTS5 marks it.
    hits = svc.call("search", {"q": "cafe", "limit": 100})["hits"]
    assert hits and all(marked(h["snippet"]) for h in hits)
