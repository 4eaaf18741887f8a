"""Builds demo/.crush/crush.db: a hand-made Crush database (no real sample could be recorded:
the Crush binary could not be installed offline). Schema from charmbracelet/crush
internal/db/migrations (initial + provider, is_summary_message, summary_message_id, todos,
read_files); parts as {type, data} per internal/message/content.go (FORMATS-longtail §9).
Run: python3 build_crush_db.py (rewrites the file)."""

import json
import sqlite3
from pathlib import Path

DB = Path(__file__).parent / "demo" / ".crush" / "crush.db"
DB.unlink(missing_ok=True)
conn = sqlite3.connect(DB)
conn.executescript(
    """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE messages (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL DEFAULT '[]',
    model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER,
    provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE read_files (session_id TEXT NOT NULL, path TEXT NOT NULL, read_at INTEGER NOT NULL);
"""
)


def parts(*items):
    return json.dumps([{"type": t, "data": d} for t, d in items], separators=(",", ":"))  # Go's compact JSON


T = 1764500000  # seconds; most message times below are milliseconds, as Crush writes them
MAIN, CHILD, STOPPED = "8a1f0c3e-5b2d-4e61-9f70-1c2d3e4f5a6b", "call_agent_01", "b7c6d5e4-0000-4000-8000-00000000beef"
conn.execute(
    "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    (MAIN, None, "Fix the failing build", 7, 18200, 640, 0.0412, T + 95, T, "m-sum", None),
)
conn.execute(
    "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    (CHILD, MAIN, "New Agent Session", 3, 4100, 120, 0.0051, T + 40, T + 20, None, None),
)
conn.execute(
    "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    (STOPPED, None, "Refactor the config loader", 2, 3000, 15, 0.002, T + 300, T + 200, None, None),
)
M = "claude-sonnet-4-5-20250929"
rows = [
    ("m1", MAIN, "user", parts(("text", {"text": "The build fails on main. Fix it."})), None, T * 1000 + 1000),
    ("m2", MAIN, "assistant", parts(
        ("reasoning", {"thinking": "Check the build output first.", "started_at": T * 1000 + 2000, "finished_at": T * 1000 + 2500}),
        ("text", {"text": "Let me run the build."}),
        ("tool_call", {"id": "call_bash_01", "name": "bash", "input": json.dumps({"command": "go build ./..."}), "finished": True}),
        ("finish", {"reason": "tool_use", "time": T + 3}),
    ), M, T * 1000 + 3000),
    ("m3", MAIN, "tool", parts(("tool_result", {"tool_call_id": "call_bash_01", "name": "bash", "content": "main.go:12: undefined: cfg", "is_error": True})), None, T * 1000 + 9000),
    ("m4", MAIN, "assistant", parts(
        ("tool_call", {"id": CHILD, "name": "agent", "input": json.dumps({"prompt": "Find where cfg is defined"}), "finished": True}),
        ("finish", {"reason": "tool_use", "time": T + 10}),
    ), M, T * 1000 + 10000),
    ("c1", CHILD, "user", parts(("text", {"text": "Find where cfg is defined"})), None, (T + 20) * 1000),
    ("c2", CHILD, "assistant", parts(
        ("tool_call", {"id": "call_grep_01", "name": "grep", "input": json.dumps({"pattern": "cfg :="}), "finished": True}),
        ("finish", {"reason": "tool_use", "time": T + 21}),
    ), M, (T + 21) * 1000),
    ("c3", CHILD, "tool", parts(("tool_result", {"tool_call_id": "call_grep_01", "name": "grep", "content": "config.go:8: cfg := load()", "is_error": False})), None, (T + 22) * 1000),
    ("c4", CHILD, "assistant", parts(("text", {"text": "cfg is defined in config.go:8."}), ("finish", {"reason": "end_turn", "time": T + 23})), M, (T + 23) * 1000),
    ("m5", MAIN, "tool", parts(("tool_result", {"tool_call_id": CHILD, "name": "agent", "content": "cfg is defined in config.go:8.", "is_error": False})), None, (T + 40) * 1000),
    ("m6", MAIN, "assistant", parts(("text", {"text": "Fixed: main.go now imports the config package."}), ("finish", {"reason": "end_turn", "time": T + 60})), M, (T + 60) * 1000),
    ("m-sum", MAIN, "assistant", parts(("text", {"text": "Summary: the build failed on an undefined cfg; fixed by importing config."}), ("finish", {"reason": "end_turn", "time": T + 95})), M, (T + 95) * 1000),
    ("s1", STOPPED, "user", parts(("text", {"text": "Refactor the config loader"}), ("binary", {"Path": "diagram.png", "MIMEType": "image/png", "Data": "iVBORw0KGgo="})), None, T + 200),
    ("s2", STOPPED, "assistant", parts(("text", {"text": "Starting with load()"}), ("finish", {"reason": "canceled", "time": T + 205})), M, T + 205),
]
for mid, sid, role, p, model, created in rows:
    summary = 1 if mid == "m-sum" else 0
    provider = "anthropic" if model else None
    conn.execute(
        "INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?)",
        (mid, sid, role, p, model, created, created, created if role == "assistant" else None, provider, summary),
    )
conn.commit()
conn.close()
