#!/usr/bin/env python3
"""Read speed of the Forge, Amazon Q Developer CLI, Warp and Plandex formats (issue 29), next to
the Claude Code adapter on the same machine in the same run.

None of these agents has a real recording in the corpus, so each format gets one synthetic
session of about ``--mb`` MB made by repeating the records of its hand-made sample
(tests/corpus/<agent>/synthetic-agtail): Forge's main conversation's context messages (tool
call ids renamed per copy) in one ``conversations`` row; Amazon Q's ``/home/dev/demo-api``
history entries (tool use ids renamed per copy) in one ConversationState row; Warp's main
conversation's ``ai_queries`` and ``blocks`` rows (times moved on per copy); Plandex's first
plan folder's message, description and result files (ids and ``num`` renumbered per copy: one
file per record, as the server writes them). It is read from scratch ``--repeat``
times; the best CPU time counts. Claude is measured the same way on a repeated real Claude
Code 2.1.197 transcript (bench/adapters_c_read_speed.py's reference).
Run from the repo: ``.venv/bin/python bench/adapters_g_read_speed.py --mb 8``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.amazon_q import AmazonQAdapter
from agtaild.adapters.base import Adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.forge import ForgeAdapter
from agtaild.adapters.plandex import PlandexAdapter
from agtaild.adapters.warp import WarpAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
CLAUDE = (
    CORPUS
    / "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
)


def forge_db(dst: Path, mb: float) -> None:
    src = CORPUS / "forge/synthetic-agtail/.forge.db"
    main_id = "3f1c2a9e-7b4d-4c1e-9a55-0d2b6e8f1a01"
    dst.parent.mkdir(parents=True)
    with sqlite3.connect(f"file:{src}?mode=ro&immutable=1", uri=True) as old:
        schema = [r[0] for r in old.execute("SELECT sql FROM sqlite_master WHERE name = 'conversations'")]
        row = old.execute("SELECT * FROM conversations WHERE conversation_id = ?", (main_id,)).fetchone()
    context = json.loads(row[3])
    head, body = context["messages"][:2], [m for m in context["messages"][2:] if isinstance(m, dict)]
    one = len(json.dumps(body, separators=(",", ":")))
    copies = max(1, int(mb * 1e6 / one))
    text = json.dumps(body, separators=(",", ":"))
    context["messages"] = head + [
        m for i in range(copies) for m in json.loads(text.replace('"toolu_', f'"t{i}_'))
    ]
    with sqlite3.connect(dst) as conn:
        conn.execute(schema[0])
        conn.execute("INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (row[0], row[1], row[2], json.dumps(context, separators=(",", ":")), row[4], row[5], row[6]))  # fmt: skip


def amazon_q_db(dst: Path, mb: float) -> None:
    src = CORPUS / "amazon-q/synthetic-agtail/data.sqlite3"
    dst.parent.mkdir(parents=True)
    with sqlite3.connect(f"file:{src}?mode=ro&immutable=1", uri=True) as old:
        (value,) = old.execute("SELECT value FROM conversations WHERE key = '/home/dev/demo-api'").fetchone()
    doc = json.loads(value)
    text = json.dumps(doc["history"], separators=(",", ":"))
    copies = max(1, int(mb * 1e6 / len(text)))
    doc["history"] = [e for i in range(copies) for e in json.loads(text.replace('"tooluse_', f'"t{i}_'))]
    doc["valid_history_range"] = [0, len(doc["history"])]
    with sqlite3.connect(dst) as conn:
        conn.execute("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute(
            "INSERT INTO conversations VALUES ('/home/dev/demo-api', ?)",
            (json.dumps(doc, separators=(",", ":")),),
        )


def warp_db(dst: Path, mb: float) -> None:
    src = CORPUS / "warp/synthetic-agtail/warp-terminal/warp.sqlite"
    cid = "6f1d2c3b-4a59-4e7f-8123-9abcdef01234"
    dst.parent.mkdir(parents=True)
    with sqlite3.connect(f"file:{src}?mode=ro&immutable=1", uri=True) as old:
        schema = [r[0] for r in old.execute("SELECT sql FROM sqlite_master WHERE type = 'table'")]
        conversation = old.execute(
            "SELECT * FROM agent_conversations WHERE conversation_id = ?", (cid,)
        ).fetchone()
        queries = old.execute("SELECT * FROM ai_queries WHERE conversation_id = ?", (cid,)).fetchall()
        blocks = old.execute("SELECT * FROM blocks WHERE instr(ai_metadata, ?) > 0", (cid,)).fetchall()
    one = sum(len(str(r)) for r in [*queries, *blocks])
    with sqlite3.connect(dst) as conn:
        for sql in schema:
            conn.execute(sql)
        conn.execute("INSERT INTO agent_conversations VALUES (?, ?, ?, ?, ?)", conversation)
        for i in range(max(1, int(mb * 1e6 / one))):
            day = f"2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
            for q in queries:
                row = (None, f"{q[1]}-{i}", q[2], day + q[3][10:], *q[4:])
                conn.execute(f"INSERT INTO ai_queries VALUES ({','.join('?' * len(row))})", row)
            for b in blocks:
                row = list(b)
                row[0] = None
                row[10], row[11] = day + b[10][10:], day + b[11][10:]
                conn.execute(f"INSERT INTO blocks VALUES ({','.join('?' * len(row))})", row)


def plandex_plan(dst: Path, mb: float) -> None:
    src = (
        CORPUS
        / "plandex/synthetic-agtail/orgs/3c1e9a4f-0b7d-4e2a-9f61-5a8c2d7b1e90/plans/9d2f6b1a-4c3e-4f5a-8b7c-1e2d3f4a5b6c"
    )
    files = {p.relative_to(src): p.read_text(encoding="utf-8") for p in sorted(src.rglob("*.json"))}
    one = sum(len(t) for t in files.values())
    for i in range(max(1, int(mb * 1e6 / one))):
        for rel, text in files.items():
            doc = json.loads(text)
            for key in ("id", "convoMessageId"):
                if isinstance(doc.get(key), str):
                    doc[key] = f"{doc[key]}-{i}"
            if isinstance(doc.get("num"), int):
                doc["num"] += 4 * i
            out = dst / rel.parent / f"{rel.stem}-{i}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    forge_db(work / "forge/.forge.db", mb)
    out["forge .forge.db"] = (ForgeAdapter(), work / "forge")
    amazon_q_db(work / "amazon-q/data.sqlite3", mb)
    out["amazon-q data.sqlite3"] = (AmazonQAdapter(), work / "amazon-q")
    warp_db(work / "warp/warp-terminal/warp.sqlite", mb)
    out["warp warp.sqlite"] = (WarpAdapter(), work / "warp/warp-terminal")
    plandex_plan(work / "plandex/orgs/o/plans/big", mb)
    out["plandex plan folder"] = (PlandexAdapter(), work / "plandex")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=8.0)


if __name__ == "__main__":
    sys.exit(main())
