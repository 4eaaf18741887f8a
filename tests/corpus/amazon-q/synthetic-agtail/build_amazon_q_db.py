"""Builds data.sqlite3: a hand-made Amazon Q Developer CLI database (no real sample could be
recorded: `q` is a Rust binary that does not install from npm or PyPI here, and it talks only to
Amazon's service). Schema from aws/amazon-q-developer-cli (commit 15cc8f3, q 1.19.7)
crates/chat-cli/src/database/sqlite_migrations 000–007; each value is a ConversationState as
serde_json writes it (cli/chat/conversation.rs, message.rs, parser.rs RequestMetadata: fields in
declaration order, enums externally tagged, None fields as null unless skipped).
Run: python3 build_amazon_q_db.py (rewrites the file)."""

import json
import sqlite3
from pathlib import Path

DB = Path(__file__).parent / "data.sqlite3"
for suffix in ("", "-wal", "-shm", "-journal"):
    Path(str(DB) + suffix).unlink(missing_ok=True)
conn = sqlite3.connect(DB)
MIGRATIONS = [
    "CREATE TABLE IF NOT EXISTS migrations (\n    id INTEGER PRIMARY KEY,\n    version INTEGER NOT NULL,\n    migration_time INTEGER NOT NULL\n);",
    "CREATE TABLE IF NOT EXISTS history (\n    id INTEGER PRIMARY KEY,\n    command TEXT,\n    shell TEXT,\n    pid INTEGER,\n"
    "    session_id TEXT,\n    cwd TEXT,\n    time INTEGER,\n    in_ssh INTEGER,\n    in_docker INTEGER,\n    hostname TEXT,\n"
    "    exit_code INTEGER\n);",
    "ALTER TABLE history DROP COLUMN in_ssh;\nALTER TABLE history DROP COLUMN in_docker;",
    "ALTER TABLE history RENAME COLUMN time TO start_time;\nALTER TABLE history ADD COLUMN end_time INTEGER;\n"
    "ALTER TABLE history ADD COLUMN duration INTEGER;",
    "CREATE TABLE state (\n    key TEXT PRIMARY KEY,\n    value TEXT\n);",
    "CREATE TABLE auth_kv (\n    key TEXT PRIMARY KEY,\n    value TEXT\n);",
    "ALTER TABLE state RENAME TO state_old;\nCREATE TABLE state (\n    key TEXT PRIMARY KEY,\n    value BLOB\n);\n"
    "INSERT INTO state SELECT key, value FROM state_old;\nDROP TABLE state_old;",
    "CREATE TABLE conversations (\n    key TEXT PRIMARY KEY,\n    value TEXT\n);",
]
for version, sql in enumerate(MIGRATIONS):
    conn.executescript(sql)
    conn.execute("INSERT INTO migrations (version, migration_time) VALUES (?, 1764400000)", (version,))


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


MODEL = "claude-sonnet-4"
T0 = 1764453900000  # 2025-11-29T22:05:00Z, in ms


def env(cwd):
    return {
        "env_state": {
            "operating_system": "linux",
            "current_working_directory": cwd,
            "environment_variables": [],
        }
    }


def user(cwd, content, ts, images=None):
    return {
        "additional_context": "",
        "env_context": env(cwd),
        "content": content,
        "timestamp": ts,
        "images": images,
    }


def prompt(text):
    return {"Prompt": {"prompt": text}}


def results(*items):
    return {"ToolUseResults": {"tool_use_results": list(items)}}


def ok(call_id, *blocks, status="Success"):
    return {"tool_use_id": call_id, "content": list(blocks), "status": status}


def use(call_id, name, args):
    return {"id": call_id, "name": name, "orig_name": name, "args": args, "orig_args": args}


def tool_use(message_id, content, *uses):
    return {"ToolUse": {"message_id": message_id, "content": content, "tool_uses": list(uses)}}


def response(message_id, content):
    return {"Response": {"message_id": message_id, "content": content}}


def meta(n, start, uses=(), model=MODEL, size=400):
    return {
        "request_id": f"req-{n:04d}", "message_id": f"msg-{n:04d}", "request_start_timestamp_ms": start,
        "stream_end_timestamp_ms": start + 2500, "time_to_first_chunk": {"secs": 0, "nanos": 812000000},
        "time_between_chunks": [{"secs": 0, "nanos": 21000000}], "user_prompt_length": 120, "response_size": size,
        "chat_conversation_type": "ToolUse" if uses else "NotToolUse",
        "tool_use_ids_and_names": [[u["id"], u["name"]] for u in uses], "model_id": model, "message_meta_tags": [],
    }  # fmt: skip


def entry(u, a, m):
    return {"user": u, "assistant": a, "request_metadata": m}


def state(cid, history, *, next_message=None, summary=None, transcript=(), model_info=True, window=None):
    doc = {
        "conversation_id": cid, "next_message": next_message, "history": history,
        "valid_history_range": window or [0, len(history)], "transcript": list(transcript),
        "tools": {"native___": [{"ToolSpecification": {"name": "fs_read", "description": "Read files.", "input_schema": {"json": {"type": "object"}}}}]},
        "context_manager": None, "context_message_length": None, "latest_summary": summary,
    }  # fmt: skip
    if model_info:
        doc["model_info"] = {
            "model_name": "claude-sonnet-4",
            "model_id": MODEL,
            "context_window_tokens": 200000,
        }
    doc.update({"file_line_tracker": {}, "checkpoint_manager": None, "mcp_enabled": True})
    return doc


API = "/home/dev/demo-api"
c1 = [
    use("tooluse_think1", "thinking", {"thought": "Read the handler first, then fix the status code."}),
    use("tooluse_read1", "fs_read", {"operations": [{"mode": "Line", "path": f"{API}/app.py"}]}),
]
c2 = [use("tooluse_bash1", "execute_bash", {"command": "python -m pytest -q", "summary": "Run the tests"})]
c3 = [
    use(
        "tooluse_write1",
        "fs_write",
        {
            "command": "str_replace",
            "path": f"{API}/app.py",
            "old_str": "    return 500",
            "new_str": "    return 200",
            "summary": "Fix the status",
        },
    )
]
c4 = [
    use(
        "tooluse_write2",
        "fs_write",
        {
            "command": "create",
            "path": f"{API}/CHANGES.md",
            "file_text": "# Changes\n\n- health returns 200\n",
        },
    )
]
c5 = [use("tooluse_bash2", "execute_bash", {"command": "python -c 'import app; print(app.health())'"})]
history1 = [
    entry(
        user(API, prompt("The /health endpoint returns 500, fix it"), "2025-11-29T14:05:00.120000000-08:00"),
        tool_use("msg-0001", "Let me look at the handler.", *c1),
        meta(1, T0, c1),
    ),
    entry(
        user(
            API,
            results(
                ok("tooluse_think1", {"Text": ""}),
                ok("tooluse_read1", {"Text": "def health():\n    return 500\n"}),
            ),
            "2025-11-29T14:05:03.500000000-08:00",
        ),
        tool_use("msg-0002", "", *c2),
        meta(2, T0 + 4000, c2),
    ),
    entry(
        user(
            API,
            results(
                ok(
                    "tooluse_bash1",
                    {
                        "Json": {
                            "exit_status": "1",
                            "stdout": "",
                            "stderr": "/usr/bin/python: No module named pytest",
                        }
                    },
                )
            ),
            "2025-11-29T14:05:09.000000000-08:00",
        ),
        tool_use("msg-0003", "pytest is not installed; fixing the code directly.", *c3),
        meta(3, T0 + 9500, c3),
    ),
    entry(
        user(API, results(ok("tooluse_write1", {"Text": ""})), "2025-11-29T14:05:14.000000000-08:00"),
        tool_use("msg-0004", "", *c4),
        meta(4, T0 + 14500, c4),
    ),
    entry(
        user(API, results(ok("tooluse_write2", {"Text": ""})), "2025-11-29T14:05:18.000000000-08:00"),
        response("msg-0005", "Fixed: `health()` now returns 200, noted in CHANGES.md."),
        meta(5, T0 + 18500),
    ),
    entry(
        user(API, prompt("Check it by calling health()"), "2025-11-29T14:06:00.000000000-08:00"),
        tool_use("msg-0006", "", *c5),
        meta(6, T0 + 60500, c5),
    ),
    entry(
        user(
            API,
            results(ok("tooluse_bash2", {"Json": {"exit_status": "0", "stdout": "200\n", "stderr": ""}})),
            "2025-11-29T14:06:04.000000000-08:00",
        ),
        response("msg-0007", "health() returns 200."),
        meta(7, T0 + 64500),
    ),
]
transcript1 = [
    "> The /health endpoint returns 500, fix it",
    "Let me look at the handler.",
    "> Check it by calling health()",
    "health() returns 200.",
]

NOTES = "/home/dev/notes"
T1 = 1764540000000  # 2025-11-30T22:00:00Z
d1 = [use("tooluse_rm1", "execute_bash", {"command": "rm -rf build/"})]
d2 = [
    use(
        "tooluse_ins1",
        "fs_write",
        {"command": "insert", "path": f"{NOTES}/todo.md", "insert_line": 2, "new_str": "- call the bank"},
    ),
    use(
        "tooluse_app1",
        "fs_write",
        {"command": "append", "path": f"{NOTES}/todo.md", "new_str": "- water plants"},
    ),
]
d3 = [
    use(
        "tooluse_aws1",
        "use_aws",
        {
            "service_name": "s3",
            "operation_name": "list-buckets",
            "region": "us-east-1",
            "label": "List buckets",
        },
    )
]
history2 = [
    entry(
        user(NOTES, prompt("Clean the build folder"), "2025-11-30T23:00:00.000000000+01:00"),
        tool_use("msg-0101", "I'll remove it.", *d1),
        meta(101, T1, d1),
    ),
    entry(
        user(
            NOTES,
            {
                "CancelledToolUses": {
                    "prompt": "No, don't delete anything. Add two todos instead.",
                    "tool_use_results": [
                        ok("tooluse_rm1", {"Text": "Tool use was cancelled by the user"}, status="Error")
                    ],
                }
            },
            "2025-11-30T23:00:20.000000000+01:00",
            images=[{"format": "Png", "source": {"Bytes": [137, 80, 78, 71]}}],
        ),
        tool_use("msg-0102", "Adding them.", *d2),
        meta(102, T1 + 21000, d2),
    ),
    "not a history entry",
    entry(
        user(
            NOTES,
            results(ok("tooluse_ins1", {"Text": ""}), ok("tooluse_app1", {"Text": ""})),
            "2025-11-30T23:00:30.000000000+01:00",
        ),
        tool_use("msg-0103", "Now listing your buckets as asked earlier.", *d3),
        meta(103, T1 + 31000, d3),
    ),
]
summary = [
    "The user keeps a notes folder; earlier we reviewed todo.md and agreed to list S3 buckets.",
    meta(100, T1 - 600000, size=180),
]

rows = [
    (API, dumps(state("c0ffee00-1111-4222-8333-444455556666", history1, transcript=transcript1))),
    (NOTES, dumps(state("d00dfeed-aaaa-4bbb-8ccc-ddddeeeeffff", history2, summary=summary, window=[1, 4]))),
    # A value cut short (a torn write): the row is kept, counted as one bad record.
    ("/home/dev/broken", dumps(state("e1e2e3e4-0000-4000-8000-000000000001", history1))[:900]),
]
conn.executemany("INSERT INTO conversations (key, value) VALUES (?, ?)", rows)
conn.execute("INSERT INTO state (key, value) VALUES ('chat.defaultModel', ?)", (b'"claude-sonnet-4"',))
conn.commit()
conn.close()
