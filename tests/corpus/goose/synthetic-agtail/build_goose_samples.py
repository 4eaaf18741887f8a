"""Builds .local/share/goose/sessions/{sessions.db, 20250301_legacy.jsonl}: hand-made Goose
samples (no real Goose could be recorded). Schema: block/goose
crates/goose/src/session/session_manager.rs (create + migrations to v5) plus the later
columns model_config_json, provider_name, accumulated_cost (FORMATS-longtail §12); message
content per crates/goose/src/conversation/message.rs serde tags.
Run: python3 build_goose_samples.py (rewrites both files)."""

import json
import sqlite3
from pathlib import Path

DIR = Path(__file__).parent / ".local" / "share" / "goose" / "sessions"
DB = DIR / "sessions.db"
DB.unlink(missing_ok=True)
conn = sqlite3.connect(DB)
conn.executescript(
    """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (5);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT,
    provider_name TEXT, model_config_json TEXT, accumulated_cost REAL);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER, metadata_json TEXT);
"""
)
T = 1764500000
model = json.dumps({"model_name": "gpt-4o", "context_limit": 128000, "temperature": None})
conn.execute(
    "INSERT INTO sessions (id, name, user_set_name, session_type, working_dir, created_at, updated_at,"
    " total_tokens, input_tokens, output_tokens, accumulated_total_tokens, accumulated_input_tokens,"
    " accumulated_output_tokens, provider_name, model_config_json, accumulated_cost)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    ("20251130_1", "List the repo files", False, "user", "/home/dev/src/goose-demo", "2025-11-30 10:53:20",
     "2025-11-30 10:54:10", 5200, 5000, 200, 9800, 9400, 400, "openai", model, 0.0275),
)
conn.execute(
    "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, input_tokens, output_tokens)"
    " VALUES (?,?,?,?,?,?,?,?)",
    ("20251130_2", "", "sub_agent", "/home/dev/src/goose-demo", "2025-11-30 10:55:00", "2025-11-30 10:55:30", 700, 30),
)
msgs = [
    ("20251130_1", "user", [{"type": "text", "text": "List the files in this repo"}], T + 1),
    ("20251130_1", "assistant", [
        {"type": "thinking", "thinking": "Use the shell tool.", "signature": "sig"},
        {"type": "text", "text": "Listing them."},
        {"type": "toolRequest", "id": "toolu_01", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "ls"}}}},
    ], T + 2),
    ("20251130_1", "user", [{"type": "toolResponse", "id": "toolu_01", "toolResult": {"status": "success", "value": [{"type": "text", "text": "README.md\nsrc"}]}}], T + 3),
    ("20251130_1", "assistant", [
        {"type": "toolRequest", "id": "toolu_02", "toolCall": {"status": "success", "value": {"name": "developer__text_editor", "arguments": {"command": "view", "path": "missing.md"}}}},
    ], T + 4),
    ("20251130_1", "user", [{"type": "toolResponse", "id": "toolu_02", "toolResult": {"status": "error", "error": "File not found: missing.md"}}], T + 5),
    ("20251130_1", "assistant", [{"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Context compacted"}, {"type": "summarizationRequested", "msg": ""}], T + 6),
    ("20251130_1", "assistant", [{"type": "text", "text": "The repo has README.md and src/."}], T + 50),
    ("20251130_2", "user", [{"type": "text", "text": "Count the files"}], T + 100),
    ("20251130_2", "assistant", [{"type": "toolRequest", "id": "toolu_03", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "ls | wc -l"}}}}], T + 101),
]
for sid, role, content, ts in msgs:
    conn.execute(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?,?,?,?,?)",
        (sid, role, json.dumps(content), ts, json.dumps({"userVisible": True, "agentVisible": True})),
    )
conn.commit()
conn.close()

legacy = [
    {"working_dir": "/home/dev/src/old-demo", "description": "Explain the Makefile", "schedule_id": None,
     "message_count": 2, "total_tokens": 1500, "input_tokens": 1400, "output_tokens": 100,
     "accumulated_total_tokens": 1500, "accumulated_input_tokens": 1400, "accumulated_output_tokens": 100},
    {"role": "user", "created": 1740800000, "content": [{"type": "text", "text": "Explain the Makefile"}]},
    {"role": "assistant", "created": 1740800005, "content": [{"type": "text", "text": "It builds the docs and runs the tests."}]},
]
(DIR / "20250301_legacy.jsonl").write_text("".join(json.dumps(x) + "\n" for x in legacy))
