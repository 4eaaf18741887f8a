"""The terms of the word index that start with a prefix, and about how many rows hold each.

FTS5 without a prefix index answers ``"sess" *`` by merging the doclists of every term that
starts with ``sess`` into one, in memory, whatever rowid range the query is bounded to (600 ms
of CPU at 10 GB); ``fts5vocab`` counts each term's rows by walking the same doclists. Both grow
with the history. The terms themselves are cheap to list from FTS5's own records:

* ``events_fts_idx`` (segment id, term key, page): for each leaf page that holds a term, a
  prefix of its first term (``'0'`` marks the main index) and the page number (times two);
* each leaf page (``events_fts_data``, id = segment id << 37 | page): a 4-byte header (the
  offset of the page's footer in bytes 2–3), the terms and their doclists, and the footer:
  the offset of each term on the page, delta-encoded varints. A page's first term is stored
  whole (varint size, bytes), the next ones as (varint bytes shared with the previous term,
  varint new bytes, the new bytes).

A term's doclist runs from its bytes to the next term of its segment: its size in bytes stands
for how many rows hold it (the most frequent terms are searched for first). Every page of the
prefix's key range is read, in every segment: a few pages each.
"""

from __future__ import annotations

import sqlite3

from agtaild.index import varint
from agtaild.index.text import fts_phrase

#: A prefix is searched as at most this many of its terms, the most frequent (by doclist size).
MAX_TERMS = 16
#: A regex's literal is searched as every term it starts when there are at most this many.
MAX_EVERY = 64
#: ... when it starts at most this many terms (beyond, FTS5's own prefix query runs).
MAX_LISTED = 4096
#: Bytes of a leaf page that hold doclists (FTS5's default page size): how much a page that
#: holds no term counts for the doclist running through it.
PAGE_BYTES = 4000


def _page_terms(page: bytes) -> list[tuple[bytes, int, int]]:
    """(term key, offset of the term, offset of its doclist) for each term on a leaf page."""
    if len(page) < 4:
        return []
    footer = int.from_bytes(page[2:4], "big")
    out: list[tuple[bytes, int, int]] = []
    i, at, term = footer, 0, b""
    while i < len(page):
        delta, i = varint.read(page, i)
        at += delta
        j = at
        if not out:
            size, j = varint.read(page, j)
            term = page[j : j + size]
            j += size
        else:
            shared, j = varint.read(page, j)
            new, j = varint.read(page, j)
            term = term[:shared] + page[j : j + new]
            j += new
        out.append((term, at, j))
    return out


def prefix_terms(db: sqlite3.Connection, prefix: str, table: str = "events_fts") -> dict[str, int] | None:
    """{term: bytes of its doclists} of every term starting with ``prefix`` (lower-case
    ASCII letters and digits), or None when there are too many or the records cannot be read."""
    low = b"0" + prefix.encode()
    high = low[:-1] + bytes([low[-1] + 1])
    sizes: dict[bytes, int] = {}
    segments: list[int] = []
    while True:  # each segment id by a seek (a DISTINCT would read every row of the b-tree)
        row = db.execute(
            f"SELECT segid FROM {table}_idx WHERE segid > ? ORDER BY segid LIMIT 1",
            (segments[-1] if segments else -1,),
        ).fetchone()
        if row is None:
            break
        segments.append(row[0])
    for segid in segments:
        start = db.execute(
            f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term < ? ORDER BY term DESC LIMIT 1",
            (segid, low),
        ).fetchone()
        pages = [r[0] >> 1 for r in db.execute(
            f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term >= ? AND term < ? ORDER BY term",
            (segid, low, high))]  # fmt: skip
        end = db.execute(
            f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term >= ? ORDER BY term LIMIT 1", (segid, high)
        ).fetchone()
        if start is not None:
            pages.insert(0, start[0] >> 1)
        if end is not None:
            pages.append(end[0] >> 1)
        last: tuple[bytes, int, int] | None = None  # (term, page, doclist offset) in range
        for pgno in pages:
            row = db.execute(
                f"SELECT block FROM {table}_data WHERE id = ?", ((segid << 37) + pgno,)
            ).fetchone()
            if row is None:
                return None
            try:
                listed = _page_terms(bytes(row[0]))
            except IndexError:  # a page cut short: not a format this reads
                return None
            for term, at, doclist in listed:
                if last is not None:
                    sizes[last[0]] = sizes.get(last[0], 0) + (pgno - last[1]) * PAGE_BYTES + at - last[2]
                    last = None
                if low <= term < high:
                    last = (term, pgno, doclist)
                elif term >= high:
                    break
            if len(sizes) > MAX_LISTED:
                return None
        if last is not None:  # the segment's last term: its doclist runs to the segment's end
            sizes[last[0]] = sizes.get(last[0], 0) + PAGE_BYTES
    try:
        return {k[1:].decode(): max(v, 1) for k, v in sizes.items()}
    except UnicodeDecodeError:
        return None


def expand_prefix(db: sqlite3.Connection, tokens: list[str]) -> str | None:
    """The FTS5 expression for the phrase ``tokens`` whose last token is a prefix, as an OR of
    the phrases ending in its MAX_TERMS most frequent terms; None when it is better left to
    FTS5 (no such term, too many, unreadable records)."""
    if not tokens:
        return None
    terms = prefix_terms(db, tokens[-1])
    if not terms:
        return None
    best = sorted(terms, key=lambda t: (-terms[t], t))[:MAX_TERMS]
    head = " ".join(tokens[:-1])
    phrases = [fts_phrase(f"{head} {t}".strip()) for t in sorted(best)]
    return "(" + " OR ".join(phrases) + ")"


def every_term(db: sqlite3.Connection, prefix: str) -> str | None:
    """The FTS5 expression matching the rows that hold a word starting with ``prefix``, as
    the OR of every such term; None when FTS5's own prefix query is as good (no such term,
    more than MAX_EVERY of them, unreadable records)."""
    terms = prefix_terms(db, prefix)
    if not terms or len(terms) > MAX_EVERY:
        return None
    return "(" + " OR ".join(fts_phrase(t) for t in sorted(terms)) + ")"
