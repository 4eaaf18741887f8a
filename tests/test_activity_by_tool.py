"""`stats --by tool` groups the tool columns in SQL: the answer must equal counting every
stored tool call decoded (as it was done before the columns), on the sample corpus, and an
index made before the columns gets them filled by its migration."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from agtaild.config import Config, RootSpec
from agtaild.index import schema
from agtaild.index.activity import by_tool, tool_of
from agtaild.query.service import Service


def _index(corpus: Path, data: Path) -> Path:
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    config = Config(data_dir=str(data), roots=roots, archive=False)
    svc = Service(config)
    try:
        svc.update_index()
    finally:
        svc.close()
    return Path(config.index_path)


def _decoded(db: sqlite3.Connection) -> dict[str, Any]:
    calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    agents: dict[str, Counter[str]] = {}
    for agent, data in db.execute(
        "SELECT s.agent, e.data FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.kind = 'tool_use'"
    ):
        tool, failed = tool_of(data)
        key = tool or "(unknown)"
        calls[key] += 1
        errors[key] += failed
        agents.setdefault(key, Counter())[agent] += 1
    return {k: (calls[k], errors[k], dict(agents[k])) for k in calls}


def _grouped(db: sqlite3.Connection) -> dict[str, Any]:
    doc = by_tool(db)
    assert doc["totals"]["calls"] == sum(r["calls"] for r in doc["rows"])
    return {r["key"]: (r["calls"], r["errors"], r["agents"]) for r in doc["rows"]}


def test_by_tool_equals_decoding_every_call(corpus: Path, tmp_path: Path) -> None:
    db = sqlite3.connect(str(_index(corpus, tmp_path / "data")))
    try:
        expected = _decoded(db)
        assert sum(c for c, _e, _a in expected.values()) > 500 and any(e for _c, e, _a in expected.values())
        assert _grouped(db) == expected
        plan = " ".join(
            r[3]
            for r in db.execute(
                "EXPLAIN QUERY PLAN SELECT count(*) FROM events WHERE kind = 'tool_use' AND tool = 'Bash'"
            )
        )
        assert "events_tools" in plan
    finally:
        db.close()


def test_an_older_index_gets_the_columns_filled(corpus: Path, tmp_path: Path) -> None:
    path = _index(corpus, tmp_path / "data")
    db = sqlite3.connect(str(path))
    try:
        expected = _grouped(db)
        # The index as it was before m007_tools: no columns, no index, migration not applied
        # (nor the later m010_tool_category, whose index holds those columns).
        db.execute("DROP INDEX events_tool_categories")
        db.execute("ALTER TABLE events DROP COLUMN tool_category")
        db.execute("DELETE FROM _migrations WHERE name = 'm010_tool_category'")
        db.execute("DROP INDEX events_tools")
        db.execute("ALTER TABLE events DROP COLUMN tool")
        db.execute("ALTER TABLE events DROP COLUMN tool_failed")
        db.execute("DELETE FROM _migrations WHERE name = 'm007_tools'")
        db.commit()
        schema.migrate(db)
        assert _grouped(db) == expected
    finally:
        db.close()
