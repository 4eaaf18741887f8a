"""Ranked search on a big index, at a cost that does not grow with the history.

On an index of more than :data:`RANK_SPAN` event ids, FTS5's ``bm25()`` is not used: before it
scores a row it counts, for its IDF, every row of the whole table holding each phrase (one
more pass over every match: 126 ms of CPU for a common word at 10 GB, 1.4 s for a phrase of
three common words, whose rows all have their positions checked). Instead:

* **The window**: the newest :data:`WINDOW` matches among the newest :data:`RANK_SPAN`
  events (an id range: FTS5 pushes ``rowid BETWEEN`` into its cursor and walks only the tail
  of each doclist). Within one session, the session's own ids.
* **Its scores**: bm25's formula, as FTS5 computes it (k1 = 1.2, b = 0.75, the column
  weights), from each row's size in tokens (FTS5's ``_docsize``) and the phrase's frequency
  in each column, counted here in the row's text (:func:`ascii_counter`: the phrase's ASCII
  tokens as unicode61 makes them, case folded; letters FTS5 folds from other scripts, such as
  ``é`` in ``séssion``, are not counted, so such a row scores lower than FTS5 would score it).
* **The IDF** of each phrase is estimated from how dense its matches are in the window's
  range (matches / ids, times the table's rows). For a query of one phrase it is a factor
  common to every row: the order within the window is bm25's exactly.
* **Older matches** (below the window) follow, newest first, with scores above every bm25
  score (``OLDER - id``), so pages and cursors go on through them.

A prefix is expanded to the terms of the index that start with it (agtaild.index.fts_terms):
FTS5 without a prefix index merges the doclists of every such term, whatever the rowid range.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agtaild.index import varint
from agtaild.index.phrase_rank import K1, B, idf_of, phrase_tokens, table_totals

#: Above this many event ids, ranked search takes this module's bounded way.
RANK_SPAN = 100_000
#: How many of the newest matches are scored (against 5,000 below RANK_SPAN: bm25() costs
#: ~1.6 µs a row in C, reading a row's text and counting in it here ~5 µs on the bench
#: corpus, whose rows hold ~1.5 kB of text each: bench/RESULTS.md).
WINDOW = 2_000
#: Scores of the matches older than the window: OLDER - id (newest first, after every bm25
#: score, which is never positive; exact as a double for any id below 2**52).
OLDER = float(2**52)


@dataclass
class Walk:
    """What the SQL of a search is made of (agtaild.index.search builds it)."""

    table: str  # "events_fts f" or "events_cjk c"
    rowid: str  # "f.rowid" / "c.rowid"
    where: list[str]  # the MATCH first, then the filters
    args: list[Any]
    joins: str = ""
    #: The phrases that score a row: ASCII token lists (events_fts) or CJK words (events_cjk).
    phrases: list[tuple[list[str], bool]] = field(default_factory=list)
    wide: list[str] = field(default_factory=list)
    #: The unfiltered MATCH expression of each phrase, to estimate its IDF (several phrases).
    phrase_matches: list[str] = field(default_factory=list)

    @property
    def fts(self) -> str:
        return self.table.split()[0]


def span(db: sqlite3.Connection, session_id: int | None) -> tuple[int, int, int] | None:
    """(lowest id a match may have, the window's lowest id, its highest) when the index has
    more than RANK_SPAN event ids, else None (bm25() ranks as it always did). An empty
    session gives (1, 1, 0): no match."""
    top = db.execute("SELECT max(id) FROM events").fetchone()[0]
    if top is None or top <= RANK_SPAN:
        return None
    if session_id is None:
        return 1, max(1, top - RANK_SPAN + 1), top
    lo, hi = db.execute("SELECT min(id), max(id) FROM events WHERE session_id = ?", (session_id,)).fetchone()
    if lo is None:
        return 1, 1, 0
    return lo, max(lo, hi - RANK_SPAN + 1), hi


def rows(
    db: sqlite3.Connection,
    walk: Walk,
    bounds: tuple[int, int, int],
    weights: Sequence[float],
    window: int,
    *,
    limit: int,
    after: tuple[float, int] | None,
) -> list[tuple[int, float]]:
    """Up to ``limit`` + 1 (event id, score) rows after the cursor ``after``, in rank order."""
    floor, lo, hi = bounds
    out: list[tuple[int, float]] = []
    if after is None or after[0] <= 0.0:
        # The window's rows with their sizes and text, in the one walk down the ids.
        found = _window(db, walk, lo, hi, window)
        ids = [r[-1] for r in found]
        edge = ids[-1] if len(ids) >= window else lo  # matches below it are "older"
        scored = _score(db, walk, found, _idfs(db, walk, ids, lo, hi, window), weights)
        ranked = sorted((s, eid) for eid, s in scored.items())  # (score, id): the page's order
        if after is not None:
            ranked = [r for r in ranked if r > (after[0], after[1])]
        out = [(eid, s) for s, eid in ranked[: limit + 1]]
        start = edge
    else:
        ids = _ids(db, walk, lo, hi, window)
        edge = ids[-1] if len(ids) >= window else lo
        start = min(edge, int(after[1]))
    if len(out) <= limit and start > floor:
        older = _ids(db, walk, floor, start - 1, limit + 1 - len(out))
        out += [(eid, OLDER - eid) for eid in older]
    return out


def _ids(db: sqlite3.Connection, walk: Walk, lo: int, hi: int, n: int) -> list[int]:
    """The ids of the newest ``n`` matches between ``lo`` and ``hi``, newest first."""
    if n <= 0 or hi < lo:
        return []
    sql = (
        f"SELECT {walk.rowid} FROM {walk.table}{walk.joins} WHERE {' AND '.join(walk.where)}"
        f" AND {walk.rowid} BETWEEN ? AND ? ORDER BY {walk.rowid} DESC LIMIT ?"
    )
    return [r[0] for r in db.execute(sql, [*walk.args, lo, hi, n])]


def _idfs(db: sqlite3.Connection, walk: Walk, ids: list[int], lo: int, hi: int, window: int) -> list[float]:
    """Each phrase's IDF, from its estimated number of rows in the table: for one phrase the
    window's own density (any value orders the window the same), for several each phrase's
    newest matches walked alone in the range."""
    nrow = table_totals(db, walk.fts)[0]
    count = len(walk.phrases) or len(walk.wide)
    if count <= 1 or len(walk.phrase_matches) != count:
        return [idf_of(nrow, _estimate(nrow, len(ids), ids[-1] if len(ids) >= window else lo, hi))] * max(
            count, 1
        )
    out = []
    for match in walk.phrase_matches:
        n, low = db.execute(
            f"SELECT count(*), min(rowid) FROM (SELECT rowid FROM {walk.fts} WHERE {walk.fts} MATCH ?"
            " AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)",
            (match, lo, hi, window),
        ).fetchone()
        out.append(idf_of(nrow, _estimate(nrow, n, low if n >= window else lo, hi)))
    return out


def _estimate(nrow: int, found: int, low: int, hi: int) -> float:
    """Rows of the table holding a phrase found ``found`` times among the ids low..hi."""
    ids = max(1, hi - low + 1)
    return min(float(nrow), found * max(1.0, nrow / ids))


#: What a row is scored from, by table: its sizes (FTS5's _docsize) and its columns' text as
#: UTF-8 bytes (three of them: the trigram table's third is always empty), ``t`` and ``d``.
_TEXTS = {
    "events_fts": (
        "d.sz, CAST(t.text AS BLOB), CAST(t.tool_input AS BLOB), CAST(t.tool_result AS BLOB)",
        "events t",
        "events_fts_docsize d",
    ),
    "events_cjk": (
        "d.sz, CAST(t.c0 AS BLOB), CAST(t.c1 AS BLOB), NULL",
        "events_cjk_content t",
        "events_cjk_docsize d",
    ),
}


def _window(db: sqlite3.Connection, walk: Walk, lo: int, hi: int, n: int) -> list[Any]:
    """The newest ``n`` matches between ``lo`` and ``hi``, newest first, each as (sizes, three
    columns' text, id)."""
    if n <= 0 or hi < lo:
        return []
    columns, content, sizes = _TEXTS[walk.fts]
    sql = (
        f"SELECT {columns}, {walk.rowid} FROM {walk.table}{walk.joins}"
        f" JOIN {content} ON t.id = {walk.rowid} JOIN {sizes} ON d.id = {walk.rowid}"
        f" WHERE {' AND '.join(walk.where)} AND {walk.rowid} BETWEEN ? AND ? ORDER BY {walk.rowid} DESC LIMIT ?"
    )
    return db.execute(sql, [*walk.args, lo, hi, n]).fetchall()


def score(
    db: sqlite3.Connection, walk: Walk, ids: list[int], idfs: list[float], weights: Sequence[float]
) -> dict[int, float]:
    """bm25 of each of ``ids`` (the formula of FTS5's bm25(), given the IDFs)."""
    columns, content, sizes = _TEXTS[walk.fts]
    found: list[Any] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        found += db.execute(
            f"SELECT {columns}, t.id FROM {content} JOIN {sizes} ON d.id = t.id"
            f" WHERE t.id IN ({','.join('?' * len(part))})",
            part,
        ).fetchall()
    return _score(db, walk, found, idfs, weights)


def _score(
    db: sqlite3.Connection, walk: Walk, found: list[Any], idfs: list[float], weights: Sequence[float]
) -> dict[int, float]:
    """bm25 of each row of ``found`` (sizes, three columns, id), by its id."""
    if not found:
        return {}
    nrow, ntoken = table_totals(db, walk.fts)
    avgdl = float(ntoken) / float(nrow) if nrow > 0 else 1.0
    counters: list[Callable[[bytes], int]]
    if walk.fts == "events_fts":
        counters = [ascii_counter(tokens, prefix) for tokens, prefix in walk.phrases]
    else:
        counters = [wide_counter(word) for word in walk.wide]
    # A column without a weight counts for nothing (adding 0.0 leaves every sum as it was).
    w0, w1, w2 = (*weights[:3], 0.0, 0.0, 0.0)[:3]
    pairs = list(zip(counters, idfs, strict=False))
    k1 = K1 + 1.0
    size = varint.total
    out: dict[int, float] = {}
    if len(pairs) == 1:  # one phrase (the common query): one loop, nothing but the sums
        count, idf = pairs[0]
        for sz, a, b, c, eid in found:
            freq = 0.0
            if a:
                freq += count(a) * w0
            if b:
                freq += count(b) * w1
            if c:
                freq += count(c) * w2
            out[eid] = -1.0 * (idf * ((freq * k1) / (freq + K1 * (1 - B + B * size(sz) / avgdl))))
        return out
    for sz, *columns, eid in found:
        norm = K1 * (1 - B + B * size(sz) / avgdl)
        total = 0.0
        for counter, idf in pairs:
            freq = 0.0
            for value, weight in zip(columns, (w0, w1, w2), strict=True):
                if value:
                    freq += counter(value) * weight
            total += idf * ((freq * k1) / (freq + norm))
        out[eid] = -1.0 * total
    return out


#: 1 for a byte that may be part of a token next to an ASCII word ([a-z0-9] after lower(), or
#: any byte of a non-ASCII character), 0 for one that separates tokens.
_NEAR = bytes(1 if b >= 0x80 or chr(b) in "abcdefghijklmnopqrstuvwxyz0123456789" else 0 for b in range(256))


def _token_char(ch: str) -> bool:
    """Whether unicode61 (categories L* N* Co So, diacritics kept) keeps ``ch`` in a token."""
    cat = unicodedata.category(ch)
    return cat[0] in "LNM" or cat in ("Co", "So")


def _char_before(buf: bytes, at: int) -> str:
    i = at - 1
    while i > 0 and 0x80 <= buf[i] < 0xC0:
        i -= 1
    return buf[i:at].decode("utf-8", "replace")


def _char_at(buf: bytes, at: int) -> str:
    j = at + 1
    while j < len(buf) and 0x80 <= buf[j] < 0xC0:
        j += 1
    return buf[at:j].decode("utf-8", "replace")


def ascii_counter(tokens: list[str], prefix: bool) -> Callable[[bytes], int]:
    """A function counting the occurrences of the phrase ``tokens`` (lower-case ASCII
    letters and digits; the last one a prefix if ``prefix``) in a column's UTF-8 text, as
    FTS5's instances of it (overlapping ones too). The regex finds ASCII boundaries; a match
    next to or holding a non-ASCII character is checked against unicode61's token characters."""
    if not tokens:
        return lambda _value: 0
    parts = [re.escape(t.encode()) for t in tokens]
    first = parts[0]
    rest = b"".join(rb"[^a-z0-9]+" + p for p in parts[1:]) + (b"" if prefix else rb"(?![a-z0-9])")
    # The first token as a literal, its boundary a look-behind after it: the regex engine
    # then scans for the literal (a leading look-behind is tried at every byte: 20× slower).
    pattern = re.compile(first + rb"(?<![a-z0-9]" + first + rb")" + rest)

    def real(low: bytes, m: re.Match[bytes]) -> bool:
        a, b = m.span()
        if a > 0 and low[a - 1] >= 0x80 and _token_char(_char_before(low, a)):
            return False
        if not prefix and b < len(low) and low[b] >= 0x80 and _token_char(_char_at(low, b)):
            return False
        text = m.group()
        return text.isascii() or not any(
            _token_char(c) for c in text.decode("utf-8", "replace") if ord(c) >= 0x80
        )

    if len(tokens) == 1:
        # One token: each place bytes.find (C-speed) finds it, its two neighbours checked
        # (a byte of [a-z0-9] is a token's, a non-ASCII character is decoded and asked).
        word = tokens[0].encode()
        size = len(word)

        def count_one(value: bytes) -> int:
            low = value.lower()
            n, last, at = 0, len(low), low.find(word)
            while at >= 0:
                end = at + size
                if (
                    at and _NEAR[low[at - 1]] and (low[at - 1] < 0x80 or _token_char(_char_before(low, at)))
                ) or (
                    not prefix
                    and end < last
                    and _NEAR[low[end]]
                    and (low[end] < 0x80 or _token_char(_char_at(low, end)))
                ):
                    at = low.find(word, at + 1)
                else:
                    n += 1
                    at = low.find(word, end)
            return n

        return count_one

    # Two occurrences can overlap only when the phrase's end repeats its start ("go go").
    overlapping = any(tokens[i:] == tokens[: len(tokens) - i] for i in range(1, len(tokens)))

    def count(value: bytes) -> int:
        low = value.lower()
        if low.isascii() and not overlapping:
            return len(pattern.findall(low))
        n, pos = 0, 0
        while True:
            m = pattern.search(low, pos)
            if m is None:
                return n
            n += real(low, m)
            pos = m.start() + 1

    return count


def wide_counter(word: str) -> Callable[[bytes], int]:
    """Occurrences of ``word`` (overlapping too: the trigram phrase's instances) in a column
    of the trigram table (its UTF-8 bytes), both case folded."""
    needle = word.lower()
    if needle and all(unicodedata.category(ch) in ("Lo", "Lm") for ch in needle):
        # Letters without case (kana, kanji, hangul): lower() changes none of them and makes
        # none of them from another character, so the bytes are searched as they are (in
        # UTF-8 a match of whole characters' bytes is a match of the characters).
        raw = needle.encode()
        if not any(needle[i:] == needle[: len(needle) - i] for i in range(1, len(needle))):
            return lambda value: value.count(raw)  # no two occurrences can overlap
        return lambda value: _overlapping(value, raw)

    def count(value: bytes) -> int:
        return _overlapping(value.decode("utf-8", "replace").lower(), needle)

    return count


def _overlapping(value: Any, needle: Any) -> int:
    n, pos = 0, value.find(needle)
    while pos >= 0:
        n += 1
        pos = value.find(needle, pos + 1)
    return n


def ascii_phrases(runs: list[str], prefix_last: bool) -> list[tuple[list[str], bool]]:
    """(tokens, last is a prefix) of each phrase of a query's ASCII runs."""
    return [(phrase_tokens(run), prefix_last and i == len(runs) - 1) for i, run in enumerate(runs)]
