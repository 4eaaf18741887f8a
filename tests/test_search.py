"""Search: literal queries that never error, CJK by substring, filters, ranking, keyset pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.errors import NotFound, UsageError
from agtaild.index.text import compile_query
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, sample_lines, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

NASTY = [
    '"',
    '""',
    '"unbalanced',
    "*",
    "**",
    "-",
    "--",
    "- alpha",
    "alpha -beta",
    "NEAR",
    "NEAR(alpha beta)",
    "alpha NEAR beta",
    "AND",
    "OR",
    "NOT",
    "alpha OR beta",
    "(",
    ")",
    "()",
    "{alpha}",
    "^alpha",
    "alpha:",
    "text:alpha",
    ":",
    "+",
    "'",
    "\\",
    "%",
    "_",
    "alpha*",
    "*alpha",
    "a" * 3,
    "\x00",
    "\n",
    "\t ",
    "",
    " ",
    "🎉",
    "🎉🎉",
    "👩‍💻",
    "日",
    "日本",
    "日本語",
    "テスト 失敗",
    "é",
    "café",
    "ß",
    "İ",
    "\u200b",
    "x" * 10_000,
    "日本" * 5000,
    "alpha " * 1700,
    '"' * 10_000,
    "𠀋",
    "\ud7ff",
    "?",
    "[",
    "]",
    "$",
    "@",
]


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    root = tmp_path / "root"
    write_session(root / "one" / "S1.jsonl", sample_lines("S1", 3))
    write_session(
        root / "two" / "S2.jsonl",
        [
            toy_line(t="meta", id="S2", cwd="/home/me/proj-two"),
            toy_line(
                t="msg",
                role="user",
                text="日本語のテスト文字列です。失敗の原因を調べて",
                ts="2026-02-01T00:00:00Z",
            ),
            toy_line(
                t="msg", role="assistant", text="done 🎉 with the café rewrite", ts="2026-02-01T00:00:01Z"
            ),
            toy_line(
                t="tool",
                id="c1",
                name="Bash",
                input={"command": "grep -rn needle_in_input ."},
                ts="2026-02-01T00:00:02Z",
            ),
            toy_line(t="result", id="c1", output="rare_result_word appears here\n" + "filler " * 50),
            toy_line(
                t="msg",
                role="user",
                text='he said "quoted words" and NEAR(x y) -minus * star',
                ts="2026-02-01T00:00:03Z",
            ),
            toy_line(t="msg", role="assistant", text="ranking word", ts="2026-02-01T00:00:04Z"),
            toy_line(t="tool", id="c2", name="Read", input={"file_path": "/x"}, ts="2026-02-01T00:00:05Z"),
            toy_line(t="result", id="c2", output="ranking word"),
        ],
    )
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


def search(svc: Service, q: str, **params: Any) -> list[dict[str, Any]]:
    return list(svc.call("search", {"q": q, **params})["hits"])


@pytest.mark.parametrize("q", NASTY, ids=lambda q: repr(q)[:30])
@pytest.mark.parametrize("mode", ["phrase", "prefix", "words"])
def test_any_text_is_a_valid_query(svc: Service, q: str, mode: str) -> None:
    from agtaild.index.budget import MAX_QUERY_CHARS, MAX_QUERY_TERMS, TooExpensive

    if len(q) > MAX_QUERY_CHARS or (mode == "words" and len(q.split()) > MAX_QUERY_TERMS):
        with pytest.raises(TooExpensive, match="query too expensive"):
            svc.call("search", {"q": q, "mode": mode})
        return
    doc = svc.call("search", {"q": q, "mode": mode})
    assert set(doc) == {"hits", "next"}
    for hit in doc["hits"]:
        assert set(hit) == {"session", "event", "snippet"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.text(max_size=60), mode=st.sampled_from(["phrase", "prefix", "words"]))
def test_random_text_never_errors(svc: Service, q: str, mode: str) -> None:
    svc.call("search", {"q": q, "mode": mode})


def test_operators_are_literal_text(svc: Service) -> None:
    # "alpha OR beta" is a phrase, not a disjunction: S1 has "alpha", S2 has neither as a phrase.
    assert search(svc, "alpha OR beta") == []
    assert len(search(svc, "alpha")) > 0
    hits = search(svc, '"quoted words"')
    assert [h["event"]["seq"] for h in hits] == [3]
    assert [h["event"]["seq"] for h in search(svc, "NEAR(x y) -minus")] == [3]


def test_cjk_is_found_by_substring(svc: Service) -> None:
    for q in ("テスト", "テ", "語のテスト文", "原因を調べ", "失敗"):
        hits = search(svc, q)
        assert [(h["session"]["id"], h["event"]["seq"]) for h in hits] == [("S2", 0)], q
        assert "«" in hits[0]["snippet"] and "»" in hits[0]["snippet"]
    assert search(svc, "テスト存在しない") == []


def test_emoji_and_diacritics(svc: Service) -> None:
    assert [h["event"]["seq"] for h in search(svc, "🎉")] == [1]
    assert [h["event"]["seq"] for h in search(svc, "cafe")] == [1]  # diacritics folded for words
    assert [h["event"]["seq"] for h in search(svc, "café")] == [1]


def test_tool_input_and_results_are_searchable_and_ranked_lower(svc: Service) -> None:
    assert [h["event"]["tool"] for h in search(svc, "needle_in_input")] == ["Bash"]
    assert [h["event"]["tool"] for h in search(svc, "rare_result_word")] == ["Bash"]
    hits = search(svc, "ranking word")
    # The same words in an assistant message beat them in a tool's output.
    assert [h["event"]["kind"] for h in hits] == ["text", "tool_use"]


def test_hits_carry_session_event_and_snippet(svc: Service) -> None:
    (hit,) = search(svc, "rare_result_word")
    assert hit["session"]["agent"] == "toy" and hit["session"]["id"] == "S2"
    assert hit["event"]["result"].startswith("rare_result_word")
    assert hit["snippet"].startswith("«rare_result_word»")
    assert "\n" not in hit["snippet"]


def test_prefix_words_and_regex_modes(svc: Service) -> None:
    assert search(svc, "rare_res") == []
    assert len(search(svc, "rare_res", mode="prefix")) == 1
    assert len(search(svc, "word ranking")) == 0
    assert len(search(svc, "word ranking", mode="words")) == 2
    hits = search(svc, r"needle_\w+_input", mode="regex")
    assert [h["event"]["tool"] for h in hits] == ["Bash"]
    assert "«needle_in_input»" in hits[0]["snippet"]
    with pytest.raises(UsageError, match="'q'"):
        svc.call("search", {"q": "(unclosed", "mode": "regex"})


def test_filters(svc: Service) -> None:
    assert {h["session"]["id"] for h in search(svc, "question")} == {"S1"}
    assert search(svc, "alpha", kind="tool_use")
    assert all(h["event"]["kind"] == "tool_use" for h in search(svc, "alpha", kind="tool_use"))
    assert search(svc, "alpha", session="toy:S2") == []
    assert search(svc, "alpha", session="toy:S1")
    assert search(svc, "ranking", cwd="/home/me") and not search(svc, "ranking", cwd="/home/other")
    assert search(svc, "ranking", project="proj-two") and not search(svc, "ranking", project="nope")
    assert search(svc, "ranking", since="2026-02-01") and not search(svc, "ranking", since="2026-02-02")
    assert search(svc, "alpha", until="2026-01-01") and not search(svc, "ranking", until="2026-01-31")
    with pytest.raises(UsageError, match="'kind'"):
        svc.call("search", {"q": "x", "kind": "nonsense"})
    with pytest.raises(UsageError, match="'session'"):
        svc.call("search", {"q": "x", "session": "toy:"})
    # An id alone names a session of any agent (here none).
    with pytest.raises(NotFound, match="no session 'no-colon'"):
        svc.call("search", {"q": "x", "session": "no-colon"})


def test_pages_cover_every_hit_once(svc: Service) -> None:
    everything = [(h["session"]["id"], h["event"]["seq"]) for h in search(svc, "alpha", limit=1000)]
    assert len(everything) >= 6
    seen: list[tuple[str, int]] = []
    cursor = None
    while True:
        doc = svc.call("search", {"q": "alpha", "limit": 2, **({"cursor": cursor} if cursor else {})})
        seen += [(h["session"]["id"], h["event"]["seq"]) for h in doc["hits"]]
        cursor = doc["next"]
        if not cursor:
            break
    assert seen == everything
    with pytest.raises(UsageError, match="cursor"):
        svc.call("search", {"q": "alpha", "cursor": "not-a-cursor"})
    other = svc.call("sessions.list", {"limit": 1})["next"]
    with pytest.raises(UsageError, match="cursor"):
        svc.call("search", {"q": "alpha", "cursor": other})


def test_query_compilation_quotes_everything() -> None:
    q = compile_query('a"b NEAR(c) d*', "phrase")
    assert q.words == '"a""b NEAR(c) d*"'
    assert compile_query("x y", "prefix").words == '"x y" *'
    assert compile_query("x y", "words").words == '"x" AND "y"'
    mixed = compile_query("fix テスト bug", "phrase")
    assert mixed.words == '"fix" AND "bug"' and mixed.wide == ["テスト"]
    assert compile_query("* - ()", "phrase").empty
