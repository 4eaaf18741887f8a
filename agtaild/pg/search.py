"""Full-text search on the team database, with the modes CONTRACT.md promises.

* ``phrase``: each run of ASCII words is a ``phraseto_tsquery`` over the weighted ``tsv``;
  words in other scripts (CJK) must appear as substrings (``ILIKE``, served by ``pg_trgm``).
* ``prefix``: as phrase, the last ASCII word may be the start of a word (``:*``).
* ``words``: every word, in any order.
* ``regex``: PostgreSQL's regular expressions (ARE syntax — close to Python's, not equal),
  under a statement timeout so one pathological pattern cannot hold a connection.

User text never becomes tsquery syntax: phrases go through ``phraseto_tsquery`` and the prefix
word is reduced to its letters and digits before it is quoted. Ranking is ``ts_rank_cd`` with
message text weighted over tool input over tool output, over the newest ``RANK_WINDOW``
matches (a common word over tens of GB stays fast; a rarer one is ranked whole);
substring-only and regex hits come newest first. Keyset pages: the cursor holds (score, event id).
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.errors import UsageError, bad_param
from agtaild.index.params import encode_cursor
from agtaild.index.text import make_snippet
from agtaild.pg.queries import EVENTS, SESSION_COLUMNS, TeamFilter, session_docs
from agtaild.pricing import PriceTable

#: How long one search may run on the server.
STATEMENT_TIMEOUT_MS = 5000
#: Ranked searches rank at most this many matches, the newest (all of them for rarer words).
RANK_WINDOW = 2000
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def conditions(q: str, mode: str) -> tuple[list[str], list[Any], str, list[Any], list[str]]:
    """(WHERE conditions, their args, the rank expression, its args, snippet needles)."""
    from agtaild.index.budget import check_query_size
    from agtaild.index.text import split_query

    if mode == "regex":
        check_query_size(q, 1)
        cond = "(e.text ~ %s OR e.tool_input ~ %s OR e.tool_result ~ %s)"
        return [cond], [q, q, q], "-e.id", [], []
    check_query_size(q, 0)  # the same caps as the local index: characters, then terms
    runs, wide = split_query(q.replace("\x00", " "), mode)
    check_query_size(q, len(runs) + len(wide))
    where: list[str] = []
    args: list[Any] = []
    queries: list[str] = []
    qargs: list[Any] = []
    needles: list[str] = []
    searchable = [run for run in runs if _TOKEN.search(" ".join(run))]
    for i, run in enumerate(searchable):
        text = " ".join(run)
        needles += [t.lower() for t in _TOKEN.findall(text)]
        if mode == "prefix" and i == len(searchable) - 1:
            tokens = _TOKEN.findall(text)
            head, last = tokens[:-1], tokens[-1].lower()
            expr = "to_tsquery('simple', %s)"
            term = f"'{last}':*"
            if head:
                queries.append(f"(phraseto_tsquery('simple', %s) <-> {expr})")
                qargs += [" ".join(head), term]
            else:
                queries.append(expr)
                qargs.append(term)
        else:
            queries.append("phraseto_tsquery('simple', %s)")
            qargs.append(text)
    if queries:
        tsq = " && ".join(queries)
        where.append(f"e.tsv @@ ({tsq})")
        args += qargs
        rank = f"-ts_rank_cd('{{0.1, 0.3, 0.6, 1.0}}', e.tsv, ({tsq}))"
        rank_args = list(qargs)
    else:
        rank, rank_args = "-e.id", []
    for w in wide:
        pattern = "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(e.text ILIKE %s OR e.tool_input ILIKE %s)")
        args += [pattern, pattern]
        needles.append(w)
    return where, args, rank, rank_args, needles


def search(
    cur: Any,
    pricing: PriceTable,
    q: str,
    mode: str,
    flt: TeamFilter,
    *,
    kind: str | None,
    session_id: int | None,
    limit: int,
    after: tuple[float, int] | None,
    here: str | None,
) -> dict[str, Any]:
    where, args, rank, rank_args, needles = conditions(q, mode)
    if not where:
        return {"hits": [], "next": None}
    swhere, sargs = flt.sql("s")
    where += swhere
    args += sargs
    if kind:
        where.append("e.kind = %s")
        args.append(kind)
    if session_id is not None:
        where.append("s.id = %s")
        args.append(session_id)
    matches = (
        f"FROM {EVENTS.get()} e JOIN sessions s USING (machine, agent, sid, collection)"
        f" WHERE {' AND '.join(where)}"
    )
    if rank_args:
        # Rank the newest RANK_WINDOW matches: ranking reads every ranked row's tsvector, so
        # a common word over a team's whole history would cost seconds (bench/RESULTS.md).
        matches = f"FROM (SELECT e.id, e.tsv {matches} ORDER BY e.id DESC LIMIT {RANK_WINDOW}) e"
    sql = f"SELECT e.id, {rank} AS score {matches}"
    params = [*rank_args, *args]
    if after is not None:
        sql = f"SELECT id, score FROM ({sql}) hits WHERE (score > %s OR (score = %s AND id > %s))"
        params += [after[0], after[0], after[1]]
    sql += " ORDER BY score, id LIMIT %s"
    params.append(limit + 1)
    import psycopg

    try:
        with cur.connection.transaction():
            cur.execute(f"SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS}")
            cur.execute(sql, params)
            rows = cur.fetchall()
    except psycopg.errors.QueryCanceled:
        raise UsageError("query too expensive (it ran past the server's time limit); narrow it") from None
    except (psycopg.errors.InvalidRegularExpression, psycopg.errors.DataException) as err:
        raise bad_param("q", f"could not be used: {str(err).strip()}") from None
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "hits": _hits(cur, pricing, rows, needles, here),
        "next": encode_cursor("search", float(rows[-1][1]), rows[-1][0]) if more and rows else None,
    }


def _hits(
    cur: Any, pricing: PriceTable, rows: list[Any], needles: list[str], here: str | None
) -> list[dict[str, Any]]:
    """The page's hits. (A regex hit's snippet is not highlighted: running a user's pattern
    in Python here would undo the server's time limit.)"""
    import json

    if not rows:
        return []
    ids = [r[0] for r in rows]
    cur.execute(
        f"SELECT e.id, e.doc, e.text, e.tool_input, e.tool_result, {SESSION_COLUMNS}"
        f" FROM {EVENTS.get()} e JOIN sessions s USING (machine, agent, sid, collection) WHERE e.id = ANY(%s)",
        (ids,),
    )
    found = {r[0]: r for r in cur.fetchall()}
    sessions = session_docs(cur, pricing, list({r[5]: r[5:] for r in found.values()}.values()), here)
    hits = []
    for eid, _score in rows:
        _id, doc, text, tool_input, tool_result, rid, *_ = found[eid]
        snippet = make_snippet([text, tool_input, tool_result], needles)
        hits.append({"session": sessions[rid], "event": json.loads(doc), "snippet": snippet})
    return hits
