"""A cold index of the vendored corpus gives exactly what it gave before the indexing speed
work (issue #13, "Done when"): every event's columns and document, the full-text tables
(searched with queries of every mode), usage totals and every session's accounting.

The expected figures are in tests/fixtures/index_golden.json, written from the code before
the speed changes. A change that *means* to alter what is indexed regenerates it with
``AGTAIL_WRITE_GOLDEN=1 pytest tests/test_index_golden.py`` and says so in its commit; a
speed change must leave it alone. Each part is a digest (named, so a failure says which part
moved) plus a few counts that make a failure readable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agtaild.index.readers as readers
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.config import Config, RootSpec
from agtaild.index.codec import decode_event
from agtaild.query.service import Service

GOLDEN = Path(__file__).parent / "fixtures" / "index_golden.json"
#: Queries of every mode, CJK included (the trigram table), and words common in the corpus.
QUERIES: list[tuple[str, str]] = [
    ("error", "phrase"),
    ("the file", "phrase"),
    ("test", "prefix"),
    ("read file", "words"),
    ("def ", "phrase"),
    ("更新", "phrase"),
    ("ファイル名", "prefix"),
    ("import os", "phrase"),
    ("git status", "phrase"),
    (r"Trace[a-z]+", "regex"),
]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _portable(value: Any, corpus: Path) -> Any:
    """The value with the corpus's location replaced (the golden holds no absolute path)."""
    return json.loads(json.dumps(value, default=repr).replace(str(corpus), "<corpus>"))


def _without_mtime(doc: dict[str, Any]) -> dict[str, Any]:
    """A session document without its file's ``mtime``: that is when this checkout wrote the
    sample, not something the index derives from it (the golden must hold in any clone)."""
    return {k: v for k, v in doc.items() if k != "mtime"}


def build_summary(corpus: Path, data: Path, workers: int) -> dict[str, Any]:
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    config = Config(data_dir=str(data), roots=roots, archive=False)
    svc = Service(config, workers=workers)
    try:
        report = svc.update_index()
        assert report["errors"] == []
        searches = {}
        for q, mode in QUERIES:
            hits = svc.call("search", {"q": q, "mode": mode, "limit": 1000})["hits"]
            searches[f"{mode}:{q}"] = sorted(
                f"{h['session']['agent']}:{h['session']['id']}:{h['event']['seq']}" for h in hits
            )
        stats = {by: svc.call("stats", {"by": by}) for by in ("model", "agent", "session")}
    finally:
        svc.close()
    db = sqlite3.connect(str(config.index_path))
    try:
        db.execute("INSERT INTO events_fts(events_fts, rank) VALUES ('integrity-check', 1)")
        # Workers send the text columns as bytes: they must still be stored as TEXT.
        blobs = db.execute(
            "SELECT count(*) FROM events WHERE typeof(text) = 'blob' OR typeof(tool_input) = 'blob'"
            " OR typeof(tool_result) = 'blob'"
        ).fetchone()[0]
        assert blobs == 0
        path_of = dict(db.execute("SELECT s.id, f.path FROM sessions s JOIN files f ON f.id = s.file_id"))
        events = sorted(
            (path_of[sid], seq, kind, epoch, text, tool_input, tool_result, moved, decode_event(data_))
            for sid, seq, kind, epoch, text, tool_input, tool_result, moved, data_ in db.execute(
                "SELECT session_id, seq, kind, epoch, text, tool_input, tool_result, result_moved, data"
                " FROM events"
            )
        )
        cjk = sorted(
            (path_of[r[0]], *r[1:])
            for r in db.execute(
                "SELECT e.session_id, e.seq, c.text, c.tool_input FROM events_cjk c JOIN events e ON e.id = c.rowid"
            )
        )
        sessions = sorted(
            (path_of[sid], agent, ssid, _without_mtime(json.loads(doc)))
            for sid, agent, ssid, doc in db.execute("SELECT id, agent, sid, data FROM sessions")
        )
        usage = sorted(
            (path_of[r[0]], *r[1:])
            for r in db.execute(
                "SELECT session_id, agent, key, epoch, model, input, output, cache_read, cache_write,"
                " reasoning, total, long_ctx, counted FROM usage"
            )
        )
    finally:
        db.close()
    accounting = sorted((s[0], s[3].get("accounting"), s[3].get("bad_lines")) for s in sessions)
    p = lambda v: _portable(v, corpus)  # noqa: E731
    return {
        "counts": {
            "sessions": len(sessions),
            "events": len(events),
            "cjk_rows": len(cjk),
            "usage_rows": len(usage),
            "hits": {k: len(v) for k, v in searches.items()},
        },
        "digests": {
            "events": _digest(p(events)),
            "cjk": _digest(p(cjk)),
            "sessions": _digest(p(sessions)),
            "accounting": _digest(p(accounting)),
            "usage": _digest(p(usage)),
            "stats": _digest(p(stats)),
            "search": _digest(p(searches)),
        },
    }


@pytest.fixture
def utc() -> Iterator[None]:
    """Usage days are local days: the golden is UTC's."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.mark.parametrize("pooled", [False, True], ids=["in-process", "workers"])
def test_a_cold_index_of_the_corpus_is_what_it_was(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool, utc: None
) -> None:
    if pooled:
        monkeypatch.setattr(readers, "POOL_THRESHOLD_BYTES", 0)
    # A file written in the last SETTLE_SECONDS may be mid-write, and its unfinished last line
    # waits (a clone made seconds ago): the golden is that of settled files.
    newest = max(p.stat().st_mtime for p in corpus.rglob("*") if p.is_file())
    time.sleep(max(0.0, newest + SETTLE_SECONDS + 0.5 - time.time()))
    got = build_summary(corpus, tmp_path / "data", workers=2 if pooled else 1)
    if os.environ.get("AGTAIL_WRITE_GOLDEN") == "1" and not pooled:
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert got["counts"] == expected["counts"]
    assert got["digests"] == expected["digests"]
    assert all(
        got["counts"]["hits"][k] > 0
        for k in ("phrase:error", "phrase:更新", "prefix:ファイル名", "prefix:test")
    )
