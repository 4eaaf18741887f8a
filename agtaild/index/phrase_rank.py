"""FTS5's bm25 score for a query that is one phrase, without FTS5's second pass over the table.

FTS5's ``bm25()`` first runs every phrase of the query over the whole table once more, to
count the rows that hold it (the phrase's IDF). For a phrase that is rare the search itself
is cheap and that pass doubled it (measured on the 200 MB bench corpus: the phrase match
7 ms, with ``bm25()`` 14 ms, CPU). When the query is one phrase, the rows the search finds
*are* the rows that hold it: their number is the IDF's count, and the rest of the score
comes from numbers that are cheap to read for a few hits:

* each row's size in tokens: FTS5's own ``events_fts_docsize`` (a varint per column);
* the table's row and token totals: FTS5's averages record (row 1 of ``events_fts_data``);
* how often the phrase occurs in each column of the row: the hit's text is tokenized again
  by FTS5 itself, in a private in-memory FTS5 table with the index's tokenizer, whose
  ``fts5vocab`` instance table gives every token's position (so case folding, diacritics
  and which characters make a token are FTS5's, not an imitation of them).

The score is then computed with bm25's formula in bm25's order of operations, so it is the
same double FTS5 would return (tests/test_search_phrase_rank.py compares them over a
corpus): pages and cursors are the same whichever way a page was ranked. Only small result
sets take this way (``MAX_ROWS``, ``MAX_CHARS``); a common phrase goes to ``bm25()``, whose
extra pass is then the smaller cost.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections.abc import Sequence

from agtaild.index import varint
from agtaild.index.schema import WORD_TOKENIZER

#: FTS5's bm25 constants (ext/fts5/fts5_aux.c).
K1 = 1.2
B = 0.75
#: At most this many hits are ranked here (above it, bm25() runs the query instead).
MAX_ROWS = 128
#: ... and at most this many characters of their text: tokenizing it again costs ~11 ms per
#: MB (measured under load), so this bounds it to ~3 ms, less than bm25()'s second pass
#: costs a phrase on the 200 MB bench corpus (7 ms).
MAX_CHARS = 256 * 1024

_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_COLUMNS = ("text", "tool_input", "tool_result")


def table_totals(db: sqlite3.Connection, table: str = "events_fts") -> tuple[int, int]:
    """(rows, tokens in all columns) of an FTS5 table (events_fts, events_cjk), as bm25 reads
    them (xRowCount, xColumnTotalSize(-1))."""
    row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    values = varint.read_all(bytes(row[0]))
    return values[0], sum(values[1:])


def phrase_tokens(run: str) -> list[str]:
    """The tokens FTS5 makes of an ASCII run: its letters and digits, case-folded."""
    return [t.lower() for t in _ASCII_WORD.findall(run)]


class _Tokenizer(threading.local):
    """One in-memory FTS5 table per thread (sqlite3 connections stay in their thread)."""

    db: sqlite3.Connection | None = None

    def connection(self) -> sqlite3.Connection:
        if self.db is None:
            db = sqlite3.connect(":memory:", isolation_level=None)
            db.execute(
                f"CREATE VIRTUAL TABLE t USING fts5({', '.join(_COLUMNS)}, content='',"
                f' tokenize="{WORD_TOKENIZER}")'
            )
            db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
            self.db = db
        return self.db


_TOKENIZER = _Tokenizer()


def phrase_instances(
    rows: Sequence[Sequence[str | None]], tokens: list[str], prefix_last: bool
) -> list[list[tuple[int, int]]]:
    """For each row (its three columns), the (column, offset) of every occurrence of the
    phrase, in FTS5's order (by column, then offset), overlapping ones included."""
    db = _TOKENIZER.connection()
    found: list[list[tuple[int, int]]] = [[] for _ in rows]
    if not tokens:
        return found
    column = {name: i for i, name in enumerate(_COLUMNS)}
    db.execute("BEGIN")
    try:
        db.executemany(
            f"INSERT INTO t(rowid, {', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?)",
            [(i, *cols) for i, cols in enumerate(rows)],
        )
        at: dict[int, set[tuple[int, int, int]]] = {}
        for j, token in enumerate(tokens):
            args: tuple[str, ...]
            if prefix_last and j == len(tokens) - 1:
                # An ASCII prefix: the next string after all its continuations ends one
                # code point higher ([a-z0-9] + 1 is still ASCII).
                sql, args = "term >= ? AND term < ?", (token, token[:-1] + chr(ord(token[-1]) + 1))
            else:
                sql, args = "term = ?", (token,)
            at[j] = {
                (d, column[c], o)
                for d, c, o in db.execute(f"SELECT doc, col, offset FROM v WHERE {sql}", args)
            }
    finally:
        db.execute("ROLLBACK")
    rest = range(1, len(tokens))
    for d, c, o in sorted(at[0]):
        if all((d, c, o + j) in at[j] for j in rest):
            found[d].append((c, o))
    return found


def bm25_score(
    instances: list[tuple[int, int]], size: int, idf: float, avgdl: float, weights: Sequence[float]
) -> float:
    """bm25() of one row for a one-phrase query, operation for operation as FTS5 does it."""
    freq = 0.0
    for col, _offset in instances:
        freq += weights[col] if col < len(weights) else 1.0
    d = float(size)
    score = 0.0
    score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * d / avgdl)))
    return -1.0 * score


def idf_of(rows: int, hits: float) -> float:
    """bm25()'s IDF of a phrase in ``hits`` of ``rows`` rows (a small positive floor, as FTS5's)."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def rank_hits(
    db: sqlite3.Connection, ids: list[int], run: str, prefix_last: bool, weights: Sequence[float]
) -> dict[int, float] | None:
    """bm25 of each of ``ids``, which must be ALL the rows of events_fts that the one phrase
    ``run`` matches; None when that would cost more than bm25() itself (too much text) or
    an id has no row, no size or not the phrase (the caller then asks FTS5)."""
    if not ids or len(ids) > MAX_ROWS:
        return None
    nrow, ntoken = table_totals(db)
    if nrow <= 0:
        return None
    marks = ",".join("?" * len(ids))
    fetched = {
        r[0]: r[1:]
        for r in db.execute(
            "SELECT e.id, e.text, e.tool_input, e.tool_result, d.sz FROM events e"
            f" JOIN events_fts_docsize d ON d.id = e.id WHERE e.id IN ({marks})",
            ids,
        )
    }
    if len(fetched) != len(ids):
        return None
    chars = 0
    for text, tool_input, tool_result, _sz in fetched.values():
        chars += len(text or "") + len(tool_input or "") + len(tool_result or "")
    if chars > MAX_CHARS:
        return None
    texts = [fetched[i][:3] for i in ids]
    found = phrase_instances(texts, phrase_tokens(run), prefix_last)
    if not all(found):
        return None  # FTS5 matched a row whose text no longer holds the phrase: ask FTS5
    avgdl = float(ntoken) / float(nrow)
    idf = idf_of(nrow, len(ids))
    return {
        eid: bm25_score(inst, varint.total(bytes(fetched[eid][3])), idf, avgdl, weights)
        for eid, inst in zip(ids, found, strict=True)
    }
