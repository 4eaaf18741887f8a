"""Builds a Cursor CLI chat store (store.db) the way FORMATS-longtail §1a describes it, for
tests and for the hand-made sample in tests/corpus/cursor/synthetic-agtail/."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tree_node(children: list[str], workspace: str | None = None) -> bytes:
    """A protobuf node: field 1 = each child's 32-byte id, field 9 = the workspace path."""
    data = b"".join(b"\x0a\x20" + bytes.fromhex(c) for c in children)
    if workspace is not None:
        raw = workspace.encode()
        data += b"\x4a" + _varint(len(raw)) + raw
    return data


def make_store(db: Path, agent_id: str, messages: list[dict[str, Any]], *, workspace: str, stale: int = 1) -> str:
    """Write ``db`` with the messages as JSON blobs under one root node (+ ``stale`` old blobs
    no longer reachable). Returns the root blob id."""
    db.parent.mkdir(parents=True, exist_ok=True)
    blobs: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        bid = hashlib.sha256(data).hexdigest()
        blobs[bid] = data
        return bid

    ids = [put(json.dumps(m, ensure_ascii=False).encode()) for m in messages]
    half = len(ids) // 2
    inner = put(tree_node(ids[half:]))
    root = put(tree_node([*ids[:half], inner], workspace))
    for i in range(stale):
        put(json.dumps({"role": "user", "content": f"an older draft {i}"}).encode())
    meta = {
        "agentId": agent_id,
        "name": "Explain the scanner",
        "mode": "default",
        "createdAt": 1772530000000,
        "lastUsedModel": "gpt-5",
        "latestRootBlobId": root,
    }
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    conn.executemany("INSERT INTO blobs VALUES (?, ?)", sorted(blobs.items()))
    conn.commit()
    conn.close()
    return root


SAMPLE_ID = "7d3c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
SAMPLE_WORKSPACE = "/home/dev/src/agtail-demo"
SAMPLE_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "<user_info>os linux</user_info>\n<user_query>What does scan() return?</user_query>"},
    {
        "id": "1",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "Open the scanner first.", "providerOptions": {"cursor": {"modelName": "gpt-5"}}},
            {"type": "text", "text": "Let me read the scanner module."},
            {"type": "tool-call", "toolCallId": "tc_1", "toolName": "read_file", "args": {"path": "src/scan.py"}},
        ],
    },
    {
        "role": "tool",
        "id": "tc_1",
        "content": [
            {"type": "tool-result", "toolCallId": "tc_1", "toolName": "read_file", "result": "def scan(root): ...", "isError": False}
        ],
    },
    {"id": "1", "role": "assistant", "content": [{"type": "text", "text": "scan() returns sessions sorted by modification time."}]},
]


def sample_path(corpus: Path) -> Path:
    bucket = hashlib.md5(SAMPLE_WORKSPACE.encode()).hexdigest()
    return corpus / "cursor/synthetic-agtail/.cursor/chats" / bucket / SAMPLE_ID / "store.db"




# -- the IDE's global state.vscdb (FORMATS-longtail §1c) --------------------------------------
IDE_COMPOSER = "c0a1b2c3-d4e5-4f60-8172-93a4b5c6d7e8"
IDE_LEGACY = "1e2f3a4b-5c6d-4e7f-8091-a2b3c4d5e6f7"
IDE_EMPTY = "99999999-8888-4777-8666-555555555555"


def make_vscdb(db: Path) -> None:
    """A global state.vscdb with a modern composer (headers + bubble rows, one stale bubble),
    a legacy composer (inline ``conversation``) and an empty one."""
    db.parent.mkdir(parents=True, exist_ok=True)
    rows: dict[str, Any] = {}
    bubbles = [
        {"_v": 3, "bubbleId": "b1", "type": 1, "text": "Why does the watcher miss renames?", "createdAt": "2026-03-06T10:00:00.000Z"},
        {"_v": 3, "bubbleId": "b2", "type": 2, "text": "It only listens for modify events.", "thinking": {"text": "Check the event mask."},
         "createdAt": "2026-03-06T10:00:05.000Z", "modelInfo": {"modelName": "claude-4-sonnet"},
         "tokenCount": {"inputTokens": 5200, "outputTokens": 310}},
        {"_v": 3, "bubbleId": "b3", "type": 2, "text": "",
         "toolFormerData": {"toolCallId": "tool_1", "name": "read_file", "status": "completed",
                            "rawArgs": "{\"target_file\": \"src/watch.py\"}", "result": "{\"contents\": \"MASK = IN_MODIFY\"}"},
         "createdAt": "2026-03-06T10:00:07.000Z", "tokenCount": {"inputTokens": 5600, "outputTokens": 40}},
        {"_v": 3, "bubbleId": "b4", "type": 1, "text": "Add IN_MOVED_TO to the mask", "createdAt": "2026-03-06T10:01:00.000Z"},
        {"_v": 3, "bubbleId": "b5", "type": 2, "text": "Added `IN_MOVED_TO`; renames are seen now.",
         "createdAt": "2026-03-06T10:01:09.000Z", "modelInfo": {"modelName": "claude-4-sonnet"},
         "tokenCount": {"inputTokens": 6100, "outputTokens": 120}},
    ]
    for b in bubbles:
        rows[f"bubbleId:{IDE_COMPOSER}:{b['bubbleId']}"] = b
    rows[f"bubbleId:{IDE_COMPOSER}:old"] = {"_v": 3, "bubbleId": "old", "type": 2, "text": "an earlier draft"}
    rows[f"composerData:{IDE_COMPOSER}"] = {
        "_v": 10, "composerId": IDE_COMPOSER, "name": "Watcher misses renames", "createdAt": 1772791200000,
        "lastUpdatedAt": 1772791270000, "status": "completed", "unifiedMode": "agent",
        "modelConfig": {"modelName": "claude-4-sonnet", "maxMode": False},
        "fullConversationHeadersOnly": [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles],
    }
    rows[f"composerData:{IDE_LEGACY}"] = {
        "composerId": IDE_LEGACY, "name": "Explain the config loader", "createdAt": 1772704800000,
        "conversation": [
            {"bubbleId": "l1", "type": 1, "text": "What does load_config() merge?"},
            {"bubbleId": "l2", "type": 2, "text": "Defaults, then the user file, then environment overrides."},
        ],
    }
    rows[f"composerData:{IDE_EMPTY}"] = {"_v": 10, "composerId": IDE_EMPTY, "fullConversationHeadersOnly": []}
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/cachedSignUpType', 'Auth_0')")
    conn.executemany(
        "INSERT INTO cursorDiskKV VALUES (?, ?)",
        sorted((k, json.dumps(v, ensure_ascii=False)) for k, v in rows.items()),
    )
    conn.commit()
    conn.close()


def vscdb_path(corpus: Path) -> Path:
    return corpus / "cursor/synthetic-agtail/.config/Cursor/User/globalStorage/state.vscdb"


if __name__ == "__main__":  # regenerates the corpus samples
    corpus = Path(__file__).parent / "corpus"
    target = sample_path(corpus)
    target.unlink(missing_ok=True)
    make_store(target, SAMPLE_ID, SAMPLE_MESSAGES, workspace=SAMPLE_WORKSPACE)
    ide = vscdb_path(corpus)
    ide.unlink(missing_ok=True)
    make_vscdb(ide)
    print(target, ide)
