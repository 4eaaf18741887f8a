"""OpenCode messages and parts → agtail events, usage and summary (shared by the SQLite and
the older JSON-file readers).

Shapes (``packages/opencode/src/session/message-v2.ts``; checked on a real 1.18.33 DB):
a message is ``{role, time: {created, completed?}, …}`` (assistant: ``modelID``,
``providerID``, ``cost``, ``tokens``, ``finish``, ``error?``, ``summary?``); its parts carry the
content: ``text``, ``reasoning``, ``tool`` (call and result in one part: ``state.status``
pending → running → completed | error), ``step-start``/``step-finish`` (one model call; the
finish holds its tokens and cost), ``patch``, ``file``, ``agent``, ``retry``, ``compaction``,
``subtask``, ``snapshot``. Times are epoch milliseconds.

Usage: each ``step-finish`` is one model response (a message may hold several steps, and then
its ``tokens`` are only the last step's), so usage records are keyed by the step-finish part;
a message without steps contributes its own ``tokens``. OpenCode's ``cost`` is kept aside
(``extra["recorded_cost_usd"]``): agtail prices tokens from its own table.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS
from agtaild.adapters.kit.stamps import from_epoch_ms, widen
from agtaild.adapters.kit.tool_edits import opencode_edit
from agtaild.adapters.kit.values import sub
from agtaild.model import Event, ParentRef, Usage, UsageRecord, project_of

#: A session quiet this long while a tool still runs (or a reply never completed) counts as
#: interrupted; before that it may simply be working. The index re-reads a unit until its
#: files have settled for this long and then only when they change, so a longer wait would
#: never be noticed; a long silent tool shows "interrupted" until its result is written.
STALE_SECONDS = SETTLE_SECONDS
TITLE_MAX = 200
#: Titles OpenCode gives before (or instead of) a generated one.
_DEFAULT_TITLE = re.compile(r"^(New session|Child session) - \d{4}-\d{2}-\d{2}T")
_LIMIT_ERRORS = frozenset({"MessageOutputLengthError", "ContextOverflowError"})
_OPEN_TOOL_STATES = frozenset({"pending", "running"})


class Row(msgspec.Struct):
    """One message or part as stored: its id, decoded JSON (None when it would not decode)."""

    id: str
    data: Any
    number: int
    time_created: int | None = None
    time_updated: int | None = None


class Message(msgspec.Struct):
    """A message row and its parts; ``row`` is None for parts whose message row is gone."""

    row: Row | None
    parts: list[Row]
    orphan_of: str | None = None


def ms(value: Any) -> str | None:
    return from_epoch_ms(value)


def _str(d: Any, key: str) -> str | None:
    v = d.get(key) if isinstance(d, dict) else None
    return v if isinstance(v, str) else None


def _num(d: Any, key: str) -> int:
    v = d.get(key) if isinstance(d, dict) else None
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else 0


def usage_of(tokens: Any) -> Usage | None:
    """OpenCode ``tokens`` in the Anthropic convention. ``input`` already excludes the cache.
    Whether ``output`` includes ``reasoning`` is read off OpenCode's own ``total``; when the
    total does not tell, reasoning is taken as separate (as 1.18 records it)."""
    if not isinstance(tokens, dict):
        return None
    cache = tokens.get("cache")
    inp, out, reasoning = _num(tokens, "input"), _num(tokens, "output"), _num(tokens, "reasoning")
    read, write = _num(cache, "read"), _num(cache, "write")
    inside = _num(tokens, "total") == inp + out + read + write and reasoning > 0
    usage = Usage(
        input_tokens=inp,
        output_tokens=out if inside else out + reasoning,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=reasoning,
    ).fix_total()
    return None if usage.is_zero() else usage


def build(
    book: RecordBook,
    info: dict[str, Any],
    messages: list[Message],
    *,
    now: float,
    parent_call: str | None = None,
    agent: str = "opencode",
) -> float | None:
    """Fill ``book`` from a session's ``info`` (its row or JSON file, already counted by the
    caller) and its messages in order. Returns when to re-read if nothing changes (a session
    with a running tool turns "interrupted" once it has been quiet for STALE_SECONDS).
    ``agent`` is the id of the adapter reading (OpenCode's forks, e.g. Kilo, share this)."""
    s = book.session
    s.title = _str(info, "title")
    s.cwd = _str(info, "directory")
    s.project = project_of(s.cwd)
    s.version = _str(info, "version")
    s.started, s.ended = widen(None, None, ms(info.get("time_created")))
    parent_id = _str(info, "parent_id")
    if parent_id:
        s.parent = ParentRef(agent=agent, id=parent_id, tool_use_id=parent_call)
    extra = {k: info[k] for k in ("slug", "project_id", "share_url") if isinstance(info.get(k), str)}
    if info.get("time_archived"):
        extra["archived_in_opencode"] = True
    state = _Walk(book)
    for message in messages:
        state.message(message)
    if state.cost:
        extra["recorded_cost_usd"] = round(state.cost, 10)
    elif messages:
        extra["recorded_cost_usd"] = 0.0
    s.extra = extra
    s.models = state.models
    s.messages = state.messages
    s.first_prompt = state.first_prompt
    if not s.title or _DEFAULT_TITLE.match(s.title):
        s.title = _title(state.first_prompt) or s.title
    s.started, s.ended = widen(s.started, s.ended, state.last_ts)
    s.started, s.ended = widen(s.started, s.ended, ms(state.last_ms) if state.last_ms else None)
    s.ended = s.ended or ms(info.get("time_updated"))
    last_activity = max(state.last_ms, _num(info, "time_updated")) / 1000.0
    s.ending = state.ending()
    if s.ending is None and state.open_end():
        if now - last_activity >= STALE_SECONDS:
            s.ending = "interrupted"
        else:
            return last_activity + STALE_SECONDS
    return None


def _title(text: str | None) -> str | None:
    if not text:
        return None
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:TITLE_MAX] or None


class _Walk:
    """Walks the messages of one session in order, emitting into the book."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.models: list[str] = []
        self.messages = 0
        self.first_prompt: str | None = None
        self.cost = 0.0
        self.last_ts: str | None = None
        self.last_ms = 0
        # How the last readable message left the session.
        self.last_role: str | None = None
        self.last_completed = False
        self.last_error: str | None = None
        self.last_tool_open = False

    def ending(self) -> str | None:
        """The ending the records state outright: the last reply failed or was aborted."""
        if self.last_role == "assistant" and self.last_error is not None:
            return "limit" if self.last_error in _LIMIT_ERRORS else "interrupted"
        return None

    def open_end(self) -> bool:
        """The session stopped mid-turn — unless it is still working: a tool still running,
        a reply never completed, or a prompt never answered."""
        if self.last_role == "assistant":
            return self.last_tool_open or not self.last_completed
        return self.last_role == "user"

    def message(self, message: Message) -> None:
        book, row = self.book, message.row
        info = row.data if row is not None and isinstance(row.data, dict) else None
        role = _str(info, "role")
        model = _str(info, "modelID")
        time = sub(info, "time")
        created = ms(time.get("created"))
        for value in (row.time_updated if row else None, time.get("completed")):
            if isinstance(value, int | float):
                self.last_ms = max(self.last_ms, int(value))
        if created is not None and (self.last_ts is None or created > self.last_ts):
            self.last_ts = created
        summary = info is not None and info.get("summary") is True
        self.last_tool_open = False
        steps = sum(self.part(part, role, model, created, summary) for part in message.parts)
        if row is None:
            return
        if info is None:
            book.bad(row.number)
            return
        if role in ("user", "assistant"):
            self.messages += 1
            self.last_role = role
            self.last_completed = bool(time.get("completed"))
            error = info.get("error")
            self.last_error = (_str(error, "name") or "error") if isinstance(error, dict) else None
        if role == "assistant":
            if model and model not in self.models:
                self.models.append(model)
            cost = info.get("cost")
            self.cost += float(cost) if isinstance(cost, int | float) else 0.0
            if not steps:
                self._usage(row.id, info.get("tokens"), created, model)
        if isinstance(info.get("error"), dict):
            self._error(row, info["error"], created, model)
            book.count("events")
        else:
            book.count("metadata")

    def _error(self, row: Row, error: dict[str, Any], ts: str | None, model: str | None) -> None:
        name = _str(error, "name") or "error"
        data = error.get("data")
        detail = _str(data, "message") or ""
        self.book.emit(
            Event(
                seq=-1,
                kind="system",
                ts=ts,
                role="system",
                subtype="error",
                text=f"{name}: {detail}" if detail else name,
                is_error=True,
                model=model,
                uuid=row.id,
                source={"row": row.id},
                extra={"error": error},
            )
        )

    def _usage(self, key: str, tokens: Any, ts: str | None, model: str | None) -> bool:
        usage = usage_of(tokens)
        if usage is None:
            return False
        self.book.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))
        return True

    def part(self, row: Row, role: str | None, model: str | None, msg_ts: str | None, summary: bool) -> int:
        """Emit one part; returns 1 for a step-finish (a model response), else 0."""
        book, p = self.book, row.data
        if not isinstance(p, dict):
            book.bad(row.number)
            return 0
        kind = p.get("type")
        time = sub(p, "time")
        # Step bookkeeping parts emit no event: their time is not formatted (a third of all parts).
        metadata_only = kind in ("step-start", "snapshot", "step-finish")
        ts = None if metadata_only else ms(time.get("start")) or ms(row.time_created) or msg_ts
        for value in (row.time_updated, time.get("end")):
            if isinstance(value, int | float):
                self.last_ms = max(self.last_ms, int(value))

        def ev(kind_: str, **kw: Any) -> None:
            kw.setdefault("ts", ts)
            kw.setdefault("role", role)
            book.emit(Event(seq=-1, kind=kind_, uuid=row.id, source={"row": row.id}, **kw))
            book.count("events")

        if kind == "text":
            if p.get("ignored"):
                book.count("skipped")
                return 0
            text = _str(p, "text") or ""
            extra = {"synthetic": True} if p.get("synthetic") else {}
            if role == "user" and not p.get("synthetic") and self.first_prompt is None and text.strip():
                self.first_prompt = text
            ev("summary" if summary else "text", text=text, model=model, extra=extra)
        elif kind == "reasoning":
            ev("thinking", role="assistant", text=_str(p, "text") or "", model=model)
        elif kind == "tool":
            self._tool(p, model, ts, ev)
        elif kind == "step-finish":
            self._usage(row.id, p.get("tokens"), ms(time.get("end")) or msg_ts, model)
            book.count("metadata")
            return 1
        elif kind in ("step-start", "snapshot"):
            book.count("metadata")
        elif kind == "compaction":
            book.session.compactions += 1
            ev("summary", subtype="compaction", text="compaction", extra={"auto": p.get("auto")})
        elif kind in ("patch", "retry", "file", "agent", "subtask"):
            ev("system", **_side_part(str(kind), p))
        else:
            ev("unknown", raw=p)
        return 0

    def _tool(self, p: dict[str, Any], model: str | None, ts: str | None, ev: Any) -> None:
        state = sub(p, "state")
        status = _str(state, "status")
        result: Any = None
        is_error: bool | None = None
        if status == "completed":
            result, is_error = state.get("output"), False
        elif status == "error":
            result, is_error = state.get("error"), True
        extra: dict[str, Any] = {"status": status} if status else {}
        if isinstance(state.get("title"), str):
            extra["title"] = state["title"]
        meta = state.get("metadata")
        if p.get("tool") == "task" and isinstance(meta, dict) and isinstance(meta.get("sessionId"), str):
            extra["subagent_id"] = meta["sessionId"]
        edit = opencode_edit(p.get("tool"), state.get("input"), meta)
        if edit is not None:
            extra["edit"] = edit
        times = sub(state, "time")
        self.last_tool_open = self.last_tool_open or status in _OPEN_TOOL_STATES
        ev(
            "tool_use",
            ts=ms(times.get("start")) or ts,
            role="assistant",
            tool=_str(p, "tool"),
            input=state.get("input"),
            result=result,
            is_error=is_error,
            model=model,
            tool_use_id=_str(p, "callID"),
            extra=extra,
        )


def _side_part(kind: str, p: dict[str, Any]) -> dict[str, Any]:
    """The system event of a part that is neither conversation nor tool: a patch (files the
    step changed), a retry (an API error retried), an attached file, an agent or subtask."""
    if kind == "patch":
        files = [f for f in p.get("files") or [] if isinstance(f, str)]
        return {
            "subtype": kind,
            "text": "changed: " + ", ".join(files),
            "extra": {"hash": p.get("hash"), "files": files},
        }
    if kind == "retry":
        error = sub(p, "error")
        text = _str(error, "message") or _str(sub(error, "data"), "message") or "retry"
        return {"subtype": kind, "text": text, "is_error": True, "extra": {"attempt": p.get("attempt")}}
    if kind == "file":
        url = _str(p, "url") or ""
        name = _str(p, "filename") or _str(p, "mime") or "file"
        extra = {"mime": p.get("mime"), "url": None if url.startswith("data:") else url}
        return {"subtype": kind, "text": f"[file] {name}", "extra": extra}
    label = _str(p, "name") or _str(p, "description") or _str(p, "prompt") or kind
    return {"subtype": kind, "text": label, "extra": {k: v for k, v in p.items() if k != "type"}}
