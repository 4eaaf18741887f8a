"""Builds warp-terminal/warp.sqlite: a hand-made Warp state database (no real sample could be
recorded: Warp is a desktop terminal that does not install from npm or PyPI here, and its agent
talks only to Warp's service). The four tables the adapter reads are written with the columns
and types of warpdotdev/warp (commit 19548ae) crates/persistence/src/schema.rs, in its column
order (the DDL itself is written from that, not replayed from the 200-odd migrations); the JSON
cells as the app serialises them: ai_queries.input = Vec<PersistedAIInputType>, output_status =
AIQueryHistoryOutputStatus (app/src/ai/blocklist/persistence.rs, history_model.rs),
agent_conversations.conversation_data = AgentConversationData and summary =
AgentConversationSummary (crates/persistence/src/model.rs), blocks.ai_metadata =
SerializedAIMetadata (app/src/terminal/model/block/serialized_block.rs); times as diesel writes
a chrono NaiveDateTime (UTC). agent_tasks.task holds protobuf bytes made up here (Warp's
multi-agent .proto lives in warp-proto-apis, not read here). Run: python3 build_warp_db.py (rewrites the file)."""

import json
import sqlite3
from pathlib import Path

DB = Path(__file__).parent / "warp-terminal" / "warp.sqlite"
for suffix in ("", "-wal", "-shm", "-journal"):
    Path(str(DB) + suffix).unlink(missing_ok=True)
conn = sqlite3.connect(DB)
conn.executescript(
    """
CREATE TABLE agent_conversations (
    id INTEGER PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL,
    conversation_data TEXT NOT NULL,
    last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    summary TEXT
);
CREATE UNIQUE INDEX ux_agent_conversations_conversation_id ON agent_conversations (conversation_id);
CREATE TABLE agent_tasks (
    id INTEGER PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task BLOB NOT NULL,
    last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (conversation_id) REFERENCES agent_conversations (conversation_id)
);
CREATE UNIQUE INDEX ux_agent_tasks_task_id ON agent_tasks (task_id);
CREATE TABLE ai_queries (
    id INTEGER PRIMARY KEY NOT NULL,
    exchange_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    start_ts TIMESTAMP NOT NULL,
    input TEXT NOT NULL,
    working_directory TEXT,
    output_status TEXT NOT NULL,
    model_id TEXT NOT NULL DEFAULT '',
    planning_model_id TEXT NOT NULL DEFAULT '',
    coding_model_id TEXT NOT NULL DEFAULT ''
);
CREATE TABLE blocks (
    id INTEGER PRIMARY KEY,
    pane_leaf_uuid BLOB NOT NULL,
    stylized_command BLOB NOT NULL,
    stylized_output BLOB NOT NULL,
    pwd TEXT,
    git_branch TEXT,
    virtual_env TEXT,
    conda_env TEXT,
    exit_code INTEGER NOT NULL,
    did_execute BOOLEAN NOT NULL,
    completed_ts DATETIME,
    start_ts DATETIME,
    ps1 TEXT,
    honor_ps1 BOOLEAN NOT NULL DEFAULT FALSE,
    shell TEXT,
    user TEXT,
    host TEXT,
    is_background BOOLEAN NOT NULL DEFAULT FALSE,
    rprompt TEXT,
    prompt_snapshot TEXT,
    block_id TEXT NOT NULL DEFAULT '',
    ai_metadata TEXT,
    is_local BOOLEAN,
    agent_view_visibility TEXT,
    git_branch_name TEXT
);
"""
)


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


MAIN, CHILD, OLD, FORK = (
    "6f1d2c3b-4a59-4e7f-8123-9abcdef01234", "7a2e3d4c-5b6a-4f80-9234-abcdef012345",
    "8b3f4e5d-6c7b-4091-a345-bcdef0123456", "9c4a5f6e-7d8c-41a2-b456-cdef01234567",
)  # fmt: skip
CWD = "/home/dev/shop"
PANE = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")


def usage(tokens, credits):
    return {"was_summarized": False, "context_window_usage": 0.12, "credits_spent": credits, "platform_credits_spent": 0.0,
            "credits_spent_for_last_block": 1.0,
            "token_usage": [{"model_id": "claude-4-sonnet", "warp_tokens": tokens, "byok_tokens": 0, "custom_endpoint_tokens": 0,
                             "warp_token_usage_by_category": {"primary_agent": tokens}, "byok_token_usage_by_category": {},
                             "custom_endpoint_token_usage_by_category": {}}],
            "tool_usage_metadata": {}, "context_window_segments": []}  # fmt: skip


conversations = [
    (
        MAIN,
        {"server_conversation_token": "main01", "conversation_usage_metadata": usage(18250, 4.0)},
        "2026-11-30 09:12:40.250000",
        {
            "initial_query": "Why do the cart tests fail?",
            "title": "Fix failing cart tests",
            "initial_working_directory": CWD,
            "is_restorable": True,
        },
    ),
    (
        CHILD,
        {
            "server_conversation_token": "child01",
            "parent_agent_id": "main01",
            "agent_name": "test-runner",
            "orchestration_harness_type": "warp",
            "parent_conversation_id": MAIN,
        },
        "2026-11-30 09:11:30.000000",
        {
            "initial_query": "",
            "title": "Run the cart tests",
            "initial_working_directory": CWD,
            "is_restorable": True,
        },
    ),
    (
        FORK,
        {
            "server_conversation_token": "fork01",
            "forked_from_server_conversation_token": "main01",
        },
        "2026-11-30 10:00:05.000000",
        {
            "initial_query": "Try a different fix",
            "title": "Try a different fix",
            "initial_working_directory": CWD,
            "is_restorable": True,
        },
    ),
]
for cid, data, modified, summary in conversations:
    conn.execute("INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at, summary) VALUES (?, ?, ?, ?)",
                 (cid, dumps(data), modified, dumps(summary)))  # fmt: skip


def query(exchange, cid, ts, text, status, cwd=CWD, model="claude-4-sonnet", context=()):
    inputs = [{"Query": {"text": text, "context": list(context), "referenced_attachments": {}}}]
    conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, output_status,"
                 " model_id, planning_model_id, coding_model_id) VALUES (?, ?, ?, ?, ?, ?, ?, '', ?)",
                 (exchange, cid, ts, dumps(inputs), cwd, dumps(status), model, model))  # fmt: skip


query("e-0001", MAIN, "2026-11-30 09:10:00.000000", "Why do the cart tests fail?", "Completed",
      context=[{"Directory": {"pwd": CWD, "home_dir": "/home/dev"}}, {"Git": {"head": "main"}}])  # fmt: skip
query("e-0002", MAIN, "2026-11-30 09:12:00.500000", "Good, commit the fix", "Completed")
query("e-0101", FORK, "2026-11-30 10:00:00.000000", "Try a different fix", "Cancelled")
# An older conversation known only from ai_queries (no agent_conversations row any more).
query(
    "e-0201",
    OLD,
    "2026-10-02 15:00:00.000000",
    "list the biggest files here",
    "Completed",
    cwd="/home/dev/media",
    model="gpt-4o",
)
query(
    "e-0202",
    OLD,
    "2026-10-02 15:01:00.000000",
    "now delete the logs",
    "Failed",
    cwd="/home/dev/media",
    model="gpt-4o",
)
conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, output_status, model_id)"
             " VALUES ('e-0203', ?, '2026-10-02 15:02:00', '[{\"Query\": {\"text\": \"cut sh', '/home/dev/media', '\"Pending\"', 'gpt-4o')",
             (OLD,))  # fmt: skip


def meta(cid, action, task=None):
    return dumps({"requested_command_action_id": action, "conversation_id": cid, "subagent_task_id": task,
                  "long_running_control_state": None, "has_agent_written_to_block": False})  # fmt: skip


def block(block_id, command, output, code, start, done, ai_metadata, pwd=CWD):
    conn.execute("INSERT INTO blocks (pane_leaf_uuid, stylized_command, stylized_output, pwd, git_branch, exit_code, did_execute,"
                 " completed_ts, start_ts, honor_ps1, shell, user, host, is_background, block_id, ai_metadata, is_local,"
                 " git_branch_name) VALUES (?, ?, ?, ?, 'a1b2c3d', ?, 1, ?, ?, 0, 'zsh', 'dev', 'laptop', 0, ?, ?, 1, 'main')",
                 (PANE, command.encode(), output.encode(), pwd, code, done, start, block_id, ai_metadata))  # fmt: skip


# The user's own command (no ai_metadata): not part of any conversation.
block(
    "precmd-0001",
    "ls",
    "cart.py  tests\n",
    0,
    "2026-11-30 09:09:00.000000",
    "2026-11-30 09:09:00.100000",
    None,
)
block("precmd-0002", "\x1b[1mpytest -q tests/test_cart.py\x1b[0m",
      "\x1b[31mF\x1b[0m.\r\n\x1b[31mFAILED tests/test_cart.py::test_total - assert 9 == 10\x1b[0m\r\n1 failed, 1 passed in 0.05s\r\n", 1,
      "2026-11-30 09:10:05.000000", "2026-11-30 09:10:06.200000", meta(MAIN, "toolu_run_01"))  # fmt: skip
block("precmd-0003", "sed -i 's/round(total)/total/' cart.py", "", 0,
      "2026-11-30 09:10:30.000000", "2026-11-30 09:10:30.050000", meta(MAIN, "toolu_run_02"))  # fmt: skip
block("precmd-0004", "pytest -q tests/test_cart.py", "..\r\n2 passed in 0.04s\r\n", 0,
      "2026-11-30 09:11:10.000000", "2026-11-30 09:11:11.000000", meta(CHILD, "toolu_run_03", task="task-child-01"))  # fmt: skip
block("precmd-0005", "git commit -am 'cart: keep cents'", "[main 4e5f6a7] cart: keep cents\r\n 1 file changed\r\n", 0,
      "2026-11-30 09:12:10.000000", "2026-11-30 09:12:10.300000", meta(MAIN, "toolu_run_04"))  # fmt: skip
block("precmd-0006", "du -sh * | sort -h | tail -3", "1.2G\tvideos\r\n", 0,
      "2026-10-02 15:00:05.000000", "2026-10-02 15:00:07.000000", meta(OLD, "call_du"), pwd="/home/dev/media")  # fmt: skip
block(
    "precmd-0007", "echo hi", "hi\r\n", 0, "2026-11-30 11:00:00", "2026-11-30 11:00:00.010000", "null"
)  # serde's None

# Task bodies: protobuf bytes of Warp's multi-agent Task (field 1 = the task id); made up here.
for cid, task_id, ts in (
    (MAIN, "task-main-01", "2026-11-30 09:12:40.250000"),
    (CHILD, "task-child-01", "2026-11-30 09:11:30.000000"),
):
    body = b"\x0a" + bytes([len(task_id)]) + task_id.encode() + b"\x12\x04root"
    conn.execute(
        "INSERT INTO agent_tasks (conversation_id, task_id, task, last_modified_at) VALUES (?, ?, ?, ?)",
        (cid, task_id, body, ts),
    )
conn.commit()
conn.close()
