"""Cursor's older plain-text agent transcripts (``agent-transcripts/<id>.txt``).

As a peer reader describes them (FORMATS-longtail §1b, no file seen here): blocks start with a
line ``user:`` or ``assistant:``; a user block holds ``<user_query>…</user_query>``; an assistant
block holds text and sub-blocks headed ``[Thinking]``, ``[Tool call] <Name>`` and
``[Tool result]`` (possibly indented). A sub-block's content is the lines indented deeper than
its header; the next line at the header's depth or shallower goes back to plain text. Each block
is one record; a tool result is merged into the call before it. Text before the first header
is kept as an ``unknown`` record.
"""

from __future__ import annotations

import re
from pathlib import Path

from agtaild.adapters.cursor.transcript import user_query
from agtaild.adapters.kit.files import read_regular_text
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.model import Event

_HEADER = re.compile(r"^(user|assistant):\s*(.*)$")
_SUB = re.compile(r"^\s*\[(Thinking|Tool call|Tool result)\]\s*(.*)$")


def read_text_transcript(path: Path, book: RecordBook) -> None:
    text = read_regular_text(path, errors="replace")
    blocks: list[tuple[str | None, list[str]]] = []
    for line in text.splitlines():
        found = _HEADER.match(line)
        if found:
            blocks.append((found.group(1), [found.group(2)] if found.group(2) else []))
        elif blocks:
            blocks[-1][1].append(line)
        elif line.strip():
            blocks.append((None, [line]))
    for number, (role, lines) in enumerate(blocks, start=1):
        book.count(_block(book, role, lines, number))


def _block(book: RecordBook, role: str | None, lines: list[str], number: int) -> Category:
    src = {"block": number}
    body = "\n".join(lines).strip()
    if role is None:
        book.emit(Event(seq=-1, kind="unknown", source=src, raw=body))
        return "events"
    if role == "user":
        if not body:
            return "skipped"
        query = user_query(body)
        book.emit(
            Event(
                seq=-1,
                kind="text",
                role="user",
                text=query,
                source=src,
                extra={"raw_text": body} if query != body else {},
            )
        )
        book.session.messages += 1
        if book.session.first_prompt is None:
            book.session.first_prompt = query
        return "events"
    parts: list[tuple[str, str, list[str]]] = [("text", "", [])]
    depth = -1  # the open sub-block header's indentation (-1: plain text)
    for line in lines:
        sub = _SUB.match(line)
        indent = len(line) - len(line.lstrip())
        if sub:
            parts.append((sub.group(1), sub.group(2).strip(), []))
            depth = indent
        elif depth >= 0 and line.strip() and indent <= depth:
            parts.append(("text", "", [line]))
            depth = -1
        else:
            parts[-1][2].append(line)
    emitted = 0
    call: Event | None = None
    for kind, head, content in parts:
        value = _dedent(content)
        if kind == "text":
            if value:
                book.emit(Event(seq=-1, kind="text", role="assistant", text=value, source=src))
                emitted += 1
        elif kind == "Thinking":
            book.emit(
                Event(
                    seq=-1,
                    kind="thinking",
                    role="assistant",
                    text="\n".join(p for p in (head, value) if p),
                    source=src,
                )
            )
            emitted += 1
        elif kind == "Tool call":
            call = book.emit(
                Event(
                    seq=-1,
                    kind="tool_use",
                    role="assistant",
                    tool=head or None,
                    input=value or None,
                    source=src,
                )
            )
            emitted += 1
        else:
            shown = head if call is None or head != call.tool else ""  # the header repeats the tool name
            result = "\n".join(p for p in (shown, value) if p)
            if call is not None:
                call.result = result
                book.emit(call)
                call = None
            else:
                book.emit(Event(seq=-1, kind="tool_result", role="tool", result=result, source=src))
                emitted += 1
    if emitted:
        book.session.messages += 1
        return "events"
    return "skipped"


def _dedent(lines: list[str]) -> str:
    """The lines without their common indentation, stripped of blank ends."""
    body = [ln for ln in lines if ln.strip()]
    cut = min((len(ln) - len(ln.lstrip()) for ln in body), default=0)
    return "\n".join(ln[cut:] if ln.strip() else "" for ln in lines).strip()
