#!/usr/bin/env python3
"""Read speed of the OpenClaw, gptme, Hermes Agent, Open Interpreter and CodeBuddy formats (issue 29),
next to the Claude Code adapter on the same machine in the same run.

Each format gets one synthetic session of about ``--mb`` MB made by repeating the records of
its real recording (tests/corpus/real): gptme's ``basic`` conversation lines, Hermes's
``basic`` message rows (in a database holding only the ``sessions`` and ``messages`` tables, so
its size is what is read, not Hermes's full-text indexes), OpenClaw's ``basic`` transcript rows
(ids renumbered so the tree stays one chain), Open Interpreter's code-block conversation,
CodeBuddy's basic session lines. It is
read from scratch ``--repeat`` times; the best CPU time counts. Claude is measured the same way
on a repeated real Claude Code 2.1.197 transcript (bench/adapters_c_read_speed.py's reference).
Run from the repo: ``.venv/bin/python bench/adapters_d_read_speed.py --mb 8``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.base import Adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.codebuddy import CodeBuddyAdapter
from agtaild.adapters.gptme import GptmeAdapter
from agtaild.adapters.hermes import HermesAdapter
from agtaild.adapters.open_interpreter import OpenInterpreterAdapter
from agtaild.adapters.openclaw import OpenClawAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl

REAL = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "real"
CLAUDE = REAL / "claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"


def _schema(db: Path, tables: list[str]) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [conn.execute("SELECT sql FROM sqlite_master WHERE name=?", (t,)).fetchone()[0] for t in tables]


def hermes_db(dst: Path, mb: float) -> None:
    src = REAL / "hermes-0.19.0/state.db"
    sid = "20261201_210116_96277f"
    dst.parent.mkdir(parents=True)
    with sqlite3.connect(src) as old:
        session = old.execute("SELECT * FROM sessions WHERE id=?", (sid,)).fetchone()
        old.row_factory = sqlite3.Row
        rows = [dict(r) for r in old.execute("SELECT * FROM messages WHERE session_id=? ORDER BY id", (sid,))]
    one = sum(len(json.dumps(r)) for r in rows)
    with sqlite3.connect(dst) as conn:
        for sql in _schema(src, ["sessions", "messages"]):
            conn.execute(sql)
        conn.execute(f"INSERT INTO sessions VALUES ({','.join('?' * len(session))})", session)
        for i in range(max(1, int(mb * 1e6 / one))):
            for r in rows:
                r = {**r, "id": None}
                if r["tool_calls"]:
                    r["tool_calls"] = r["tool_calls"].replace('"call_', f'"c{i}_')
                if r["tool_call_id"]:
                    r["tool_call_id"] = r["tool_call_id"].replace("call_", f"c{i}_")
                conn.execute(f"INSERT INTO messages ({','.join(r)}) VALUES ({','.join('?' * len(r))})", list(r.values()))


def openclaw_db(dst: Path, mb: float) -> None:
    src = REAL / "openclaw-2026.9.6/agents/main/agent/openclaw-agent.sqlite"
    dst.parent.mkdir(parents=True)
    with sqlite3.connect(src) as old:
        rows = [r[0] for r in old.execute("SELECT event_json FROM transcript_events WHERE session_id='basic' ORDER BY seq")]
    header, body = rows[0], rows[1:]
    one = sum(len(r) for r in body)
    with sqlite3.connect(dst) as conn:
        conn.execute("CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT, created_at INTEGER,"
                     " event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT)")  # fmt: skip
        conn.execute("INSERT INTO transcript_events VALUES ('big', 0, ?, 1796157108988, NULL, NULL, NULL)", (header,))
        seq = 0
        for i in range(max(1, int(mb * 1e6 / one))):
            for text in body:
                entry = json.loads(text.replace('"call_', f'"c{i}_'))
                seq += 1
                entry["id"], entry["parentId"] = f"e{seq}", (f"e{seq - 1}" if seq > 1 else None)
                conn.execute("INSERT INTO transcript_events VALUES ('big', ?, ?, ?, NULL, NULL, NULL)",
                             (seq, json.dumps(entry, ensure_ascii=False), 1796157108988 + seq))  # fmt: skip


def oi_doc(dst: Path, mb: float) -> None:
    src = next((REAL / "open-interpreter-0.4.3/conversations").glob("*20-36-54.json"))
    items = json.loads(src.read_text(encoding="utf-8"))
    one = len(json.dumps(items, ensure_ascii=False).encode())
    dst.parent.mkdir(parents=True)
    dst.write_text(json.dumps(items * max(1, int(mb * 1e6 / one)), ensure_ascii=False), encoding="utf-8")


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    repeat_jsonl(REAL / "gptme-0.35.1/logs/basic/conversation.jsonl", work / "gptme/big/conversation.jsonl", mb, head=8)
    out["gptme conversation.jsonl"] = (GptmeAdapter(), work / "gptme")
    hermes_db(work / "hermes/state.db", mb)
    out["hermes state.db"] = (HermesAdapter(), work / "hermes")
    openclaw_db(work / "openclaw/openclaw-agent.sqlite", mb)
    out["openclaw openclaw-agent.sqlite"] = (OpenClawAdapter(), work / "openclaw")
    oi_doc(work / "oi/big__December_01_2026_20-36-54.json", mb)
    out["open-interpreter conversation .json"] = (OpenInterpreterAdapter(), work / "oi")
    cb = next((REAL / "codebuddy-2.163.0/projects").glob("*/01a233f8-aed1-72a0-83a8-800eccf3a709.jsonl"))
    repeat_jsonl(cb, work / "codebuddy/p/big.jsonl", mb, head=0)
    out["codebuddy session JSONL"] = (CodeBuddyAdapter(), work / "codebuddy")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=8.0)


if __name__ == "__main__":
    sys.exit(main())
