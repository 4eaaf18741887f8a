"""Cursor CLI's chat store: ``~/.cursor/chats/<md5(cwd)>/<agentId>/store.db`` (SQLite).

Two tables (peer fixture and peer write-ups, FORMATS-longtail §1a): ``meta`` (row ``'0'``: the
hex of a UTF-8 JSON object with ``agentId``, ``name``, ``mode``, ``createdAt`` ms,
``lastUsedModel``, ``latestRootBlobId``) and ``blobs`` (content-addressed by SHA-256). A blob
is either a JSON message (``{"role": …, "content": …}``, Vercel-AI-SDK-like parts:
``text``, ``reasoning``, ``tool-call``, ``tool-result``) or a protobuf tree node whose field 1
repeats 32-byte child blob ids (and field 9 may name the workspace path). The transcript is
the depth-first walk from ``latestRootBlobId``; blobs it does not reach are older versions
(after an edit or rewind) and are counted as skipped.

The database is opened read-only (``mode=ro``, WAL rows visible) and read whole.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.cursor.transcript import user_query
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.sqlite_db import reading, table_columns
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.model import Event, Session

#: How many tree nodes a walk visits at most (a store is a few thousand blobs).
MAX_NODES = 200_000
_decoder = msgspec.json.Decoder()


def read_meta(conn: sqlite3.Connection) -> dict[str, Any]:
    """The ``meta`` row ``'0'`` decoded (hex of JSON, or plain JSON in some builds)."""
    if "value" not in table_columns(conn, "meta"):
        return {}
    row = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    return decode_meta(row[0]) if row else {}


def decode_meta(value: Any) -> dict[str, Any]:
    raw = value.encode("utf-8", "replace") if isinstance(value, str) else value
    if not isinstance(raw, bytes):
        return {}
    raw = raw.strip()
    if not raw.startswith(b"{"):
        try:
            raw = bytes.fromhex(raw.decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            return {}
    try:
        doc = _decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def proto_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a protobuf message; stops at the first damage."""
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(data)

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while i < n and shift < 64:
            b = data[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
        raise ValueError("truncated varint")

    try:
        while i < n:
            key = varint()
            field, wire = key >> 3, key & 7
            if wire == 0:
                out.append((field, wire, varint()))
            elif wire == 2:
                size = varint()
                if i + size > n:
                    break
                out.append((field, wire, data[i : i + size]))
                i += size
            elif wire in (1, 5):
                width = 8 if wire == 1 else 4
                out.append((field, wire, data[i : i + width]))
                i += width
            else:
                break
    except ValueError:
        pass
    return out


class StoreWalk:
    """The ordered message blobs reachable from the root, and what the tree nodes said."""

    def __init__(self, blobs: dict[str, bytes], root: str | None) -> None:
        self.blobs = blobs
        self.messages: list[tuple[str, Any]] = []
        self.nodes: set[str] = set()
        self.workspace: str | None = None
        if root:
            self._walk(root)

    def _walk(self, root: str) -> None:
        stack = [root]
        seen: set[str] = set()
        while stack and len(seen) < MAX_NODES:
            bid = stack.pop()
            if bid in seen or bid not in self.blobs:
                continue
            seen.add(bid)
            data = self.blobs[bid]
            if data.lstrip()[:1] == b"{":
                try:
                    self.messages.append((bid, _decoder.decode(data)))
                except (msgspec.DecodeError, UnicodeDecodeError):
                    self.messages.append((bid, None))
                continue
            self.nodes.add(bid)
            children: list[str] = []
            for field, wire, value in proto_fields(data):
                if field == 1 and wire == 2 and len(value) == 32:
                    children.append(value.hex())
                elif field == 9 and wire == 2 and self.workspace is None:
                    try:
                        self.workspace = value.decode("utf-8")
                    except UnicodeDecodeError:
                        pass
            stack.extend(reversed(children))


def read_store(db: Path, book: RecordBook) -> dict[str, Any]:
    """Fill ``book`` from one store.db; returns the decoded meta (also for transcript units)."""
    with reading(db) as conn:
        meta = read_meta(conn)
        blobs: dict[str, bytes] = {}
        if {"id", "data"} <= table_columns(conn, "blobs"):
            for bid, data in conn.execute("SELECT id, data FROM blobs"):
                if isinstance(bid, str):
                    blobs[bid.lower()] = (
                        data if isinstance(data, bytes) else str(data).encode("utf-8", "replace")
                    )
    book.count("metadata")  # the meta row
    root = meta.get("latestRootBlobId")
    walk = StoreWalk(blobs, root.lower() if isinstance(root, str) else None)
    pending: dict[str, Event] = {}
    for bid, msg in walk.messages:
        if msg is None:
            book.bad(len(book.session.bad_line_numbers) + 1)
            continue
        book.count(_message(book, bid, msg, pending))
    for _ in walk.nodes:
        book.count("metadata")
    for _ in range(len(blobs) - len(walk.nodes) - len(walk.messages)):
        book.count("skipped")  # older versions no longer reachable from the root
    if walk.workspace:
        meta.setdefault("_workspace", walk.workspace)
    return meta


def apply_meta(s: Session, meta: dict[str, Any]) -> None:
    """What the meta row says about a session: title, model, mode, start."""
    if isinstance(meta.get("name"), str) and meta["name"]:
        s.title = meta["name"]
    model = meta.get("lastUsedModel")
    if isinstance(model, str) and model and model != "default" and model not in s.models:
        s.models.append(model)
    created = meta.get("createdAt")
    started = (
        from_epoch(created, unit="ms")
        if not isinstance(created, str)
        else from_epoch(_num(created), unit="ms")
    )
    if started and (s.started is None or started < s.started):
        s.started = started
    if isinstance(meta.get("mode"), str):
        s.extra["mode"] = meta["mode"]


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _message(book: RecordBook, bid: str, msg: Any, pending: dict[str, Event]) -> Category:
    if not isinstance(msg, dict):
        book.emit(Event(seq=-1, kind="unknown", uuid=bid, raw=msg))
        return "events"
    role = msg.get("role") if isinstance(msg.get("role"), str) else None
    content = msg.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(parts, list):
        book.emit(Event(seq=-1, kind="unknown", role=role, uuid=bid, raw=msg))
        return "events"
    if role == "system":
        book.emit(
            Event(seq=-1, kind="system", role="system", uuid=bid, subtype="system_prompt", text=_texts(parts))
        )
        return "events"
    emitted = merged = 0
    for part in parts:
        got = _part(book, bid, role, part, pending)
        emitted += got == "events"
        merged += got == "merged"
    if emitted and role in ("user", "assistant"):
        book.session.messages += 1
    return "events" if emitted else ("merged" if merged else "skipped")


def _part(book: RecordBook, bid: str, role: str | None, part: Any, pending: dict[str, Event]) -> str | None:
    if not isinstance(part, dict):
        book.emit(Event(seq=-1, kind="unknown", role=role, uuid=bid, raw=part))
        return "events"
    ptype = part.get("type")
    text = part.get("text") if isinstance(part.get("text"), str) else None
    if ptype == "text":
        if not text:
            return None
        extra: dict[str, Any] = {}
        if role == "user":
            query = user_query(text)
            if query != text:
                extra["raw_text"] = text
            text = query
            if book.session.first_prompt is None:
                book.session.first_prompt = text
        book.emit(Event(seq=-1, kind="text", role=role, uuid=bid, text=text, extra=extra))
        return "events"
    if ptype == "reasoning":
        opts = part.get("providerOptions")
        cursor = opts.get("cursor") if isinstance(opts, dict) else None
        model = cursor.get("modelName") if isinstance(cursor, dict) else None
        book.emit(
            Event(
                seq=-1,
                kind="thinking",
                role=role,
                uuid=bid,
                text=text,
                model=model if isinstance(model, str) else None,
            )
        )
        return "events"
    if ptype == "tool-call":
        call_id = part.get("toolCallId") if isinstance(part.get("toolCallId"), str) else None
        ev = book.emit(
            Event(
                seq=-1,
                kind="tool_use",
                role=role,
                uuid=bid,
                tool=_s(part.get("toolName")),
                input=part.get("args"),
                tool_use_id=call_id,
            )
        )
        if call_id:
            pending[call_id] = ev
        return "events"
    if ptype == "tool-result":
        call_id = part.get("toolCallId") if isinstance(part.get("toolCallId"), str) else None
        result = part.get("result")
        if isinstance(result, list):
            result = _texts(result)
        call = pending.pop(call_id, None) if call_id else None
        if call is not None:
            call.result, call.is_error = result, bool(part.get("isError"))
            book.emit(call)
            return "merged"
        book.emit(
            Event(
                seq=-1,
                kind="tool_result",
                role="tool",
                uuid=bid,
                tool=_s(part.get("toolName")),
                result=result,
                is_error=bool(part.get("isError")),
                tool_use_id=call_id,
            )
        )
        return "events"
    book.emit(Event(seq=-1, kind="unknown", role=role, uuid=bid, raw=part))
    return "events"


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _texts(parts: list[Any]) -> str | None:
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts) if texts else None
