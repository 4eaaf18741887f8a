"""A regex search reads first the events holding the words its literals start
(agtaild.index.regex_terms): the words found, and the same hits as the plain scan."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from agtaild.config import load_config
from agtaild.index import search as search_module
from agtaild.index.regex_terms import prefix_terms
from agtaild.query.service import Service
from tests.conftest import CORPUS


@pytest.mark.parametrize(
    ("pattern", "terms"),
    [
        (r"debounce\s+inotify", ["inotify"]),  # a match may start inside a word: "debounce" is no word start
        (r"^import os", ["import"]),
        (r"fixture path \w+", ["path"]),
        (r"(?i) Hello World", ["hello", "world"]),
        (r"a\.bcd/efg", ["bcd", "efg"]),
        (r"x abc+d", ["abc"]),  # what follows a repeated letter is not adjacent to it
        (r" fo{2}xyz", []),  # "fo" is too short; "xyz" follows the repeat
        (r"x (cat|dog) food", ["food"]),
        (r"foo|bar baz", []),  # an alternation at the top: no word is certain
        (r"x abc?", []),  # "ab" too short once the optional c is left out
        (r"\bword\b", []),  # \b: RE2's \w is ASCII, the tokenizer's words are not
        (r"(?x) ab cd", []),
        (r"\Qa.b\E cde", []),
        (r"[ab] cde", ["cde"]),
        (r"x\s*cde", []),  # the separator may be absent
        (r"x\tcde", ["cde"]),
        (r"x é cde", ["cde"]),
    ],
)
def test_the_words_every_match_starts(pattern: str, terms: list[str]) -> None:
    assert prefix_terms(pattern) == terms


WORDS = ["alpha", "alphabet", "beta", "gamma", "x_alpha", "Alpha", "béta", "alpha.beta", "al", "pha"]


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    seps=st.lists(st.sampled_from([" ", "  ", "\t", "/", "-", "_", ".", "é"]), min_size=6, max_size=6),
    pattern=st.lists(
        st.sampled_from(
            ["alpha", "beta", " ", r"\s+", r"\s*", "^", "a", "ph", r"\w+", "_", ".", "/", "?", "+", "(a|b)"]
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_every_match_holds_a_word_each_term_starts(
    text: list[str], seps: list[str], pattern: list[str]
) -> None:
    """Whatever text a pattern matches, the tokenizer's words (ASCII letters and digits, case
    folded) include one starting with each term."""
    body = "".join(w + s for w, s in zip(text, seps, strict=False))
    regex = "".join(pattern)
    try:
        compiled = re2.compile(regex)
    except re2.error:
        return
    if compiled.search(body) is None:
        return
    words = [w.lower() for w in __import__("re").findall(r"[A-Za-z0-9]+", body.replace("é", "e"))]
    for term in prefix_terms(regex):
        assert any(w.startswith(term) for w in words), (regex, body, term)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("regex")
    shutil.copytree(CORPUS / "real" / "claude-2.1.197" / "projects", base / "claude")
    config = load_config(
        data_dir=str(base / "data"), only_roots=True, root_options=[f"claude-code={base / 'claude'}"]
    )
    service = Service(config, workers=1)
    service.update_index()
    yield service
    service.close()


def _pages(svc: Service, q: str, limit: int) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    cursor = None
    while True:
        doc = svc.call(
            "search", {"q": q, "mode": "regex", "limit": limit, **({"cursor": cursor} if cursor else {})}
        )
        out += [(h["session"]["id"], h["event"]["seq"]) for h in doc["hits"]]
        cursor = doc["next"]
        if not cursor:
            return out


@pytest.mark.parametrize("pattern", [r"the\s+\w+", r"import \w+", r"(?i)\sthe\s", r"\.py\b", r"e/[a-z]+"])
def test_the_same_hits_as_the_scan_newest_first(
    svc: Service, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _pages(svc, pattern, 7)
    monkeypatch.setattr(search_module, "prefix_terms", lambda _p: [])
    scanned = _pages(svc, pattern, 7)
    assert fast == scanned and scanned
    assert len(set(scanned)) == len(scanned)
