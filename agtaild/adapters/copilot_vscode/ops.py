"""Copilot Chat's session data: replaying the ``.jsonl`` operation log and mapping a snapshot.

The op log (FORMATS-longtail §3): each line ``{kind, k?, v?, i?}``; ``kind 0`` = the initial
whole state in ``v``; ``1`` = set the value at key path ``k`` (strings are object keys, numbers
array indices); ``2`` = push the items ``v`` onto the array at ``k`` (spliced in at index ``i``
when given); ``3`` = delete at ``k``. Accounting: the ``kind 0`` line is the record the session
starts from (events), later ops are folded into it (merged), an op whose path does not exist is
skipped, a line that is not an op is an ``unknown`` event.

A snapshot: ``{sessionId, creationDate, lastMessageDate, customTitle?, requests[{requestId,
message{text}, response[items], agent{id}, modelId, timestamp, result{timings, errorDetails},
isCanceled?}]}``. Response items: ``markdownContent`` / bare ``{value}`` text (consecutive ones are
joined into one text event), tool invocations (``toolId``, ``toolCallId``, ``invocationMessage``,
``pastTenseMessage``, ``toolSpecificData``), ``thinking``; UI-only kinds are folded away and
other kinds kept as ``unknown``.

What real files of Copilot Chat 0.3x add (tests/corpus/copilot-vscode/git-ai): the invocations
carry no arguments, but ``result.metadata.toolCallRounds[].toolCalls[{name, arguments, id}]``
holds the model's calls (``read_file``, ``replace_string_in_file``…) in the same order as the
invocations, less the editor's own ``*_internal`` tools, and ``toolCallResults[id]`` their
results (a prompt-tsx node tree whose ``text`` leaves are the text); ``result.usage``
``{promptTokens, completionTokens}`` (0.37) is the request's usage; ``result.metadata.cacheKey``
is the workspace folder's URI; a ``textEditGroup`` item (the ranges an edit tool rewrote) belongs
to the tool call before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import msgspec

from agtaild.adapters.kit.files import open_regular
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.stamps import from_epoch, widen
from agtaild.model import Event, Usage, UsageRecord

_decoder = msgspec.json.Decoder()
#: Response parts that only drive the chat UI.
_UI_ONLY = frozenset(
    {
        "progressMessage",
        "progressTask",
        "undoStop",
        "codeblockUri",
        "prepareToolInvocation",
        "mcpServersStarting",
        "warning",
    }
)
#: Nesting deeper than this in a key path is not followed (a damaged log).
MAX_PATH = 64
#: Depth to which a tool result's prompt-tsx node tree is walked for its text.
MAX_TREE = 48


class _Missing(Exception):
    """An op's key path does not exist in the current state."""


def _has(container: Any, key: Any) -> bool:
    """Whether ``container[key]`` exists (an object key, or an in-range array index)."""
    if isinstance(container, dict):
        return isinstance(key, str) and key in container
    if isinstance(container, list):
        return isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(container)
    return False


def _container(state: Any, path: list[Any]) -> Any:
    cur = state
    for key in path[:MAX_PATH]:
        if not _has(cur, key):
            raise _Missing
        cur = cur[key]
    return cur


def apply_op(state: Any, op: dict[str, Any]) -> Any:
    """The state after one op (may be a new object for kind 0 / a root set). Raises _Missing."""
    kind = op.get("kind")
    if kind == 0:
        return op.get("v")
    path = op.get("k")
    if not isinstance(path, list) or len(path) > MAX_PATH:
        raise _Missing
    if kind == 1:
        if not path:
            return op.get("v")
        parent = _container(state, path[:-1])
        key = path[-1]
        if isinstance(parent, dict) and isinstance(key, str):
            parent[key] = op.get("v")
        elif (
            isinstance(parent, list)
            and isinstance(key, int)
            and not isinstance(key, bool)
            and 0 <= key <= len(parent)
        ):
            if key == len(parent):
                parent.append(op.get("v"))
            else:
                parent[key] = op.get("v")
        else:
            raise _Missing
        return state
    if kind == 2:
        target = _container(state, path)
        items = op.get("v")
        if not isinstance(target, list) or not isinstance(items, list):
            raise _Missing
        at = op.get("i")
        if isinstance(at, int) and not isinstance(at, bool) and 0 <= at <= len(target):
            target[at:at] = items
        else:
            target.extend(items)
        return state
    if kind == 3:
        if not path:
            raise _Missing
        parent = _container(state, path[:-1])
        key = path[-1]
        if not _has(parent, key):
            raise _Missing
        del parent[key]
        return state
    raise _Missing


def replay_log(path: Path, book: RecordBook, *, settled: bool) -> Any:
    """Rebuild the session document from an op log, keeping the books. A torn last line is
    left for the next read while the file is being written; once settled it is bad."""
    with open_regular(path) as fh:
        data = fh.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    if tail.strip() and settled:
        lines.append(tail)
    state: Any = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            op = _decoder.decode(raw)
        except (msgspec.DecodeError, UnicodeDecodeError):
            book.bad(number)
            if number == len(lines) and raw is tail:
                book.session.truncated = True
            continue
        if not isinstance(op, dict) or op.get("kind") not in (0, 1, 2, 3):
            book.emit(Event(seq=-1, kind="unknown", source={"line": number}, raw=op))
            book.count("events")
            continue
        try:
            state = apply_op(state, op)
        except (_Missing, RecursionError):
            book.session.extra["ops_not_applied"] = int(book.session.extra.get("ops_not_applied", 0)) + 1
            book.count("skipped")
            continue
        book.count("events" if op.get("kind") == 0 else "merged")
    return state


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text_of(value: Any) -> str | None:
    """A message that is a string or ``{value: …}`` (VS Code's MarkdownString)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        return _str(value.get("value"))
    return None


class SessionBuilder:
    """Maps a rebuilt or stored snapshot onto the book's session and events."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book

    def build(self, doc: Any, *, count_requests: bool) -> None:
        book, s = self.book, self.book.session
        if not isinstance(doc, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=doc))
            if count_requests:
                book.count("events")
            return
        if count_requests:
            book.count("metadata")  # the snapshot's own fields
        s.id = _str(doc.get("sessionId")) or s.id
        s.started = from_epoch(doc.get("creationDate"), unit="ms")
        s.ended = from_epoch(doc.get("lastMessageDate"), unit="ms")
        if doc.get("version") is not None:
            s.extra["format_version"] = doc["version"]
        requests = doc.get("requests")
        for i, req in enumerate(requests if isinstance(requests, list) else []):
            category = self._request(req, i)
            if count_requests:
                book.count(category)
        s.title = _str(doc.get("customTitle")) or _first_line(s.first_prompt)

    def _request(self, req: Any, index: int) -> Any:
        book, s = self.book, self.book.session
        src = {"request": index}
        if not isinstance(req, dict):
            book.emit(Event(seq=-1, kind="unknown", source=src, raw=req))
            return "events"
        ts = from_epoch(req.get("timestamp"), unit="ms")
        s.started, s.ended = widen(s.started, s.ended, ts)
        model = _str(req.get("modelId"))
        if model and model not in s.models:
            s.models.append(model)
        agent = req.get("agent")
        extra: dict[str, Any] = {"request_id": req.get("requestId")}
        if isinstance(agent, dict) and _str(agent.get("id")):
            extra["agent"] = agent["id"]
        message = req.get("message")
        prompt = _text_of(message.get("text")) if isinstance(message, dict) else _text_of(message)
        book.emit(
            Event(
                seq=-1,
                kind="text",
                role="user",
                ts=ts,
                text=prompt,
                source=src,
                uuid=_str(req.get("requestId")),
                extra=extra,
            )
        )
        s.messages += 1
        if prompt and s.first_prompt is None:
            s.first_prompt = prompt
        response = req.get("response")
        result = req.get("result") if isinstance(req.get("result"), dict) else {}
        assert isinstance(result, dict)
        calls = self._response(response if isinstance(response, list) else [], ts, model, src)
        metadata = result.get("metadata") if isinstance(result.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        _join_rounds(calls, metadata)
        key = metadata.get("cacheKey")
        if s.cwd is None and isinstance(key, str) and key.startswith("file://"):
            s.cwd = unquote(urlparse(key).path) or None
        usage = _usage_of(result.get("usage"))
        if usage is not None:
            book.add_usage(
                UsageRecord(key=f"request:{req.get('requestId', index)}", ts=ts, model=model, usage=usage)
            )
        timings = result.get("timings")
        elapsed = timings.get("totalElapsed") if isinstance(timings, dict) else None
        if isinstance(req.get("timestamp"), int | float) and isinstance(elapsed, int | float):
            s.started, s.ended = widen(s.started, s.ended, from_epoch(req["timestamp"] + elapsed, unit="ms"))
        s.ending = None
        error = result.get("errorDetails")
        if isinstance(error, dict):
            book.emit(
                Event(
                    seq=-1,
                    kind="system",
                    ts=ts,
                    subtype="error",
                    text=_str(error.get("message")),
                    is_error=True,
                    source=src,
                    extra=dict(error),
                )
            )
            s.ending = "error"
        if req.get("isCanceled") is True:
            s.ending = "interrupted"
        return "events"

    def _response(
        self, items: list[Any], ts: str | None, model: str | None, src: dict[str, Any]
    ) -> list[Event]:
        """Emits the response's events; returns its tool calls, in order."""
        book = self.book
        text: Event | None = None
        calls: list[Event] = []
        for item in items:
            if not isinstance(item, dict):
                book.emit(Event(seq=-1, kind="unknown", role="assistant", ts=ts, source=src, raw=item))
                text = None
                continue
            kind = item.get("kind")
            if kind in (None, "markdownContent", "inlineReference"):
                piece = _text_of(item.get("content")) if kind == "markdownContent" else _text_of(item)
                if kind == "inlineReference":
                    ref = item.get("inlineReference")
                    piece = (
                        _str(item.get("name"))
                        or (_str(ref.get("name")) if isinstance(ref, dict) else None)
                        or "[reference]"
                    )
                if piece is None:
                    continue
                if text is None:
                    text = book.emit(
                        Event(
                            seq=-1, kind="text", role="assistant", ts=ts, text=piece, model=model, source=src
                        )
                    )
                else:
                    text.text = (text.text or "") + piece
                continue
            text = None
            if _str(item.get("toolId")) or _str(item.get("toolCallId")):
                data = item.get("toolSpecificData")
                calls.append(
                    book.emit(
                        Event(
                            seq=-1,
                            kind="tool_use",
                            role="assistant",
                            ts=ts,
                            model=model,
                            source=src,
                            tool=_str(item.get("toolId")),
                            tool_use_id=_str(item.get("toolCallId")),
                            input=data if data is not None else _text_of(item.get("invocationMessage")),
                            result=_text_of(item.get("pastTenseMessage")),
                            is_error=item.get("isConfirmed") is False or None,
                            extra={"complete": item.get("isComplete")}
                            if item.get("isComplete") is not None
                            else {},
                        )
                    )
                )
            elif kind == "textEditGroup" and calls:
                uri = item.get("uri")
                path = _str(uri.get("path")) if isinstance(uri, dict) else None
                if path:
                    edited = calls[-1].extra.setdefault("edited_files", [])
                    if path not in edited:
                        edited.append(path)
            elif kind == "thinking":
                book.emit(
                    Event(
                        seq=-1,
                        kind="thinking",
                        role="assistant",
                        ts=ts,
                        model=model,
                        text=_text_of(item.get("value")) or _text_of(item),
                        source=src,
                    )
                )
            elif kind in _UI_ONLY:
                continue
            else:
                book.emit(
                    Event(
                        seq=-1,
                        kind="unknown",
                        role="assistant",
                        ts=ts,
                        subtype=str(kind),
                        source=src,
                        raw=item,
                    )
                )
        book.session.messages += 1 if items else 0
        return calls


def _usage_of(raw: Any) -> Usage | None:
    """A request's ``result.usage``: ``promptTokens`` (the whole prompt) and ``completionTokens``."""
    if not isinstance(raw, dict):
        return None
    prompt, completion = raw.get("promptTokens"), raw.get("completionTokens")
    usage = Usage(
        input_tokens=prompt if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt > 0 else 0,
        output_tokens=completion
        if isinstance(completion, int) and not isinstance(completion, bool) and completion > 0
        else 0,
    ).fix_total()
    return None if usage.is_zero() else usage


def _join_rounds(calls: list[Event], metadata: dict[str, Any]) -> None:
    """The model's own calls (name, arguments, result) onto the invocations they were, in order,
    when the counts agree once the editor's ``*_internal`` tools are left out."""
    rounds = metadata.get("toolCallRounds")
    model_calls = [
        c
        for r in (rounds if isinstance(rounds, list) else [])
        if isinstance(r, dict) and isinstance(r.get("toolCalls"), list)
        for c in r["toolCalls"]
        if isinstance(c, dict)
    ]
    shown = [c for c in calls if not (c.tool or "").endswith("_internal")]
    if not model_calls or len(model_calls) != len(shown):
        return
    results = metadata.get("toolCallResults") if isinstance(metadata.get("toolCallResults"), dict) else {}
    assert isinstance(results, dict)
    for event, call in zip(shown, model_calls, strict=True):
        if _str(call.get("name")):
            event.extra["model_tool"] = call["name"]
        args = call.get("arguments")
        if isinstance(args, str):
            try:
                event.input = _decoder.decode(args)
            except (msgspec.DecodeError, UnicodeDecodeError):
                event.input = args
        call_id = _str(call.get("id"))
        if call_id:
            event.extra["model_call_id"] = call_id
            text = _tree_text(results.get(call_id))
            if text:
                event.result = text


def _tree_text(node: Any, depth: int = 0) -> str:
    """The text leaves of a prompt-tsx result tree (``text`` fields, ``lineBreakBefore`` kept)."""
    if depth > MAX_TREE:
        return ""
    if isinstance(node, list):
        return "".join(_tree_text(n, depth + 1) for n in node)
    if not isinstance(node, dict):
        return ""
    if isinstance(node.get("text"), str) and node.get("type") == 2:
        return ("\n" if node.get("lineBreakBefore") is True else "") + node["text"]
    out = ""
    for key in ("content", "value", "node", "children"):
        if key in node:
            out += _tree_text(node[key], depth + 1)
    return out


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return None
