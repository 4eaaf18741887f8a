"""Search by meaning in the query layer: the ``semantic`` and ``hybrid`` search modes and the
``embeddings.*`` methods.

``hybrid`` fuses two rankings by reciprocal rank fusion (score = Σ 1 / (60 + rank)): the
full-text one (every word of the query, any of them: bm25 ranks events with more of them
higher) and the vector one. Each hit says which rankings found it (``found_by``). With no
``mode`` given, search is hybrid only when the vectors cover the whole index and the model
answers; otherwise it stays full-text, with a one-line ``note`` when search by meaning is
configured but not ready. A failing model never fails a hybrid search: it falls back to
full-text with a note; only an explicit ``semantic`` search gets the error.
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import Refused
from agtaild.index.params import encode_cursor

MODES = ("semantic", "hybrid")
RRF_K = 60
#: How deep each ranking is read for fusion (more than any page: fusion reorders).
FUSE_DEPTH = 100
CURSOR_TAG = "meaning"


def engine_of(svc: Any) -> Any:
    """The service's engine (agtaild.semantic.engine.Engine), or None when none is configured."""
    return getattr(svc, "semantic", None)


def _events_total(svc: Any) -> Any:
    return lambda: int(svc._reader().execute("SELECT count(*) FROM events").fetchone()[0])


def default_mode(svc: Any) -> tuple[str, str | None]:
    """(the mode a search without ``mode`` runs in, the note to add)."""
    engine = engine_of(svc)
    if engine is None or not engine.enabled:
        return "phrase", None
    status = engine.status(events_total=_events_total(svc), fresh=False)
    if status.get("ready"):
        return "hybrid", None
    if status.get("error"):
        why = f"search by meaning is failing ({status['error']})"
    else:
        why = f"search by meaning covers {status.get('coverage', 0):.0%} of the index"
    return "phrase", f"{why}: full-text ranking"


#: Words too common to rank by: in an any-of-the-words query they match nearly every event,
#: and their noise outweighed the vector ranking in the fusion (bench/RESULTS.md).
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


#: A word found in more events than this is left out of hybrid's full-text side, as the
#: stopwords are: ranking any-of-the-words by bm25 scores every event that has one of them,
#: and one such word made that side cost 100+ ms on the 2 GB corpus (bench/RESULTS.md).
COMMON_MATCHES = 20_000
_common: dict[tuple[str, str], bool] = {}


def _is_common(db: Any, key: str, token: str) -> bool:
    """Whether the full-text token matches more than COMMON_MATCHES events (remembered: a
    count only grows, and a word wrongly kept costs time, never a hit)."""
    known = _common.get((key, token))
    if known is None:
        row = db.execute(
            "SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT 1 OFFSET ?", (token, COMMON_MATCHES)
        ).fetchone()
        if len(_common) > 10_000:
            _common.clear()
        known = _common[(key, token)] = row is not None
    return known


def _or_query(q: str, db: Any = None, key: str = "") -> Any:
    """The query as full-text words, any of them, common words left out (the full-text side
    of hybrid; with ``db``, also the words too common in that index); the query as it is when
    it has nothing else."""
    import msgspec

    from agtaild.index.text import compile_query

    kept = [w for w in q.split() if w.lower().strip(".,;:!?'\"()") not in STOPWORDS]
    base = compile_query(" ".join(kept) or q, "words")
    if not base.words:
        return base
    tokens = base.words.split(" AND ")
    if db is not None:
        tokens = [t for t in tokens if not _is_common(db, key, t)] or tokens
    return msgspec.structs.replace(base, words=" OR ".join(tokens), wide=[])


def search(
    svc: Any, q: str, mode: str, scope: Any, *, limit: int, cursor: list[Any] | None
) -> dict[str, Any]:
    """One page of ``semantic`` or ``hybrid`` hits (the caller applies the user's state)."""
    from agtaild.index.search import hits

    offset = int(cursor[0]) if cursor else 0
    depth = max(FUSE_DEPTH, offset + limit + 1)
    db = svc._reader()
    order, found, notes = rank(svc, q, mode, scope, depth)
    page = order[offset : offset + limit]
    extra = {eid: {"found_by": found[eid]} for eid, _ in page}
    # the snippets mark the words the full-text side ranked by (the common ones would each cost
    # a pass over their every event here too)
    full_query = _or_query(q, db, str(getattr(svc.config, "index_path", "")))
    docs = hits(db, svc.pricing(), full_query, [(eid, -score) for eid, score in page], extra=extra, fts_snippets=False)
    more = len(order) > offset + limit
    answer: dict[str, Any] = {
        "hits": docs,
        "next": encode_cursor(CURSOR_TAG, offset + limit) if more else None,
        "mode": mode,
    }
    if notes:
        answer["note"] = notes[0]
    return answer


def rank(
    svc: Any, q: str, mode: str, scope: Any, depth: int
) -> tuple[list[tuple[int, float]], dict[int, list[str]], list[str]]:
    """The ranking alone (kNN, and for ``hybrid`` the full-text ranking and the fusion):
    (event id, fused score) best first, the rankings that found each event, and notes."""
    from agtaild.index.budget import time_budget
    from agtaild.index.search import filter_events, ranked_rows
    from agtaild.semantic.embedders import EmbedError

    db = svc._reader()
    notes: list[str] = []
    engine = engine_of(svc)
    vector: list[int] = []
    try:
        if engine is None or not engine.enabled:
            raise EmbedError("search by meaning is off: no backend configured (docs/semantic.md)")
        vector = _vector_ranking(engine, db, q, scope, depth, filter_events)
    except EmbedError as exc:
        if mode == "semantic":
            raise
        notes.append(f"semantic ranking unavailable ({exc}): full-text ranking")
    text_ranked: list[int] = []
    if mode == "hybrid":
        full_query = _or_query(q, db, str(getattr(svc.config, "index_path", "")))
        with time_budget(db):
            text_ranked = [r[0] for r in ranked_rows(db, full_query, scope, limit=depth)]
    found: dict[int, list[str]] = {}
    fused: dict[int, float] = {}
    for name, ranking in (("full-text", text_ranked), ("semantic", vector)):
        for place, eid in enumerate(ranking):
            fused[eid] = fused.get(eid, 0.0) + 1.0 / (RRF_K + place + 1)
            found.setdefault(eid, []).append(name)
    order = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return order, found, notes


def _vector_ranking(engine: Any, db: Any, q: str, scope: Any, depth: int, filter_events: Any) -> list[int]:
    """Event ids nearest the query that the scope keeps, best first (up to ``depth``)."""
    want = depth
    while True:
        near = engine.nearest(q, want)
        ids = [eid for eid, _ in near]
        kept = filter_events(db, scope, ids)
        ranked = [eid for eid in ids if eid in kept]
        if len(ranked) >= depth or len(near) < want:
            return ranked[:depth]
        want *= 4


def status(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    from agtaild.index.params import Params

    Params("embeddings.status", params, ())
    engine = engine_of(svc)
    if engine is None:
        return {"enabled": False, "backend": "off", "state": "off", "healthy": False, "ready": False}
    doc: dict[str, Any] = engine.status(events_total=_events_total(svc))
    return doc


def build(svc: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Embed what is not embedded yet: in-process, now; in the daemon, its embedder is woken."""
    from agtaild.index.params import Params

    p = Params("embeddings.build", params, ("wait",))
    engine = engine_of(svc)
    if engine is None or not engine.enabled:
        raise Refused("search by meaning is off: no backend configured (docs/semantic.md)")
    background = getattr(svc, "embedder", None)
    if background is not None and not p.flag("wait"):
        background.nudge()
        doc: dict[str, Any] = engine.status(events_total=_events_total(svc))
        doc["started"] = True
        return doc
    result: dict[str, Any] = engine.build()
    result["events"] = _events_total(svc)()
    return result
