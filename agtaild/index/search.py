"""Full-text search: ranked hits with the session, the event and a highlighted snippet.

Ranking is FTS5's bm25 with the tool result column weighted lowest (a word in what the
person or the model wrote matters more than the same word in a tool's output). A query that
is one phrase found in few rows gets the same scores computed without bm25()'s second pass
over the table (agtaild/index/phrase_rank.py): it was half the cost of such a search. Hits found
only through the trigram table (queries made only of CJK / non-ASCII words) are ranked by
its own bm25; regex hits and very short CJK queries, which are scans, come newest first.
Pages are keyset: the cursor holds (score, event id) of the last hit.

"Best first" is bounded: a ranked query scores the newest :data:`RANK_WINDOW` matching events
(the highest event ids: the most recently indexed, which for a history indexed as it is
written are the newest) and orders those by bm25. Below that many matches — every rare word,
every phrase, most searches with a filter — this is exactly bm25's order over every match; a
word found in more events is ranked within its newest matches, so its cost stops growing with
the history (ranking a common word at 2 GB visited every one of its matches: 430 ms). The
scores are still bm25's over the whole table (its IDF counts every row). bm25 costs about
1.6 µs of CPU per scored row (its column sizes and positions), so the window is the price of a
common word: 20,000 cost 33 ms of CPU on this machine, 5,000 cost 9 ms (the walk itself:
0.3 ms).

On an index of more than ``bounded_rank.RANK_SPAN`` event ids even that pass over every match
is too much (its IDF: 126 ms for a common word at 10 GB, 1.4 s for a phrase of common words):
ranked queries then take agtaild/index/bounded_rank.py (the newest matches among the newest
events, scored by bm25's formula without the pass; older matches follow newest first), and a
prefix stands for its most frequent terms (agtaild/index/fts_terms.py). A regex's literals are
looked up as the terms they start, at any size (the same rows, without FTS5's merge of every
such term's doclist).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agtaild.errors import UsageError
from agtaild.index import bounded_rank, fts_terms, phrase_rank
from agtaild.index.params import TimeBound, encode_cursor
from agtaild.index.queries import SessionFilter, event_doc, load_sessions
from agtaild.index.regex import compile_regex, matches
from agtaild.index.regex_terms import prefix_terms
from agtaild.index.selection import id_conditions
from agtaild.index.text import (
    ELLIPSIS,
    MARK_END,
    MARK_START,
    Query,
    clean_snippet,
    find_phrases,
    fts_phrase,
    highlight_pattern,
    like_pattern,
    make_snippet,
    regex_spans,
)
from agtaild.pricing import PriceTable

#: bm25 column weights: text, tool input, tool result.
WEIGHTS = (1.0, 0.6, 0.25)
#: How many of the newest matches a ranked query scores (see the module's docstring).
RANK_WINDOW = 5_000
SNIPPET_TOKENS = 16


class SearchScope(SessionFilter):
    kind: str | None = None
    session_id: int | None = None
    event_since: TimeBound | None = None
    event_until: TimeBound | None = None

    def event_sql(self) -> tuple[list[str], list[Any], bool]:
        """Conditions on ``e`` (events) and ``s`` (sessions), and whether ``s`` is used."""
        where, args = SessionFilter(
            agent=self.agent,
            cwd=self.cwd,
            project=self.project,
            imported=self.imported,
            collection=self.collection,
            programmatic=self.programmatic,
            archived=self.archived,
            has_secret=self.has_secret,
            secret_allowed=self.secret_allowed,
        ).sql("s")
        uses_sessions = bool(where)
        # the user's state selects sessions by id: no join needed
        picked, picked_args = id_conditions("e.session_id", self.only_refs, self.without_refs)
        where += picked
        args += picked_args
        if self.kind:
            where.append("e.kind = ?")
            args.append(self.kind)
        if self.session_id is not None:
            where.append("e.session_id = ?")
            args.append(self.session_id)
        if self.event_since is not None:
            where.append("e.epoch >= ?")
            args.append(self.event_since.epoch)
        if self.event_until is not None:
            where.append("e.epoch < ?")
            args.append(self.event_until.epoch)
        return where, args, uses_sessions


def install_functions(db: sqlite3.Connection) -> None:
    db.create_function("agtail_regexp", 2, matches, deterministic=True)


def _wide_conditions(query: Query) -> tuple[str | None, list[str]]:
    """(trigram MATCH expression for words of 3+ characters, LIKE patterns for shorter ones)."""
    long_words = [w for w in query.wide if len(w) >= 3]
    short = [like_pattern(w) for w in query.wide if len(w) < 3]
    expr = " AND ".join(fts_phrase(w) for w in long_words) or None
    return expr, short


def _short_sql(alias: str, patterns: list[str]) -> tuple[list[str], list[Any]]:
    where, args = [], []
    for pat in patterns:
        where.append(f"({alias}.text LIKE ? ESCAPE '\\' OR {alias}.tool_input LIKE ? ESCAPE '\\')")
        args += [pat, pat]
    return where, args


def search(
    db: sqlite3.Connection,
    pricing: PriceTable,
    query: Query,
    scope: SearchScope,
    *,
    limit: int,
    after: tuple[float, int] | None,
) -> dict[str, Any]:
    """One page of hits. Only the tables a filter needs are joined, and snippets are made for
    the page alone: ranking a common word touches every event that has it."""
    if query.empty:
        return {"hits": [], "next": None}
    return _page(db, pricing, query, ranked_rows(db, query, scope, limit=limit, after=after), limit)


def ranked_rows(
    db: sqlite3.Connection,
    query: Query,
    scope: SearchScope,
    *,
    limit: int,
    after: tuple[float, int] | None = None,
) -> list[Any]:
    """Up to ``limit`` + 1 (event id, score) rows in rank order (lower scores first), the
    page's hits still to be made (``hits``): hybrid search fuses these with the vector ranking."""
    if query.empty:
        return []
    # One read transaction: the terms read from FTS5's records (agtaild.index.fts_terms) must
    # be those of the segments the query then walks (a merge may rewrite them meanwhile).
    with _snapshot(db):
        return _ranked_rows(db, query, scope, limit=limit, after=after)


def _ranked_rows(
    db: sqlite3.Connection,
    query: Query,
    scope: SearchScope,
    *,
    limit: int,
    after: tuple[float, int] | None,
) -> list[Any]:
    where, args, uses_sessions = scope.event_sql()
    bounds = bounded_rank.span(db, scope.session_id) if query.regex is None else None
    if bounds is None:
        rows = _one_phrase_page(db, query, where, args, uses_sessions, limit=limit, after=after)
        if rows is not None:
            return rows
    wide_expr, short = _wide_conditions(query)
    if query.regex is not None:
        compile_regex(query.regex)  # a clear error before any row is scanned
        table, rowid, score = "events e", "e.id", "-e.id"
        terms = prefix_terms(query.regex)
        if terms:
            # Only the events holding a word each literal starts (agtaild.index.regex_terms).
            table, rowid, score = "events_fts f", "f.rowid", "-f.rowid"
            where.insert(0, "events_fts MATCH ?")
            # Each literal as the OR of every term it starts, when they are few: FTS5 would
            # merge all their doclists before the walk down the ids could begin.
            exprs = [fts_terms.every_term(db, t) or fts_phrase(t) + " *" for t in terms]
            args.insert(0, " AND ".join(exprs))
        where.append(
            "(agtail_regexp(?, e.text) OR agtail_regexp(?, e.tool_input) OR agtail_regexp(?, e.tool_result))"
        )
        args += [query.regex] * 3
        joined = True
    else:
        if query.words:
            table, rowid = "events_fts f", "f.rowid"
            score = f"bm25(events_fts, {', '.join(map(str, WEIGHTS))})"
            match = [("events_fts MATCH ?", query.words)]
            if wide_expr:
                match.append(
                    ("f.rowid IN (SELECT rowid FROM events_cjk WHERE events_cjk MATCH ?)", wide_expr)
                )
            if short:
                cond, cargs = _short_sql("c", short)
                where.append(f"f.rowid IN (SELECT c.rowid FROM events_cjk c WHERE {' AND '.join(cond)})")
                args += cargs
        else:
            table, rowid = "events_cjk c", "c.rowid"
            score = f"bm25(events_cjk, {', '.join(map(str, WEIGHTS[:2]))})" if wide_expr else "-c.rowid"
            match = [("events_cjk MATCH ?", wide_expr)] if wide_expr else []
            cond, cargs = _short_sql("c", short)
            where += cond
            args += cargs
        where = [m for m, _ in match] + where
        args = [v for _, v in match] + args
        joined = bool(scope.kind or scope.session_id is not None or scope.event_since or scope.event_until)
        joined = joined or scope.only_refs is not None or bool(scope.without_refs)
        joined = joined or uses_sessions
        if bounds is not None and score.startswith("bm25("):
            return _bounded_rows(
                db, query, table, rowid, where, args, joined, uses_sessions, bounds, limit, after
            )
    if scope.session_id is not None:
        # One session's events lie between its first and last event id: the walk of the word
        # index is bounded to them (FTS5 seeks a rowid range), not every match of the word.
        lo, hi = db.execute(
            "SELECT min(id), max(id) FROM events WHERE session_id = ?", (scope.session_id,)
        ).fetchone()
        if lo is None:
            return []
        where.append(f"{rowid} BETWEEN ? AND ?")
        args += [lo, hi]
    joins = ""
    if joined and table != "events e":
        joins += f" JOIN events e ON e.id = {rowid}"
    if uses_sessions:
        joins += " JOIN sessions s ON s.id = e.session_id"
    if score == f"-{rowid}":
        # Newest first (regex hits, short CJK words): a walk down the ids that stops at the
        # page, the cursor's id its start (score = -id).
        if after is not None:
            where.append(f"{rowid} < ?")
            args.append(after[1])
        sql = (
            f"SELECT {rowid} AS id, {score} AS score FROM {table}{joins} WHERE {' AND '.join(where) or '1'}"
            f" ORDER BY {rowid} DESC LIMIT ?"
        )
        return _run(db, sql, [*args, limit + 1])
    page = ""
    if after is not None:
        page = " WHERE (score > ? OR (score = ? AND id > ?))"
        after_args = [after[0], after[0], after[1]]
    else:
        after_args = []
    matches_sql = (
        f"SELECT {rowid} AS id, {score} AS score FROM {table}{joins} WHERE {' AND '.join(where) or '1'}"
    )
    if score.startswith("bm25("):
        # Ranked: the newest RANK_WINDOW matches (an FTS5 walk in rowid order stops there), then
        # bm25's order among them.
        matches_sql += f" ORDER BY {rowid} DESC LIMIT {RANK_WINDOW}"
    sql = f"SELECT id, score FROM ({matches_sql}){page} ORDER BY score, id LIMIT ?"
    args += [*after_args, limit + 1]
    return _run(db, sql, args)


def _bounded_rows(
    db: sqlite3.Connection,
    query: Query,
    table: str,
    rowid: str,
    where: list[str],
    args: list[Any],
    joined: bool,
    uses_sessions: bool,
    bounds: tuple[int, int, int],
    limit: int,
    after: tuple[float, int] | None,
) -> list[Any]:
    """A ranked page on a big index (agtaild.index.bounded_rank: the newest matches of the
    newest events, scored without bm25()'s pass over every match)."""
    joins = f" JOIN events e ON e.id = {rowid}" if joined else ""
    if uses_sessions:
        joins += " JOIN sessions s ON s.id = e.session_id"
    walk = bounded_rank.Walk(table=table, rowid=rowid, where=where, args=args, joins=joins)
    if table.startswith("events_fts"):
        walk.phrases = bounded_rank.ascii_phrases(query.runs, query.prefix_last)
        walk.phrase_matches = [fts_phrase(run) for run in query.runs]
        if query.prefix_last and walk.phrases:
            # FTS5 would merge the doclists of every term the prefix starts, whatever the
            # rowid range: the most frequent such terms are searched for instead.
            expanded = fts_terms.expand_prefix(db, walk.phrases[-1][0])
            if expanded is None:
                walk.phrase_matches[-1] += " *"
            else:
                walk.phrase_matches[-1] = expanded
                args[0] = " AND ".join(walk.phrase_matches)
        weights: tuple[float, ...] = WEIGHTS
    else:
        walk.wide = [w for w in query.wide if len(w) >= 3]
        walk.phrase_matches = [fts_phrase(w) for w in walk.wide]
        weights = WEIGHTS[:2]
    try:
        return bounded_rank.rows(db, walk, bounds, weights, bounded_rank.WINDOW, limit=limit, after=after)
    except sqlite3.OperationalError as exc:
        raise UsageError(f"the query could not be run: {exc}") from None


def _run(db: sqlite3.Connection, sql: str, args: list[Any]) -> list[Any]:
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        # Quoting makes syntax errors impossible; anything else here is a real fault.
        raise UsageError(f"the query could not be run: {exc}") from None


def _page(
    db: sqlite3.Connection, pricing: PriceTable, query: Query, rows: list[Any], limit: int
) -> dict[str, Any]:
    """The hits of ``rows`` ((id, score) in rank order, up to ``limit`` + 1 of them)."""
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "hits": _hits(db, pricing, query, rows),
        "next": encode_cursor("search", rows[-1][1], rows[-1][0]) if more and rows else None,
    }


def _one_phrase_page(
    db: sqlite3.Connection,
    query: Query,
    where: list[str],
    args: list[Any],
    uses_sessions: bool,
    *,
    limit: int,
    after: tuple[float, int] | None,
) -> list[tuple[int, float]] | None:
    """The page's (id, score) rows for a query that is one ASCII phrase matching few rows,
    ranked by agtaild.index.phrase_rank (bm25's scores without bm25's second pass over the
    table); None for any other query, which the bm25() query then runs.

    The phrase is matched without the filters: all its rows are the count bm25's IDF takes,
    and the filters are applied to those few rows afterwards (as the bm25() query would:
    its IDF too counts the whole table)."""
    if query.regex is not None or query.wide or not query.words or len(query.runs) != 1:
        return None
    with _snapshot(db):
        found = _run(
            db,
            "SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT ?",
            [query.words, phrase_rank.MAX_ROWS + 1],
        )
        ids = [r[0] for r in found]
        scores = phrase_rank.rank_hits(db, ids, query.runs[0], query.prefix_last, WEIGHTS)
        if scores is None:
            return None
        if where:
            joins = " JOIN sessions s ON s.id = e.session_id" if uses_sessions else ""
            marks = ",".join("?" * len(ids))
            sql = f"SELECT e.id FROM events e{joins} WHERE e.id IN ({marks}) AND {' AND '.join(where)}"
            kept = {r[0] for r in _run(db, sql, [*ids, *args])}
            scores = {eid: s for eid, s in scores.items() if eid in kept}
    rows = sorted(scores.items(), key=lambda r: (r[1], r[0]))
    if after is not None:
        rows = [r for r in rows if r[1] > after[0] or (r[1] == after[0] and r[0] > after[1])]
    return rows[: limit + 1]


@contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction around the block (unless the caller holds one): the hits, their
    sizes and the table's totals must agree for the scores to be the ones bm25() would give,
    and a writer may commit between two statements."""
    own = not db.in_transaction
    if own:
        db.execute("BEGIN")
    try:
        yield
    finally:
        if own:
            db.execute("COMMIT")


def _fts_snippets(db: sqlite3.Connection, query: Query, ids: list[int]) -> dict[int, str]:
    if not query.words or not ids:
        return {}
    snippet = f"snippet(events_fts, -1, '{MARK_START}', '{MARK_END}', '{ELLIPSIS}', {SNIPPET_TOKENS})"
    found: dict[int, str] = {}
    for eid in ids:  # one by one: FTS5 seeks each rowid (an IN list runs the whole MATCH)
        row = db.execute(
            f"SELECT {snippet} FROM events_fts WHERE events_fts MATCH ? AND rowid = ?", (query.words, eid)
        ).fetchone()
        if row is not None:
            found[eid] = row[0]
    return found


def _phrase_snippet(pattern: list[re.Pattern[str]] | None, texts: list[str | None]) -> str | None:
    """The snippet around the first match of the query's phrases, or None (see
    agtaild.index.text.highlight_pattern: FTS5 then makes it)."""
    if pattern is None:
        return None
    for text in texts:
        if text:
            needles = find_phrases(pattern, text)
            if needles is None:
                return None
            if needles:
                return make_snippet([text], needles)
    return None


def hits(
    db: sqlite3.Connection,
    pricing: PriceTable,
    query: Query,
    rows: list[Any],
    *,
    extra: dict[int, dict[str, Any]] | None = None,
    fts_snippets: bool = True,
) -> list[dict[str, Any]]:
    """The hit documents of ``rows`` ((event id, score) pairs, in the order given), each with
    ``extra[event id]``'s fields added; events gone from the index are left out. Without
    ``fts_snippets``, a hit whose words Python's phrase finder does not find gets the start of
    its text, not FTS5's ``snippet()`` (hits found by meaning rarely hold the words: each such
    look-up is a wasted seek of every word's postings)."""
    return _hits(db, pricing, query, rows, extra, fts_snippets=fts_snippets)


def filter_events(db: sqlite3.Connection, scope: SearchScope, ids: list[int]) -> set[int]:
    """Those of ``ids`` that the scope's filters keep (ranked elsewhere, filtered here)."""
    where, args, uses_sessions = scope.event_sql()
    if not ids:
        return set()
    if not where:
        return set(ids)
    joins = " JOIN sessions s ON s.id = e.session_id" if uses_sessions else ""
    kept: set[int] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT e.id FROM events e{joins} WHERE e.id IN ({marks}) AND {' AND '.join(where)}"
        kept.update(r[0] for r in _run(db, sql, [*part, *args]))
    return kept


def _hits(
    db: sqlite3.Connection,
    pricing: PriceTable,
    query: Query,
    rows: list[Any],
    extra: dict[int, dict[str, Any]] | None = None,
    *,
    fts_snippets: bool = True,
) -> list[dict[str, Any]]:
    if not rows:
        return []
    ids = [r[0] for r in rows]
    marks = ",".join("?" * len(ids))
    events = {
        r[0]: r[1:]
        for r in db.execute(
            "SELECT id, session_id, data, text, tool_input, tool_result, result_moved FROM events"
            f" WHERE id IN ({marks})",
            ids,
        )
    }
    sessions = load_sessions(db, pricing, sorted({e[0] for e in events.values()}))
    phrases = highlight_pattern(query) if query.words else None
    made = {eid: _phrase_snippet(phrases, [e[2], e[3], e[4]]) for eid, e in events.items()}
    snippets = _fts_snippets(db, query, [eid for eid in ids if made.get(eid) is None]) if fts_snippets else {}
    pattern = compile_regex(query.regex) if query.regex is not None else None
    hits = []
    for eid, _score in rows:
        if eid not in events:
            continue  # ranked from the vector store, gone from the index since
        session_id, data, text, tool_input, tool_result, moved = events[eid]
        snip = made.get(eid) or snippets.get(eid)
        if snip:
            snippet = clean_snippet(snip)
        else:
            texts = [text, tool_input, tool_result]
            needles = query.needles()
            if pattern is not None:
                needles = [m for t in texts if t for m in regex_spans(pattern, t)][:20]
            snippet = make_snippet(texts, needles)
        hits.append(
            {
                "session": sessions[session_id],
                "event": event_doc(data, text, tool_result, moved),
                "snippet": snippet,
                **(extra or {}).get(eid, {}),
            }
        )
    return hits


def matching_session_ids(query: Query) -> tuple[str, list[Any]]:
    """SQL selecting the ids of sessions with an event matching ``query`` (list's ``q``)."""
    if query.empty or query.regex is not None:
        return "SELECT NULL WHERE 0", []
    conds: list[str] = []
    args: list[Any] = []
    if query.words:
        conds.append("e.id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?)")
        args.append(query.words)
    wide_expr, short = _wide_conditions(query)
    if wide_expr:
        conds.append("e.id IN (SELECT rowid FROM events_cjk WHERE events_cjk MATCH ?)")
        args.append(wide_expr)
    if short:
        w, a = _short_sql("c", short)
        conds.append(f"e.id IN (SELECT c.rowid FROM events_cjk c WHERE {' AND '.join(w)})")
        args += a
    return f"SELECT e.session_id FROM events e WHERE {' AND '.join(conds)}", args
