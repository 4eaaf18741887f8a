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


if __name__ == "__main__":  # regenerates the corpus sample
    target = sample_path(Path(__file__).parent / "corpus")
    target.unlink(missing_ok=True)
    make_store(target, SAMPLE_ID, SAMPLE_MESSAGES, workspace=SAMPLE_WORKSPACE)
    print(target)
