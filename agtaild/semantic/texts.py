"""What of an event is embedded, masked and cut into overlapping chunks.

Embedded: what a person asked (user text), what the model answered (assistant text),
compaction and other summaries, and each tool call as a one-line summary (the tool's name, the
start of its input, and whether it failed). Thinking and tool output are left out: they are
most of the bytes and little of what a person remembers a session by.

Every text is masked (agtaild.secrets) before it is cut, so no secret reaches an embedder,
local or remote, and none is stored in a vector's source.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from agtaild.index.codec import decode_event

#: Event kinds that have something to embed (the coverage counts these).
KINDS = ("text", "summary", "tool_use")
CHUNK_CHARS = 1200
OVERLAP = 200
#: A very long message is embedded by its first chunks only (a pasted log is not its meaning).
MAX_CHUNKS = 4
TOOL_INPUT_CHARS = 240


@dataclass(frozen=True)
class Piece:
    event_id: int
    session_id: int
    seq: int
    chunk: int
    text: str


def source_text(kind: str, text: str | None, tool_input: str | None, tool: str | None, failed: int | None,
                role: str | None) -> str:
    """The text an event is embedded by ('' for nothing to embed)."""
    if kind == "tool_use":
        name = tool or "tool"
        short = " ".join((tool_input or "").split())[:TOOL_INPUT_CHARS]
        return f"{name}: {short}{' (failed)' if failed else ''}".strip()
    if kind == "text" and role not in (None, "user", "assistant"):
        return ""
    return (text or "").strip()


def chunks(text: str, size: int = CHUNK_CHARS, overlap: int = OVERLAP, limit: int = MAX_CHUNKS) -> list[str]:
    """``text`` in windows of ``size`` characters, each starting ``size - overlap`` after the last,
    cut at a space where one is near so a word is not split."""
    if len(text) <= size:
        return [text] if text else []
    out: list[str] = []
    start = 0
    while start < len(text) and len(out) < limit:
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        out.append(text[start:end].strip())
        if end >= len(text):
            break
        start = max(start + 1, end - overlap)
    return [c for c in out if c]


def read_pieces(db: sqlite3.Connection, ids: Sequence[int]) -> tuple[list[Piece], list[tuple[int, int, int]]]:
    """The masked chunks of the events ``ids``, and (id, session_id, seq) of every event read
    (those with nothing to embed are marked done all the same)."""
    from agtaild import secrets

    if not ids:
        return [], []
    marks = ",".join("?" * len(ids))
    rows = db.execute(
        f"SELECT id, session_id, seq, kind, text, tool_input, tool, tool_failed, data FROM events WHERE id IN ({marks})",
        list(ids),
    ).fetchall()
    seen = [(r[0], r[1], r[2]) for r in rows]
    texts: list[tuple[int, int, int, str]] = []
    for eid, sid, seq, kind, text, tool_input, tool, failed, data in rows:
        role = decode_event(data).get("role") if kind == "text" else None
        src = source_text(kind, text, tool_input, tool, failed, role)
        if src:
            texts.append((eid, sid, seq, src))
    masked = secrets.mask_many([t[3] for t in texts]) if texts else []
    pieces = [
        Piece(eid, sid, seq, n, chunk)
        for (eid, sid, seq, _), m in zip(texts, masked, strict=True)
        for n, chunk in enumerate(chunks(m))
    ]
    return pieces, seen
